// What `collage optimize` and `collage demo` show after a search: its summary, each backend's
// share of the estimate beside its time in a run of the kept placement, and the library's
// end-to-end decision between the finalists.
#pragma once

#include "collage/optimize.h"
#include "collage/session.h"
#include "collage/status.h"

namespace collage::cli {

// Session::Optimize with a progress bar on stderr (measurements, then generations), the
// session's warnings printed after it.
Status OptimizeWithProgress(Session& session, OptimizeOptions options, OptimizeReport* report);

// Candidates, cache hits, invalid ones, the search's size and time, then per backend its
// nodes, groups, estimated time and share, and its time in `in_run` (the mean profile of the
// kept placement, GroupReport::in_run_ms; empty: not profiled) with the conversions'.
void PrintOptimizeReport(const OptimizeReport& report, const RunProfile& in_run);

// The two-level search's generations, evaluations and invalid genomes.
void PrintTwoLevelSearch(const OptimizeReport& report);

// What the accuracy check of a reduced-precision optimize found (nothing for float32).
void PrintAccuracyCheck(const OptimizeReport& report);

// The end-to-end decision: one row per finalist (estimate, median, ratio to the kept one,
// rounds won; the kept one marked, skipped ones with their reason), the estimate against the
// measurement, the kept one's margin over the runner-up, and the round-to-round spread. Says
// "not measured end to end" when the report has no finalists.
void PrintFinalists(const OptimizeReport& report);

}  // namespace collage::cli
