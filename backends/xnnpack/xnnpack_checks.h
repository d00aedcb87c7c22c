// Checks shared by the per-family analyses (xnnpack_analysis.h): dtype, constness, geometry
// bounds. Each returns Unsupported naming the node, so a rule's refusal can be explained.
#pragma once

#include <cstdint>
#include <vector>

#include "collage/status.h"
#include "collage/sdk/graph.h"

namespace collage::xnnpack {

// XNNPACK takes geometry as uint32_t; ONNX allows larger values.
inline constexpr int64_t kMaxGeometry = int64_t{1} << 30;

inline const TensorType& TypeOf(const Graph& graph, ValueId v) { return graph.value(v).type; }
inline ValueId Input(const Node& node, size_t i) {
  return i < node.inputs.size() ? node.inputs[i] : kNoValue;
}

// float32, static, non-empty.
Status RequireFloat(const Graph& graph, const Node& node, ValueId v, const char* what);
// A data input: RequireFloat and not a constant (a constant would leave the kernel without
// that input).
Status RequireData(const Graph& graph, const Node& node, ValueId v, const char* what);
// A weight: RequireFloat and a constant.
Status RequireConst(const Graph& graph, const Node& node, ValueId v, const char* what);
// Exactly one used output, float32.
Status RequireSingleOutput(const Graph& graph, const Node& node);
// The computed output shape agrees with type inference.
Status CheckOutputShape(const Graph& graph, const Node& node, const Shape& expected);

}  // namespace collage::xnnpack
