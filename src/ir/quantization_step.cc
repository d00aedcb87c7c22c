#include "ir/quantization_step.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace collage {
namespace {

bool IsQuantizedInteger(DType dtype) {
  return dtype == DType::kUInt8 || dtype == DType::kInt8 || dtype == DType::kUInt16 ||
         dtype == DType::kInt16;
}

// Ops whose output is rounded to the output's quantization scale.
bool RoundsToOutputScale(const Node& node) {
  const bool onnx = node.domain.empty() || node.domain == "ai.onnx";
  if (onnx) {
    return node.op_type == "QuantizeLinear" || node.op_type == "DynamicQuantizeLinear" ||
           node.op_type == "QLinearConv" || node.op_type == "QLinearMatMul";
  }
  return node.domain == "com.microsoft" &&
         (node.op_type.rfind("QLinear", 0) == 0 || node.op_type == "QGemm");
}

// Ops through which a difference of one step in their first input stays within one step.
bool KeepsSteps(const Node& node) {
  static const std::set<std::string> kOps = {"Identity",      "Reshape",
                                             "Flatten",       "Squeeze",
                                             "Unsqueeze",     "Transpose",
                                             "Slice",         "Relu",
                                             "Clip",          "Tanh",
                                             "Sigmoid",       "MaxPool",
                                             "GlobalMaxPool", "GlobalAveragePool",
                                             "AveragePool",   "Dropout"};
  return (node.domain.empty() || node.domain == "ai.onnx") && kOps.count(node.op_type) != 0;
}

}  // namespace

double QuantizationStep(const Graph& graph, ValueId value, const SubGraph* scope) {
  while (value != kNoValue) {
    const Value& v = graph.value(value);
    const NodeId producer = v.producer;
    if (producer < 0 || (scope != nullptr && !scope->Contains(producer))) return 0;
    const Node& node = graph.node(producer);
    if (RoundsToOutputScale(node) && value == node.outputs[0] && IsQuantizedInteger(v.type.dtype)) {
      return 1;
    }
    if (node.op_type == "DequantizeLinear" && node.domain.empty() && node.inputs.size() > 1) {
      const Value& scale = graph.value(node.inputs[1]);
      if (!scale.is_constant()) return 0;
      const std::vector<float> s = scale.constant->ToVector<float>();
      if (s.empty()) return 0;
      const float largest = *std::max_element(s.begin(), s.end());
      return largest > 0 && std::isfinite(largest) ? largest : 0;
    }
    if (!KeepsSteps(node) || node.inputs.empty()) return 0;
    value = node.inputs[0];
  }
  return 0;
}

namespace {

// The most nodes `counts` on any path to `value` (within `scope`), in node (topological) order.
template <typename Counts>
int MostOnAPath(const Graph& graph, ValueId value, const SubGraph* scope, Counts counts) {
  std::vector<int> depth(static_cast<size_t>(graph.num_values()), 0);
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    if (scope != nullptr && !scope->Contains(n)) continue;
    const Node& node = graph.node(n);
    int in = 0;
    for (ValueId v : node.inputs) {
      if (v != kNoValue) in = std::max(in, depth[static_cast<size_t>(v)]);
    }
    const int out = in + (counts(node) ? 1 : 0);
    for (ValueId v : node.outputs) {
      if (v != kNoValue) depth[static_cast<size_t>(v)] = out;
    }
  }
  return depth[static_cast<size_t>(value)];
}

}  // namespace

double QuantizationTolerance(const Graph& graph, ValueId value, const SubGraph* scope) {
  const double step = QuantizationStep(graph, value, scope);
  if (step == 0) return 0;
  const int d = std::max(1, MostOnAPath(graph, value, scope, RoundsToOutputScale));
  return step * std::ceil(std::sqrt(static_cast<double>(d)));
}

double DynamicQuantizationTolerance(const Graph& graph, ValueId value, const SubGraph* scope) {
  const int d = MostOnAPath(graph, value, scope, [](const Node& node) {
    return node.op_type == "DynamicQuantizeLinear" &&
           (node.domain.empty() || node.domain == "ai.onnx");
  });
  if (d == 0) return 0;
  return kDynamicQuantizationStep * std::ceil(std::sqrt(static_cast<double>(d)));
}

}  // namespace collage
