#include "collage/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace collage {

LatencyStats ComputeLatencyStats(std::vector<double> samples_ms) {
  LatencyStats s;
  if (samples_ms.empty()) return s;
  std::sort(samples_ms.begin(), samples_ms.end());
  const size_t n = samples_ms.size();
  auto rank = [&](double p) {
    size_t r = static_cast<size_t>(std::ceil(p * static_cast<double>(n)));
    return samples_ms[std::min(n - 1, r == 0 ? 0 : r - 1)];
  };
  s.count = static_cast<int>(n);
  s.min_ms = samples_ms.front();
  s.max_ms = samples_ms.back();
  s.mean_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / static_cast<double>(n);
  s.p50_ms = rank(0.50);
  s.p90_ms = rank(0.90);
  s.p95_ms = rank(0.95);
  s.p99_ms = rank(0.99);
  double squares = 0;
  for (double x : samples_ms) squares += (x - s.mean_ms) * (x - s.mean_ms);
  s.stddev_ms = n > 1 ? std::sqrt(squares / static_cast<double>(n - 1)) : 0.0;
  return s;
}

}  // namespace collage
