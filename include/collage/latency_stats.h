// Latency samples → percentiles, as benchmark tools report them (and as `collage bench` and
// the cost measurements compute them).
#pragma once

#include <vector>

namespace collage {

struct LatencyStats {
  int count = 0;
  double min_ms = 0, mean_ms = 0, p50_ms = 0, p90_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;
  double stddev_ms = 0;
  // Under 100 samples the nearest-rank p99 is the largest sample.
  bool p99_is_max() const { return count < 100; }
};

// Percentiles by nearest rank on the sorted samples.
LatencyStats ComputeLatencyStats(std::vector<double> samples_ms);

}  // namespace collage
