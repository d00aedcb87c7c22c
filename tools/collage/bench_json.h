// `collage bench --json FILE`: every figure the benchmark printed, with the settings, the
// machine and the library versions it was measured with (keys documented in docs/cli.md,
// "collage bench").
#pragma once

#include <string>

#include "collage/fma_peak.h"
#include "collage/latency_stats.h"
#include "collage/session.h"

namespace collage::cli {

struct BenchSummary {
  std::string model;
  std::string placement;    // the session's placement_source()
  std::string plan;         // the plan file run, or empty
  int threads = 0;          // resolved
  int streams = 1;
  int warmup_runs = 0;
  int max_runs = 0;         // the limits asked for (0: none)
  double max_seconds = 0;
  LoadTimes load;
  double first_inference_ms = 0;
  double wall_seconds = 0;
  LatencyStats latency;
  // The arithmetic of one run and the rate it ran at, beside this CPU's measured float32 peak
  // at the threads the runs could use (0 where the model's data sets its shapes).
  double gflop_per_run = 0;
  double gflops = 0;
  FmaPeak peak;

  // Inferences per second over the whole timed span, every stream's runs together.
  double throughput() const { return wall_seconds > 0 ? latency.count / wall_seconds : 0.0; }
};

std::string BenchJson(const BenchSummary& summary, const Session& session);

}  // namespace collage::cli
