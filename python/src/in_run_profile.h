// What `collage optimize` sets beside the search's estimate after Session::Optimize: each
// group's mean time in a few profiled runs of the kept placement (GroupReport::in_run_ms),
// on seeded random inputs. The estimate adds up groups measured one at a time; in a run
// they share caches and thread pools with their neighbours, so only a run shows where the
// sum is wrong.
#pragma once

#include "collage/optimize.h"
#include "collage/session.h"
#include "collage/status.h"

namespace collage::python {

// The mean profile of the runs (after one unprofiled run, which pays page faults and lazy
// initialisation), its group steps' times set in `report` where the steps are the report's
// groups (same count, backend, rule and first node; otherwise none is set).
StatusOr<RunProfile> ProfileKeptPlacement(Session& session, OptimizeReport& report);

// The sum of the layout conversions' steps in `profile`.
double ConversionsMs(const RunProfile& profile);

}  // namespace collage::python
