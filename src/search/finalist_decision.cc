#include "search/finalist_decision.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "collage/sdk/errors.h"
#include "cost/extra_time.h"

namespace collage {
namespace {

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(values.size() - 1, lo + 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

// times[round][finalist]; a finalist not run in a round (dropped) has NaN there.
using Rounds = std::vector<std::vector<double>>;

bool Ran(double ms) { return !std::isnan(ms); }

double MedianRatio(const Rounds& times, size_t i, size_t j) {
  std::vector<double> ratios;
  for (const auto& round : times) {
    if (Ran(round[i]) && Ran(round[j])) ratios.push_back(round[i] / round[j]);
  }
  return ratios.empty() ? std::numeric_limits<double>::infinity() : MedianOf(ratios);
}

// True when the rounds show finalist i slower than j beyond chance.
bool SignificantlySlower(const Rounds& times, size_t i, size_t j) {
  int slower = 0, trials = 0;
  for (const auto& round : times) {
    if (!Ran(round[i]) || !Ran(round[j]) || round[i] == round[j]) continue;
    ++trials;
    if (round[i] > round[j]) ++slower;
  }
  return trials > 0 && SignTestPValue(slower, trials) < 0.05;
}

// Finalist 0 (the search's plan) runs in every round, so ratios are taken against it.
// The finalist that the others beat least in their paired rounds: the largest, over i, of the
// smallest median ratio another finalist has against i (1 or more: no one measured faster
// side by side). Ranking by the ratio against one reference finalist alone could keep one
// that another beats head to head, since medians of ratios are not transitive. Ties go to
// the earlier finalist.
size_t Leader(const Rounds& times, size_t n) {
  size_t leader = 0;
  double best = -1;
  for (size_t i = 0; i < n; ++i) {
    if (times.empty() || !Ran(times.back()[i])) continue;  // not running any more
    double worst = std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < n; ++j) {
      if (j != i) worst = std::min(worst, MedianRatio(times, j, i));
    }
    if (worst > best) {
      best = worst;
      leader = i;
    }
  }
  return leader;
}

}  // namespace

double SignTestPValue(int wins, int trials) {
  if (trials <= 0 || wins <= 0) return 1;
  // P(X >= wins), X ~ Binomial(trials, 1/2), summed in log space (trials stays small).
  double p = 0;
  for (int k = wins; k <= trials; ++k) {
    const double log_choose =
        std::lgamma(trials + 1.0) - std::lgamma(k + 1.0) - std::lgamma(trials - k + 1.0);
    p += std::exp(log_choose - trials * std::log(2.0));
  }
  return std::min(1.0, p);
}

StatusOr<DecisionResult> DecideBetweenFinalists(
    size_t num_finalists, const std::function<StatusOr<double>(size_t)>& run_once,
    const DecisionOptions& options) {
  if (num_finalists == 0) return InvalidArgument("no finalists to decide between");
  const size_t n = num_finalists;
  const int min_rounds = std::max(1, options.min_rounds);
  const int max_rounds = std::max(min_rounds, options.max_rounds);
  Rounds times;
  std::vector<bool> active(n, true);
  size_t leader = 0;
  // Drops every finalist far behind the leader in each of at least drop_after rounds (never
  // the search's plan, against which the ratios are taken).
  auto drop_hopeless = [&] {
    for (size_t i = 1; i < n; ++i) {
      if (!active[i] || i == leader) continue;
      int behind = 0, both = 0;
      for (const auto& round : times) {
        if (!Ran(round[i]) || !Ran(round[leader])) continue;
        ++both;
        if (round[i] > options.drop_ratio * round[leader]) ++behind;
      }
      if (both >= std::max(1, options.drop_after) && behind == both) active[i] = false;
    }
  };
  auto run_rounds = [&](int count, bool keep) -> Status {
    for (int r = 0; r < count; ++r) {
      std::vector<double> round(n, std::numeric_limits<double>::quiet_NaN());
      const size_t first = times.size() % n;  // rotate who goes first
      for (size_t k = 0; k < n; ++k) {
        const size_t i = (first + k) % n;
        if (!active[i]) continue;
        COLLAGE_ASSIGN_OR_RETURN(round[i], run_once(i));
        round[i] = std::max(round[i], 1e-9);  // a ratio needs a positive time
      }
      if (!keep) continue;
      times.push_back(std::move(round));
      if (options.on_round) options.on_round(static_cast<int>(times.size()));
      leader = Leader(times, n);
      drop_hopeless();
    }
    return Status();
  };
  // Warm-up: the first runs pay page faults.
  COLLAGE_RETURN_IF_ERROR(run_rounds(std::max(0, options.warmup_rounds), /*keep=*/false));
  COLLAGE_RETURN_IF_ERROR(run_rounds(min_rounds, /*keep=*/true));
  auto undecided = [&] {
    for (size_t i = 0; i < n; ++i) {
      if (i == leader || !active[i]) continue;
      const bool tie = MedianRatio(times, i, leader) <= 1 + options.tie_tolerance;
      if (!tie && !SignificantlySlower(times, i, leader)) return true;
    }
    return false;
  };
  while (n > 1 && static_cast<int>(times.size()) < max_rounds && undecided()) {
    const int more = std::min(std::max(1, options.rounds_per_batch),
                              max_rounds - static_cast<int>(times.size()));
    COLLAGE_RETURN_IF_ERROR(run_rounds(more, /*keep=*/true));
  }

  DecisionResult result;
  result.leader = leader;
  result.kept = leader;
  // An earlier finalist within the tie tolerance is kept instead, provided no finalist beats
  // it by more than the tolerance either.
  auto beaten_by_at_most = [&](size_t i) {
    double worst = std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < n; ++j) {
      if (j != i) worst = std::min(worst, MedianRatio(times, j, i));
    }
    return worst;
  };
  for (size_t i = 0; i < leader; ++i) {
    if (MedianRatio(times, i, leader) <= 1 + options.tie_tolerance &&
        beaten_by_at_most(i) >= 1 - options.tie_tolerance) {
      result.kept = i;
      break;
    }
  }
  result.rounds = static_cast<int>(times.size());
  result.rounds_won.assign(n, 0);
  result.rounds_run.assign(n, 0);
  for (const auto& round : times) {
    size_t fastest = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!Ran(round[i])) continue;
      result.rounds_run[i] += 1;
      if (round[i] < round[fastest]) fastest = i;
    }
    result.rounds_won[fastest] += 1;
  }
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> own;
    for (const auto& round : times) {
      if (Ran(round[i])) own.push_back(round[i]);
    }
    result.median_ms.push_back(MedianOf(own));
    result.ratio_to_kept.push_back(i == result.kept ? 1.0 : MedianRatio(times, i, result.kept));
    if (i == result.kept) {
      const double median = result.median_ms.back();
      result.kept_spread = median > 0 ? (Quantile(own, 0.9) - Quantile(own, 0.1)) / median : 0;
    }
  }
  return result;
}

std::string NoisyDecisionWarning(double kept_spread) {
  if (!(kept_spread > kNoisyDecisionSpread)) return "";
  return fmt::format(
      "the end-to-end decision's rounds spread {:.0f}% ((p90 - p10) / median of the kept plan's "
      "times, above {:.0f}%): the machine was busy while it measured, so which finalist is "
      "fastest is uncertain; run optimize again on a quiet machine (what was measured stays in "
      "the cost database)",
      100 * kept_spread, 100 * kNoisyDecisionSpread);
}

}  // namespace collage
