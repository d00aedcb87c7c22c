#include "onnx/constant_folding.h"

#include <set>
#include <string>

#include "onnx/onnx_types.h"
#include "collage/sdk/errors.h"

namespace collage {

namespace {


// A dequantized constant (an int8 weight and its scale) stays a node: the integer kernels of
// the backends, and the engines' own quantized-graph fusions, need the integer weight beside
// its DequantizeLinear; folded, it would also take four times the memory.
bool KeepsQuantizedConstant(const Node& node) {
  return node.domain.empty() && node.op_type == "DequantizeLinear";
}

bool ReadsOnlyInputType(const Node& node) {
  return node.domain.empty() && (node.op_type == "Shape" || node.op_type == "Size");
}

}  // namespace

bool IsRandomOp(const std::string& domain, const std::string& op_type) {
  static const std::set<std::string> kRandomOps = {"RandomNormal",  "RandomNormalLike",
                                                   "RandomUniform", "RandomUniformLike",
                                                   "Multinomial",   "Bernoulli"};
  return (domain.empty() || domain == "ai.onnx") && kRandomOps.count(op_type) != 0;
}

bool ShouldFold(const InferContext& ctx, const Graph& graph) {
  const Node& node = ctx.node;
  if (IsRandomOp(node.domain, node.op_type) || KeepsQuantizedConstant(node)) return false;
  bool all_constant = true;
  for (ValueId in : node.inputs) {
    if (in != kNoValue && !graph.value(in).is_constant()) all_constant = false;
  }
  if (!all_constant && !ReadsOnlyInputType(node)) return false;
  int64_t total = 0;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) continue;
    const std::optional<int64_t> bytes = CheckedNumBytes(ctx.output_types[i]);
    if (!bytes || *bytes > kMaxFoldedBytes - total) return false;
    total += *bytes;
  }
  return true;
}

StatusOr<std::vector<Tensor>> FoldNode(const InferContext& ctx, const Graph& graph) {
  const Node& node = ctx.node;
  std::vector<Tensor> inputs;
  inputs.reserve(node.inputs.size());
  for (ValueId in : node.inputs) {
    if (in == kNoValue) {
      inputs.emplace_back();
    } else if (graph.value(in).is_constant()) {
      inputs.push_back(*graph.value(in).constant);
    } else {
      // Shape/Size: the kernel reads the shape only, so no data is materialized.
      const TensorType& type = graph.value(in).type;
      inputs.push_back(Tensor::View(type.dtype, type.shape, nullptr));
    }
  }
  COLLAGE_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, RunReferenceNode(node, ctx.opset, inputs));
  if (outputs.size() != node.outputs.size()) {
    return Internal("{} node '{}': folding produced {} outputs for {}", node.op_type, node.name,
                    outputs.size(), node.outputs.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) continue;
    const TensorType got{outputs[i].dtype(), outputs[i].shape()};
    if (got != ctx.output_types[i]) {
      return Internal("{} node '{}': folding output {} gave {}, but type inference said {}",
                      node.op_type, node.name, i, got.ToString(), ctx.output_types[i].ToString());
    }
  }
  return outputs;
}

}  // namespace collage
