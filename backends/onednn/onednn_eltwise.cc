// Standalone elementwise ops: unary activations as oneDNN eltwise, and Add/Sub/Mul/Div/Max/Min
// with numpy broadcasting as oneDNN binary (which broadcasts its second source only: a
// commuting op whose first operand broadcasts is swapped, others are refused), each followed
// by fused activations. Plain and "_blocked" (same-shape operands) variants.
#include "onednn_epilogue.h"
#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

bool SingleStepActivation(const Graph& graph, const Node& node) {
  if (!IsActivation(graph, node)) return false;
  return ActivationSteps(graph, node)->size() == 1;
}

StatusOr<std::unique_ptr<Kernel>> CompileEltwise(const CompileRequest& request, const Match& match,
                                                 bool blocked) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
  if (!SingleStepActivation(graph, node)) return Unsupported("{} '{}' is not supported", node.op_type, node.name);
  const EltwiseStep step = ActivationSteps(graph, node)->front();
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("eltwise", [&]() -> Status {
    const memory::desc data = ActivationDesc(x, blocked);
    dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, step.algorithm, data,
                                     step.alpha, step.beta);
    dnnl::eltwise_forward::primitive_desc pd(desc, BaseAttr(), Engine());
    KernelBuilder builder(request);
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[0], DNNL_ARG_SRC, data));
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(node.outputs[0], DNNL_ARG_DST, data));
    COLLAGE_ASSIGN_OR_RETURN(kernel, builder.Finish(std::string("eltwise ") + pd.impl_info_str(),
                                                    dnnl::eltwise_forward(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

bool Commutes(const std::string& op) { return op == "Add" || op == "Mul" || op == "Max" || op == "Min"; }

// Operand order for oneDNN (src0 has the output's shape); nullopt when neither order works.
std::optional<std::pair<ValueId, ValueId>> BinaryOperands(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1 || !BinaryAlgorithm(node.op_type)) {
    return std::nullopt;
  }
  for (ValueId v : {node.inputs[0], node.inputs[1], node.outputs[0]}) {
    if (!IsFloatValue(graph, v)) return std::nullopt;
  }
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  if (y.empty() || y.size() > 6) return std::nullopt;
  if (graph.value(node.inputs[0]).type.shape == y) return std::make_pair(node.inputs[0], node.inputs[1]);
  if (Commutes(node.op_type) && graph.value(node.inputs[1]).type.shape == y) {
    return std::make_pair(node.inputs[1], node.inputs[0]);
  }
  return std::nullopt;
}

StatusOr<std::unique_ptr<Kernel>> CompileBinary(const CompileRequest& request, const Match& match,
                                                bool blocked) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
  auto operands = BinaryOperands(graph, node);
  if (!operands) return Unsupported("{} '{}' is not supported", node.op_type, node.name);
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  const Shape& s1 = graph.value(operands->second).type.shape;
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("binary", [&]() -> Status {
    const memory::desc dst = ActivationDesc(y, blocked);
    const memory::desc src1 = s1 == y ? dst : PlainDesc(PadShape(s1, y.size()));
    dnnl::binary::desc desc(*BinaryAlgorithm(node.op_type), dst, src1, dst);
    KernelBuilder builder(request);
    COLLAGE_ASSIGN_OR_RETURN(Epilogue epilogue, BuildEpilogue(request, match, dst, builder));
    dnnl::primitive_attr attr = BaseAttr();
    attr.set_post_ops(epilogue.ops);
    dnnl::binary::primitive_desc pd(desc, attr, Engine());
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(operands->first, DNNL_ARG_SRC_0, dst));
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(operands->second, DNNL_ARG_SRC_1, src1));
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(epilogue.output, DNNL_ARG_DST, dst));
    COLLAGE_ASSIGN_OR_RETURN(kernel, builder.Finish(std::string("binary ") + pd.impl_info_str(),
                                                    dnnl::binary(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

// One value on both sides (x + x, as two branches pooling the same input the same way become
// once their duplicate is removed) binds the same buffer to both sources.
bool BinaryOk(const Graph& graph, const Node& node) {
  return BinaryOperands(graph, node).has_value();
}

// Elementwise ops take the convolutions' format only for 4-D and 5-D tensors: a 3-D tensor
// is more often a sequence (BERT's [1, 128, 768]) than a 1-D image, and its "channels-last"
// form would transpose it for nothing.
bool IsImageWithBlockedForm(const Shape& shape) { return shape.size() >= 4 && HasBlockedForm(shape); }

// Binaries with both operands of the output's shape, or one broadcast (a squeeze-and-
// excitation scale [N,C,1,1], a per-channel bias, an image's per-channel mean [3,1,1]) where
// oneDNN has an optimized implementation for that pair of formats: its reference one would be
// far slower than running the op elsewhere (an image normalisation x - mean on 1x3x320x320
// took 7.9 ms in it, where native takes tens of microseconds).
bool BinaryHasOptimizedImplementation(const Match& m, bool blocked) {
  const Graph& graph = *m.graph;
  const Node& node = MainNode(m);
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  auto operands = BinaryOperands(graph, node);
  if (!operands) return false;
  const Shape& s1 = graph.value(operands->second).type.shape;
  if (s1 == y) return true;
  return HasOptimizedImplementation([&] {
    const memory::desc dst = ActivationDesc(y, blocked);
    dnnl::binary::desc desc(*BinaryAlgorithm(node.op_type), dst, PlainDesc(PadShape(s1, y.size())),
                            dst);
    return dnnl::binary::primitive_desc(desc, BaseAttr(), Engine()).impl_info_str();
  });
}

bool BinaryPlainOk(const Match& m) { return BinaryHasOptimizedImplementation(m, false); }

// Blocked binaries: images only (IsImageWithBlockedForm), with an optimized implementation.
bool BinaryBlockedOk(const Match& m) {
  const Shape& y = m.graph->value(MainNode(m).outputs[0]).type.shape;
  return IsImageWithBlockedForm(y) && BinaryHasOptimizedImplementation(m, true);
}

}  // namespace

void AddEltwiseRules(std::vector<RuleEntry>& rules) {
  auto single = [](const Graph& graph, const Node& node) { return SingleStepActivation(graph, node); };
  std::vector<Pattern> alternatives = {Op("Clip")(Any(), Optional(Const()), Optional(Const())).If(single)};
  for (const std::string& op : UnaryActivationOps()) alternatives.push_back(Op(op)(Any()).If(single));
  const Pattern eltwise = Alt(alternatives);
  rules.push_back({Rule("eltwise", eltwise).Compiles([](const CompileRequest& r, const Match& m) {
                     return CompileEltwise(r, m, false);
                   }),
                   false});
  rules.push_back(
      {Rule("eltwise_blocked", eltwise)
           .Where([](const Match& m) {
             return IsImageWithBlockedForm(m.graph->value(m.root_node().inputs[0]).type.shape);
           })
           .Compiles(
               [](const CompileRequest& r, const Match& m) { return CompileEltwise(r, m, true); }),
       true});

  auto ok = [](const Graph& graph, const Node& node) { return BinaryOk(graph, node); };
  const Pattern binary = Op({"Add", "Sub", "Mul", "Div", "Max", "Min"})(Any(), Any()).If(ok);
  const std::vector<std::pair<std::string, Pattern>> shapes = {
      {"binary", binary}, {"binary_act", WithActivation(binary)}};
  for (const auto& entry : shapes) {
    rules.push_back({Rule(entry.first, entry.second)
                         .Where(MatchEpilogueOk)
                         .Where(BinaryPlainOk)
                         .Compiles([](const CompileRequest& r, const Match& m) {
                           return CompileBinary(r, m, false);
                         }),
                     false});
    rules.push_back({Rule(entry.first + "_blocked", entry.second)
                         .Where(MatchEpilogueOk)
                         .Where(BinaryBlockedOk)
                         .Compiles([](const CompileRequest& r, const Match& m) {
                           return CompileBinary(r, m, true);
                         }),
                     true});
  }
}

}  // namespace collage::onednn
