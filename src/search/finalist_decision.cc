#include "search/finalist_decision.h"

#include <algorithm>
#include <cmath>

#include "util/errors.h"

namespace collage {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(values.size() - 1, lo + 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

// times[round][finalist]
using Rounds = std::vector<std::vector<double>>;

double MedianRatio(const Rounds& times, size_t i, size_t j) {
  std::vector<double> ratios;
  for (const auto& round : times) ratios.push_back(round[i] / round[j]);
  return Median(ratios);
}

// True when the rounds show finalist i slower than j beyond chance.
bool SignificantlySlower(const Rounds& times, size_t i, size_t j) {
  int slower = 0, trials = 0;
  for (const auto& round : times) {
    if (round[i] == round[j]) continue;
    ++trials;
    if (round[i] > round[j]) ++slower;
  }
  return trials > 0 && SignTestPValue(slower, trials) < 0.05;
}

size_t Leader(const Rounds& times, size_t n) {
  size_t leader = 0;
  double best = 1;
  for (size_t i = 1; i < n; ++i) {
    const double ratio = MedianRatio(times, i, 0);
    if (ratio < best) {
      best = ratio;
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
  auto run_rounds = [&](int count, bool keep) -> Status {
    for (int r = 0; r < count; ++r) {
      std::vector<double> round(n, 0);
      const size_t first = times.size() % n;  // rotate who goes first
      for (size_t k = 0; k < n; ++k) {
        const size_t i = (first + k) % n;
        COLLAGE_ASSIGN_OR_RETURN(round[i], run_once(i));
        round[i] = std::max(round[i], 1e-9);  // a ratio needs a positive time
      }
      if (keep) times.push_back(std::move(round));
    }
    return Status();
  };
  COLLAGE_RETURN_IF_ERROR(run_rounds(1, /*keep=*/false));  // warm-up: first runs pay page faults
  COLLAGE_RETURN_IF_ERROR(run_rounds(min_rounds, /*keep=*/true));
  size_t leader = Leader(times, n);
  auto undecided = [&] {
    for (size_t i = 0; i < n; ++i) {
      if (i == leader) continue;
      const bool tie = MedianRatio(times, i, leader) <= 1 + options.tie_tolerance;
      if (!tie && !SignificantlySlower(times, i, leader)) return true;
    }
    return false;
  };
  while (n > 1 && static_cast<int>(times.size()) < max_rounds && undecided()) {
    const int more = std::min(std::max(1, options.rounds_per_batch),
                              max_rounds - static_cast<int>(times.size()));
    COLLAGE_RETURN_IF_ERROR(run_rounds(more, /*keep=*/true));
    leader = Leader(times, n);
  }

  DecisionResult result;
  result.leader = leader;
  result.kept = leader;
  for (size_t i = 0; i < leader; ++i) {
    if (MedianRatio(times, i, leader) <= 1 + options.tie_tolerance) {
      result.kept = i;
      break;
    }
  }
  result.rounds = static_cast<int>(times.size());
  result.rounds_won.assign(n, 0);
  for (const auto& round : times) {
    result.rounds_won[static_cast<size_t>(std::min_element(round.begin(), round.end()) -
                                          round.begin())] += 1;
  }
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> own;
    for (const auto& round : times) own.push_back(round[i]);
    result.median_ms.push_back(Median(own));
    result.ratio_to_kept.push_back(i == result.kept ? 1.0 : MedianRatio(times, i, result.kept));
    if (i == result.kept) {
      const double median = result.median_ms.back();
      result.kept_spread = median > 0 ? (Quantile(own, 0.9) - Quantile(own, 0.1)) / median : 0;
    }
  }
  return result;
}

}  // namespace collage
