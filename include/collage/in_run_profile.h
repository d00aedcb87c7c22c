// The in-run profile: the time of every step of the running placement, averaged over a few
// profiled runs, to set beside the search's estimate (which adds up groups measured one at a
// time; in a run they share caches and thread pools with their neighbours, so only a run shows
// where the sum is wrong). Session::Optimize's report holds the kept placement's
// (OptimizeReport::in_run); collage/report.h shows it; these take a fresh one.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collage/optimize.h"
#include "collage/run_profile.h"
#include "collage/session.h"
#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

// The steps of `runs` of one placement (the same steps in the same order), each one's time
// the mean over the runs. Empty for no runs.
RunProfile MeanProfile(const std::vector<RunProfile>& runs);

// The sum of the conversions' steps.
double ConversionsMs(const RunProfile& profile);

// The mean profile of `runs` runs of the session's current placement, after one unprofiled
// run (the first one pays page faults and lazy initialisation).
StatusOr<RunProfile> ProfileCurrentPlacement(Session& session,
                                             const std::map<std::string, Tensor>& inputs, int runs);

// The mean profile of a few runs of the session's current placement on seeded random inputs.
StatusOr<RunProfile> ProfileKeptPlacement(Session& session);

}  // namespace collage
