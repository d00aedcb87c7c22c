// Elementwise ops as oneDNN eltwise steps, the epilogue (post-ops) fused after a primitive,
// and KernelBuilder, which binds a group's values to a primitive's arguments.
#pragma once

#include <optional>
#include <vector>

#include "onednn_util.h"

namespace collage::onednn {

struct EltwiseStep {
  dnnl::algorithm algorithm;
  float alpha = 0.0f;
  float beta = 0.0f;
};

// The eltwise steps computing `node` (Relu, Clip with constant bounds, Sigmoid, ...);
// nullopt when the node is not one oneDNN computes exactly as ONNX defines it.
std::optional<std::vector<EltwiseStep>> ActivationSteps(const Graph& graph, const Node& node);
// ActivationSteps(...) exists and the node is float32: a rule predicate.
bool IsActivation(const Graph& graph, const Node& node);
// The ONNX op types ActivationSteps knows (Clip aside, all unary).
const std::vector<std::string>& UnaryActivationOps();

// Binary op type → oneDNN algorithm; nullopt for others.
std::optional<dnnl::algorithm> BinaryAlgorithm(const std::string& op_type);

// Binds group values to primitive arguments and collects the kernel's layouts.
class KernelBuilder {
 public:
  explicit KernelBuilder(const CompileRequest& request);
  // A value read by the group: a kernel input in `desc`'s layout, or a constant.
  Status BindValue(ValueId value, int arg, const dnnl::memory::desc& desc);
  // The same with the layout given: `desc` views a plain tensor differently (a transposed
  // Gemm operand as a strided matrix).
  Status BindValue(ValueId value, int arg, const dnnl::memory::desc& desc, const Layout& layout);
  // A float32 value the primitive reads in the element type of `computed` (bf16), which has
  // `desc`'s dims and a format of the primitive's choosing: a constant is converted once,
  // here; a kernel input (in `desc`'s form, `layout`) at every run, into the workspace.
  Status BindValueConverted(ValueId value, int arg, const dnnl::memory::desc& desc,
                            const Layout& layout, const dnnl::memory::desc& computed);
  // A constant already in the primitive's format.
  void BindConstant(int arg, dnnl::memory memory);
  // The group's one output.
  Status BindOutput(ValueId value, int arg, const dnnl::memory::desc& desc);
  StatusOr<std::unique_ptr<Kernel>> Finish(const std::string& what, dnnl::primitive primitive,
                                           const dnnl::memory::desc& scratchpad);

 private:
  const CompileRequest& request_;
  std::vector<ArgBinding> args_;
  std::vector<std::optional<Layout>> input_layouts_;
  std::optional<Layout> output_layout_;
};

// The match's nodes after its main op (ChainOrder), as post-ops on a primitive whose dst is
// `dst_desc`: activations (a SiLU's Sigmoid and Mul as one swish step, a HardSigmoid and Mul
// of the same value as one hardswish step, GELU's five ops as
// one gelu_erf step) and binary ops with
// another operand (a kernel input or a constant). Other operands of the dst's shape use
// `dst_desc`'s format (a residual add reads what a blocked producer wrote); broadcast ones are
// row-major.
struct Epilogue {
  dnnl::post_ops ops;
  ValueId output = kNoValue;  // the value the last node produces
};
StatusOr<Epilogue> BuildEpilogue(const CompileRequest& request, const Match& match,
                                 const dnnl::memory::desc& dst_desc, KernelBuilder& builder);
// Rule-side check of the same on a chain (ChainOrder): every node after the first is an activation
// or a binary op whose other operand broadcasts to the chain value without changing its shape, and
// which reads the chain value as its first operand unless it commutes.
bool EpilogueSupported(const Graph& graph, const std::vector<NodeId>& chain);

}  // namespace collage::onednn
