// Every op collage understands is one OpDef: its kind, its type inference and its reference
// kernel (the native backend, the correctness oracle and the constant folder all run it).
// Files under src/ops/ each define one family of ops and register them in one function
// (src/ops/op_families.h), all called when the registry is first used (op_registry.cc).
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "collage/status.h"
#include "collage/tensor.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/op_kind.h"

namespace collage {

// What type inference sees of one node.
struct InferContext {
  const Node& node;
  int64_t opset;
  std::vector<const TensorType*> input_types;  // nullptr for an absent optional input
  std::vector<const Tensor*> input_values;     // the data of constant inputs, else nullptr
  std::vector<TensorType> output_types;        // to fill: one per node output

  size_t num_inputs() const { return input_types.size(); }
  bool has_input(size_t i) const { return i < input_types.size() && input_types[i] != nullptr; }
  const TensorType& input_type(size_t i) const { return *input_types[i]; }
  // Data of input i if it is a constant (shape inputs of Reshape, axes of Squeeze, ...).
  const Tensor* input_value(size_t i) const {
    return i < input_values.size() ? input_values[i] : nullptr;
  }
  const Attributes& attributes() const { return node.attributes; }
};

// What a reference kernel sees: inputs and outputs as tensors; outputs are already
// allocated with the inferred types and must be fully written.
struct KernelContext {
  const Node& node;
  int64_t opset;
  std::span<const Tensor> inputs;  // an empty Tensor for an absent optional input
  std::span<Tensor> outputs;       // an empty Tensor for an unused optional output

  bool has_input(size_t i) const { return i < inputs.size() && !inputs[i].empty(); }
  const Attributes& attributes() const { return node.attributes; }
};

using InferFn = std::function<Status(InferContext&)>;
using KernelFn = std::function<Status(KernelContext&)>;

struct OpDef {
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  OpKind kind = OpKind::kOpaque;
  int min_inputs = 1;
  int max_inputs = 1;
  int min_outputs = 1;
  int max_outputs = 1;
  InferFn infer;
  KernelFn run;
};

class OpRegistry {
 public:
  // The registry of every built-in op (filled on first use).
  static const OpRegistry& Global();

  void Register(OpDef def);
  // nullptr when the op is not supported. "ai.onnx" is treated as "".
  const OpDef* Find(const std::string& domain, const std::string& op_type) const;
  std::vector<std::string> OpTypes() const;  // sorted, "domain::op" for non-default domains

 private:
  std::map<std::pair<std::string, std::string>, OpDef> defs_;
};

// The error every InferFn / KernelFn should use for a node it cannot handle:
//   return OpError(ctx.node, StatusCode::kUnsupported, "dtype {} is not supported", ...);
// gives "Conv node 'conv1': dtype int32 is not supported".
template <typename... Args>
Status OpError(const Node& node, StatusCode code, fmt::format_string<Args...> f, Args&&... args) {
  return Status(code, fmt::format("{} node '{}': ", node.op_type, node.name) +
                          fmt::format(f, std::forward<Args>(args)...));
}

// Checks arity against the OpDef, runs type inference, and checks every output type is
// static. Fills ctx.output_types.
Status InferNodeTypes(const OpDef& def, InferContext& ctx);

// Runs one node on the reference kernels: infers output types from the inputs, allocates
// the outputs, runs. Used for constant folding and in tests. Missing optional inputs are
// empty Tensors.
StatusOr<std::vector<Tensor>> RunReferenceNode(const Node& node, int64_t opset,
                                               const std::vector<Tensor>& inputs);

}  // namespace collage
