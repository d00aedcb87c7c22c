// The last step of every optimize: the finalists — the op-level plan, the two-level best
// (two-level search) and every backend alone — compiled, checked against the reference
// kernels and measured side by side in interleaved rounds (search/finalist_decision.h); the
// one kept is the one to run. Groups measured one at a time can add up wrong (caches, thread
// pools, neighbours), so the saved plan is never one that measured slower than another
// finalist.
#pragma once

#include <string>
#include <vector>

#include "collage/optimize.h"
#include "runtime/placement.h"
#include "search/plan_bench.h"

namespace collage {

struct Finalist {
  PlacementSource source;  // the op-level or two-level plan, or one backend alone
  Placement placement;
  double estimated_ms = 0;  // the cost model's estimate (0: none)
  std::string skipped;      // set by the caller: why it is no contender (not compiled or run)
};

// What the decision found, for the optimize's report.
struct FinalDecision {
  size_t kept = 0;                        // the kept finalist's index
  std::vector<FinalistReport> finalists;  // one row per finalist, in their order
  double measured_ms = 0;                 // the kept finalist's median
  int rounds = 0;
  double round_spread = 0;  // the kept finalist's, over the rounds
  std::string warning;      // about a decision too noisy to trust, else empty
};

// Decides between `finalists` (the first is the search's own plan, kept on a tie with a later
// one). A finalist that does not compile, fails or disagrees with the reference kernels is
// reported skipped with the reason, as is one whose placement repeats an earlier finalist's.
// Fails when the first finalist itself cannot run.
StatusOr<FinalDecision> DecideFinalPlacement(const std::vector<Finalist>& finalists,
                                             const PlanBench& bench,
                                             const OptimizeOptions& options);

}  // namespace collage
