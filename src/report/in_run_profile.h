// The in-run profile's one internal part (the rest is public, collage/report.h): setting a
// report's group times from a profile of the placement it reports.
#pragma once

#include "collage/optimize.h"
#include "collage/report.h"

namespace collage {

// Sets each report group's in_run_ms from the step of the group with its index. Returns false
// and sets nothing when the steps are not one per report group (another placement's profile,
// with more or fewer groups).
bool SetInRunTimes(const RunProfile& mean, OptimizeReport& report);

}  // namespace collage
