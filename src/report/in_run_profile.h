// The time of every step of the running placement, averaged over a few profiled runs: what
// `optimize` (the command line and the Python package), the report and `bench --plan
// --profile` set beside the search's estimate. The estimate adds
// up groups measured one at a time; in a run they share caches and thread pools with their
// neighbours, so only a run shows where the sum is wrong.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collage/optimize.h"
#include "collage/session.h"
#include "collage/status.h"
#include "collage/sdk/graph.h"

namespace collage {

// A layout conversion's step (the executable names them so); every other step is a group.
bool IsConversion(const NodeTiming& step);

// The steps of `runs` of one placement (the same steps in the same order), each one's time
// the mean over the runs. Empty for no runs.
RunProfile MeanProfile(const std::vector<RunProfile>& runs);

// The sum of the conversions' steps.
double ConversionsMs(const RunProfile& profile);

// The mean profile of `runs` runs of the session's current placement, after one unprofiled
// run (the first one pays page faults and lazy initialisation).
StatusOr<RunProfile> ProfileCurrentPlacement(Session& session,
                                             const std::map<std::string, Tensor>& inputs, int runs);

// Sets each report group's in_run_ms from the group step at the same position. Returns false
// and sets nothing when the steps are not the report's groups (another count, backend, rule
// or first node): a report of another placement must not borrow this one's times.
bool SetInRunTimes(const RunProfile& mean, const Graph& graph, OptimizeReport& report);

// After Session::Optimize: the mean profile of a few runs of the kept placement on seeded
// random inputs, its group times set in `report` where its steps are the report's groups
// (`*times_set` says whether they were).
StatusOr<RunProfile> ProfileKeptPlacement(Session& session, OptimizeReport& report,
                                          bool* times_set = nullptr);

}  // namespace collage
