// The whole op-level optimization of one graph: enumerate every backend's candidates, price
// them and the conversions between them with the measured cost model (cost database first),
// search the cheapest placement, and explain it (each group's rivals).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "collage/optimize.h"
#include "collage/sdk/backend.h"
#include "runtime/candidate_index.h"
#include "runtime/placement.h"

namespace collage {

struct OptimizeResult {
  Placement placement;
  OptimizeReport report;
};

// The reduced-precision candidates one search may use.
struct PrecisionScope {
  std::vector<Precision> precisions = {Precision::kFloat32};  // float32 always among them
  std::vector<bool> float32_only;  // by node: no reduced-precision group may hold it
  std::set<std::string> excluded;  // reduced-precision groups not to use, by GroupKey
};

// Names one placed group completely: backend, rule, precision and nodes.
std::string GroupKey(const PlacedGroup& group);

// The thread policy is applied for `threads` before anything is measured. With
// options.precision other than float32, searches within the accuracy budget
// (search/precision_search.h).
StatusOr<OptimizeResult> OptimizePlacement(const Graph& graph, BackendRegistry& registry,
                                           int threads, const OptimizeOptions& options);

// One search over the candidates of `index` (built for options' backends, strictness and
// precisions) that `scope` admits, without the accuracy check.
StatusOr<OptimizeResult> SearchPlacement(const Graph& graph, BackendRegistry& registry, int threads,
                                         const OptimizeOptions& options,
                                         const CandidateIndex& index, const PrecisionScope& scope);

// The backends an optimize with `options` places on: options.backends, else every registered
// one.
std::vector<std::string> BackendsToPlaceOn(const OptimizeOptions& options,
                                           const BackendRegistry& registry);

}  // namespace collage
