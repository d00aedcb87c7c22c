// `collage optimize --json FILE`: the run's outcome for scripts — the estimate against the
// end-to-end measurement, the finalists, every group's estimate beside its time in a run.
#pragma once

#include <string>

#include "collage/optimize.h"
#include "collage/session.h"

namespace collage::cli {

struct OptimizeJsonContext {
  std::string model;
  int threads = 0;        // the count the session ran with (resolved, never 0)
  std::string plan_path;  // where the plan was saved; empty: not saved (null in the JSON)
};

// The summary as JSON text. `in_run`: the mean profile of the kept placement (conversions
// come from it; empty when not profiled).
std::string OptimizeSummaryJson(const OptimizeJsonContext& context, const OptimizeReport& report,
                                const RunProfile& in_run);

}  // namespace collage::cli
