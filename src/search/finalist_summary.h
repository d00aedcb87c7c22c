// How the end-to-end decision between finalists (OptimizeReport::finalists) is told to a
// reader, shared by the CLI and the HTML report so that both say the same thing: the names,
// the kept one, its runner-up, and the search's estimate against what was measured.
#pragma once

#include <string>

#include "collage/optimize.h"

namespace collage {

// "op-level" → "op-level plan", "two-level" → "two-level plan",
// "single-backend:onednn" → "onednn alone"; anything else as it is.
std::string FinalistLabel(const std::string& name);

// The kept finalist; nullptr when the decision was not made (OptimizeOptions::final_rounds 0).
const FinalistReport* KeptFinalist(const OptimizeReport& report);

// The contender closest to the kept one (lowest ratio_to_kept; below 1 when the kept one won
// a tie); nullptr when no other finalist ran.
const FinalistReport* RunnerUp(const OptimizeReport& report);

// The additive estimate set against the end-to-end median of the same placement: the kept
// finalist's when it has an estimate, else the search's own plan's (op-level) — the point is
// to show the cost model's error, so both numbers must be of one placement.
struct EstimateAgainstRun {
  const FinalistReport* finalist = nullptr;  // nullptr: nothing estimated was measured
  double estimated_ms = 0;
  double measured_ms = 0;
};
EstimateAgainstRun CompareEstimateWithRun(const OptimizeReport& report);

// "12.3% low" (the estimate below the measurement) or "4.0% high".
std::string EstimateError(double estimated_ms, double measured_ms);

}  // namespace collage
