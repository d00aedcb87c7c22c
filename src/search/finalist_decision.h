// The end-to-end decision between finalists (the search's plan, the two-level best, every
// backend alone): which one to keep, decided like a statistician rather than by one median.
//
// These machines drift: the same plan measures 77 ms and 188 ms minutes apart. So the
// finalists run in interleaved rounds (each round runs every finalist once, the order
// rotating from round to round so that none always follows the same neighbour), and each is
// judged against the leader by its per-round ratios (paired: a slow minute slows both) and
// by a sign test over the rounds it lost. While a finalist is neither clearly slower than
// the leader (sign test, one-sided p < 0.05) nor within the tie tolerance of it, more
// rounds are run, up to max_rounds. Kept: the earliest finalist that ties the leader (its
// median ratio within the tie tolerance, the difference not significant) — so the op-level
// plan, listed first, is kept over an equal single backend — else the leader. A finalist
// far behind the leader in every round so far stops being run (drop_ratio).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "collage/status.h"

namespace collage {

struct DecisionOptions {
  int warmup_rounds = 1;  // untimed rounds first (the first runs pay page faults)
  int min_rounds = 15;
  int max_rounds = 60;
  int rounds_per_batch = 5;  // rounds added at a time while undecided
  // A finalist whose median per-round ratio to the leader is at most 1 + tie_tolerance, and
  // which is not significantly slower, ties it.
  double tie_tolerance = 0.01;
  // A finalist slower than the leader by more than drop_ratio in every one of at least
  // drop_after rounds is out: it runs in no further round (a backend alone that takes
  // seconds where the plan takes milliseconds is not timed sixty times). Two rounds were too
  // few on these machines: with an 80% round-to-round spread, XNNPACK alone lost two rounds
  // by 1.9x and was dropped, then measured within 25% of the winner.
  double drop_ratio = 2.0;
  int drop_after = 3;
  // Called after each timed round with the rounds so far (a progress display).
  std::function<void(int rounds)> on_round;
};

struct DecisionResult {
  size_t kept = 0;
  size_t leader = 0;              // lowest median per-round ratio (may differ from kept on a tie)
  int rounds = 0;                 // rounds measured (after one warm-up round)
  std::vector<double> median_ms;  // per finalist
  std::vector<double> ratio_to_kept;  // per finalist: median over rounds of t_i / t_kept
  std::vector<int> rounds_won;        // per finalist: rounds in which it was the fastest
  std::vector<int> rounds_run;        // per finalist: rounds it ran in (fewer once dropped)
  // (p90 - p10) / median of the kept finalist's per-round times.
  double kept_spread = 0;
};

// A decision whose kept finalist's rounds spread more than this ((p90 - p10) / median) was
// taken on a busy machine: which finalist is fastest is then uncertain.
inline constexpr double kNoisyDecisionSpread = 0.25;
// The warning a decision of that spread gets (said with the plan it keeps); empty at or below
// kNoisyDecisionSpread.
std::string NoisyDecisionWarning(double kept_spread);

// `run_once(i)` runs finalist i once and returns its wall time in milliseconds (or an error,
// which ends the decision). With one finalist nothing is measured beyond its rounds.
StatusOr<DecisionResult> DecideBetweenFinalists(
    size_t num_finalists, const std::function<StatusOr<double>(size_t)>& run_once,
    const DecisionOptions& options);

// One-sided sign test: the probability of at least `wins` successes in `trials` fair coin
// flips (the chance that a finalist which is not faster wins that many rounds).
double SignTestPValue(int wins, int trials);

}  // namespace collage
