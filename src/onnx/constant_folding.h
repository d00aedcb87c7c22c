// Import-time constant folding: which nodes the frontend evaluates with the reference
// kernels instead of keeping them (the Shape→Gather→Concat→Reshape chains exporters emit).
#pragma once

#include <string>
#include <vector>

#include "collage/status.h"
#include "collage/sdk/op_registry.h"

namespace collage {

// Folded outputs larger than this stay nodes: folding them would only bloat the weights.
inline constexpr int64_t kMaxFoldedBytes = int64_t{64} << 20;

// Ops whose outputs are random: never folded, never taken for a known value.
bool IsRandomOp(const std::string& domain, const std::string& op_type);

// Whether a node whose types were inferred into `ctx` should be folded: every present input
// is a constant, or it is Shape/Size (which read only the static input type); never random
// ops, never DequantizeLinear (quantized weights stay integers); never outputs above
// kMaxFoldedBytes.
bool ShouldFold(const InferContext& ctx, const Graph& graph);

// Runs the node on the reference kernels. Inputs that are not constants (the data input of
// Shape/Size) are passed as data-less views of their static type. Checks the kernel's
// outputs against the inferred types.
StatusOr<std::vector<Tensor>> FoldNode(const InferContext& ctx, const Graph& graph);

}  // namespace collage
