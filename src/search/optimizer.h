// The whole op-level optimization of one graph: enumerate every backend's candidates, price
// them and the conversions between them with the measured cost model (cost database first),
// search the cheapest placement, and explain it (each group's rivals).
#pragma once

#include "collage/sdk/backend.h"
#include "collage/optimize.h"
#include "runtime/placement.h"

namespace collage {

struct OptimizeResult {
  Placement placement;
  OptimizeReport report;
};

// The thread policy is applied for `threads` before anything is measured.
StatusOr<OptimizeResult> OptimizePlacement(const Graph& graph, BackendRegistry& registry,
                                           int threads, const OptimizeOptions& options);

}  // namespace collage
