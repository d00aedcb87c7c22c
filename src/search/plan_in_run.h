// One plan's profiled runs: what PlanBench::Profile measures and the calibrated search
// (search/run_calibration.h) re-prices its groups with.
#pragma once

#include "collage/run_profile.h"

namespace collage {

struct PlanInRun {
  RunProfile steps;    // each step's median time over the profiled runs, in execution order
  double wall_ms = 0;  // the median time of a whole run
};

}  // namespace collage
