#include "search/final_decision.h"

#include <map>
#include <memory>

#include "search/finalist_decision.h"
#include "search/phase_progress.h"
#include "collage/sdk/errors.h"

namespace collage {

StatusOr<FinalDecision> DecideFinalPlacement(const std::vector<Finalist>& finalists,
                                             const PlanBench& bench,
                                             const OptimizeOptions& options) {
  if (finalists.empty()) return InvalidArgument("no finalists to decide between");
  FinalDecision decided;
  std::vector<std::unique_ptr<Executable>> contenders;
  std::vector<size_t> contender_of;         // contender → finalist index
  std::map<std::string, std::string> seen;  // placement key → the finalist that has it
  PhaseProgress checking(options.on_progress, "finalists", static_cast<int>(finalists.size()));
  for (size_t i = 0; i < finalists.size(); ++i) {
    const Finalist& finalist = finalists[i];
    FinalistReport row;
    row.source = finalist.source;
    const std::string name = PlacementSourceName(finalist.source);
    row.estimated_ms = finalist.estimated_ms;
    const std::string key = PlacementKey(finalist.placement);
    if (!finalist.skipped.empty()) {
      if (i == 0)
        return Internal("the {} placement cannot be a finalist: {}", name, finalist.skipped);
      row.skipped = finalist.skipped;
    } else if (auto same = seen.find(key); same != seen.end()) {
      row.skipped = "the same placement as " + same->second;
    } else {
      seen.emplace(key, name);
      auto exe = bench.Compile(finalist.placement);
      Status checked = exe.ok() ? bench.Check(**exe) : exe.status();
      if (checked.ok()) {
        contenders.push_back(std::move(*exe));
        contender_of.push_back(i);
      } else if (i == 0) {
        return Status(checked.code(), "the " + name + " placement: " + checked.message());
      } else {
        row.skipped = checked.message();
      }
    }
    decided.finalists.push_back(std::move(row));
    checking.Step();
  }
  DecisionOptions decision;
  decision.min_rounds = std::max(1, options.final_rounds);
  decision.max_rounds = std::max(decision.min_rounds, options.max_final_rounds);
  decision.warmup_rounds = 0;  // each finalist just ran once, for the check: its page faults are paid
  PhaseProgress rounds(options.on_progress, "decision", decision.min_rounds);
  decision.on_round = [&rounds](int) { rounds.Step(); };
  COLLAGE_ASSIGN_OR_RETURN(DecisionResult result,
                           DecideBetweenFinalists(
                               contenders.size(),
                               [&](size_t c) -> StatusOr<double> {
                                 if (options.cancel.cancelled()) {
                                   return Status(StatusCode::kCancelled,
                                                 "interrupted while measuring the finalists; every "
                                                 "measurement of the search is kept");
                                 }
                                 return bench.RunSettled(*contenders[c]);
                               },
                               decision));
  rounds.Finish();
  for (size_t c = 0; c < contenders.size(); ++c) {
    FinalistReport& row = decided.finalists[contender_of[c]];
    row.median_ms = result.median_ms[c];
    row.ratio_to_kept = result.ratio_to_kept[c];
    row.rounds_won = result.rounds_won[c];
    row.rounds_run = result.rounds_run[c];
    row.kept = c == result.kept;
  }
  decided.kept = contender_of[result.kept];
  decided.measured_ms = result.median_ms[result.kept];
  decided.rounds = result.rounds;
  decided.round_spread = result.kept_spread;
  decided.warning = NoisyDecisionWarning(result.kept_spread);
  return decided;
}

}  // namespace collage
