// Run profiles as a Chrome trace (chrome://tracing, Perfetto): one complete event per kernel,
// named by its ops, with its backend and rule as category and arguments.
#pragma once

#include <string>
#include <vector>

#include "collage/run_profile.h"

namespace collage::cli {

struct TracedRun {
  double start_ms = 0;  // when the run started, from the first run's start
  RunProfile profile;
};

std::string ChromeTraceJson(const std::vector<TracedRun>& runs);

}  // namespace collage::cli
