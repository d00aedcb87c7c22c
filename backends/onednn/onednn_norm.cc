// Softmax (opset >= 13: one axis; before: the 2-D coercion), LayerNormalization over the last
// axis with scale and optional bias, and inference BatchNormalization (constant statistics)
// with an optional fused activation, plain and "_blocked".
#include "collage/sdk/op_params.h"
#include "onednn_epilogue.h"
#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

bool OnlyFirstOutput(const Node& node) {
  if (node.outputs.empty() || node.outputs[0] == kNoValue) return false;
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != kNoValue) return false;
  }
  return true;
}

// ---- Softmax ----------------------------------------------------------------------------

// The shape oneDNN sees and its softmax axis.
std::optional<std::pair<Shape, int>> SoftmaxForm(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || !OnlyFirstOutput(node) || !IsFloatValue(graph, node.inputs[0])) {
    return std::nullopt;
  }
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  if (x.empty() || x.size() > 6) return std::nullopt;
  const StatusOr<SoftmaxAxis> axis = ReadSoftmaxAxis(graph, node);
  if (!axis.ok()) return std::nullopt;
  if (!axis->flatten) return std::make_pair(x, static_cast<int>(axis->axis));
  return std::make_pair(Shape{axis->outer, axis->n}, 1);
}

StatusOr<std::unique_ptr<Kernel>> CompileSoftmax(const CompileRequest& request,
                                                 const Match& match) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
  auto form = SoftmaxForm(graph, node);
  if (!form) return Unsupported("Softmax '{}' is not supported", node.name);
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("softmax", [&]() -> Status {
    const memory::desc data = PlainDesc(form->first);
    dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, data, form->second);
    dnnl::softmax_forward::primitive_desc pd(desc, BaseAttr(), Engine());
    KernelBuilder builder(request);
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[0], DNNL_ARG_SRC, data, Layout::Plain()));
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(node.outputs[0], DNNL_ARG_DST, data));
    COLLAGE_ASSIGN_OR_RETURN(kernel, builder.Finish(std::string("softmax ") + pd.impl_info_str(),
                                                    dnnl::softmax_forward(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

// ---- LayerNormalization -----------------------------------------------------------------

bool ConstantVector(const Graph& graph, ValueId v, int64_t n) {
  if (v == kNoValue) return false;
  const Value& value = graph.value(v);
  return value.is_constant() && value.type.dtype == DType::kFloat32 && value.type.num_elements() == n &&
         !value.type.shape.empty() && value.type.shape.back() == n;
}

bool LayerNormOk(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.inputs.size() > 3 || !OnlyFirstOutput(node)) return false;
  if (!IsFloatValue(graph, node.inputs[0])) return false;
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  if (x.size() < 2 || x.size() > 5) return false;
  const int64_t axis = node.attributes.GetInt("axis", -1);
  if (axis != -1 && axis != static_cast<int64_t>(x.size()) - 1) return false;
  const int64_t c = x.back();
  if (!ConstantVector(graph, node.inputs[1], c)) return false;
  return node.inputs.size() < 3 || node.inputs[2] == kNoValue || ConstantVector(graph, node.inputs[2], c);
}

StatusOr<std::unique_ptr<Kernel>> CompileLayerNorm(const CompileRequest& request,
                                                   const Match& match) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
  if (!LayerNormOk(graph, node)) return Unsupported("LayerNormalization '{}' is not supported", node.name);
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("layer_normalization", [&]() -> Status {
    const memory::desc data = PlainDesc(x);
    auto flags = dnnl::normalization_flags::use_scale;
    if (has_bias) flags = flags | dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data,
                                                 node.attributes.GetFloat("epsilon", 1e-5f), flags);
    dnnl::layer_normalization_forward::primitive_desc pd(desc, BaseAttr(), Engine());
    KernelBuilder builder(request);
    const memory::desc vec = PlainDesc({x.back()});
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[0], DNNL_ARG_SRC, data));
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[1], DNNL_ARG_SCALE, vec));
    if (has_bias) COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[2], DNNL_ARG_SHIFT, vec));
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(node.outputs[0], DNNL_ARG_DST, data));
    COLLAGE_ASSIGN_OR_RETURN(kernel, builder.Finish(std::string("layer_normalization ") + pd.impl_info_str(),
                                                    dnnl::layer_normalization_forward(pd),
                                                    pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

// ---- BatchNormalization -----------------------------------------------------------------

bool BatchNormOk(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 5 || !OnlyFirstOutput(node) || !IsFloatValue(graph, node.inputs[0])) return false;
  if (node.attributes.GetInt("training_mode", 0) != 0) return false;
  if (node.attributes.GetInt("spatial", 1) != 1) return false;  // opset < 9 per-element stats
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  if (x.size() < 2 || x.size() > 5) return false;
  for (size_t i = 1; i < 5; ++i) {
    if (!ConstantVector(graph, node.inputs[i], x[1]) || graph.value(node.inputs[i]).type.shape.size() != 1) {
      return false;
    }
  }
  return true;
}

StatusOr<std::unique_ptr<Kernel>> CompileBatchNorm(const CompileRequest& request,
                                                   const Match& match, bool blocked) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
  if (!BatchNormOk(graph, node)) return Unsupported("BatchNormalization '{}' is not supported", node.name);
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("batch_normalization", [&]() -> Status {
    const memory::desc data = ActivationDesc(x, blocked);
    const auto flags = dnnl::normalization_flags::use_global_stats |
                       dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data,
                                                 node.attributes.GetFloat("epsilon", 1e-5f), flags);
    KernelBuilder builder(request);
    COLLAGE_ASSIGN_OR_RETURN(Epilogue epilogue, BuildEpilogue(request, match, data, builder));
    dnnl::primitive_attr attr = BaseAttr();
    attr.set_post_ops(epilogue.ops);
    dnnl::batch_normalization_forward::primitive_desc pd(desc, attr, Engine());
    const memory::desc vec = PlainDesc({x[1]});
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[0], DNNL_ARG_SRC, data));
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[1], DNNL_ARG_SCALE, vec));
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[2], DNNL_ARG_SHIFT, vec));
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[3], DNNL_ARG_MEAN, vec));
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[4], DNNL_ARG_VARIANCE, vec));
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(epilogue.output, DNNL_ARG_DST, data));
    COLLAGE_ASSIGN_OR_RETURN(kernel, builder.Finish(std::string("batch_normalization ") + pd.impl_info_str(),
                                                    dnnl::batch_normalization_forward(pd),
                                                    pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

// oneDNN 2.6's batch normalization takes Relu and LeakyRelu post-ops only (Clip, Sigmoid and
// the others fail to create), in some formats only through its reference implementation (the
// 3-D ncw form): the activation rules are offered where oneDNN has an optimized kernel for
// the match's post-ops.
template <bool kBlocked>
bool FusedActivationRuns(const Match& m) {
  return HasOptimizedImplementation([&m] {
    const Graph& graph = *m.graph;
    const Node& node = MainNode(m);
    dnnl::post_ops ops;
    const std::vector<NodeId> chain = ChainOrder(m);
    for (size_t i = 1; i < chain.size(); ++i) {
      // The pattern made every later node an activation (value() throws otherwise).
      const std::vector<EltwiseStep> steps = ActivationSteps(graph, graph.node(chain[i])).value();
      for (const EltwiseStep& s : steps) ops.append_eltwise(1.0f, s.algorithm, s.alpha, s.beta);
    }
    dnnl::primitive_attr attr = BaseAttr();
    attr.set_post_ops(ops);
    const memory::desc data = ActivationDesc(graph.value(node.inputs[0]).type.shape, kBlocked);
    dnnl::batch_normalization_forward::desc desc(
        dnnl::prop_kind::forward_inference, data, node.attributes.GetFloat("epsilon", 1e-5f),
        dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
            dnnl::normalization_flags::use_shift);
    return dnnl::batch_normalization_forward::primitive_desc(desc, attr, Engine()).impl_info_str();
  });
}

}  // namespace

void AddNormRules(std::vector<RuleEntry>& rules) {
  rules.push_back({Rule("softmax", Op("Softmax")(Any()).If([](const Graph& g, const Node& n) {
                     return SoftmaxForm(g, n).has_value();
                   })).Compiles(CompileSoftmax),
                   false});
  rules.push_back({Rule("layer_norm",
                        Op("LayerNormalization")(Any(), Const(), Optional(Const())).If(LayerNormOk))
                       .Compiles(CompileLayerNorm),
                   false});
  // BatchNormalization alone, and followed by an activation as an eltwise post-op: the
  // pre-activation BN -> Relu of DenseNet's dense layers in one step.
  const Pattern bn = Op("BatchNormalization")(Any(), Const(), Const(), Const(), Const()).If(BatchNormOk);
  const std::vector<std::pair<std::string, Pattern>> shapes = {
      {"batch_norm", bn}, {"batch_norm_act", WithActivation(bn)}};
  for (const auto& [name, pattern] : shapes) {
    const bool fused = name != "batch_norm";
    rules.push_back(
        {Rule(name, pattern)
             .Where(MatchEpilogueOk)
             .Where([fused](const Match& m) { return !fused || FusedActivationRuns<false>(m); })
             .Compiles([](const CompileRequest& r, const Match& m) {
               return CompileBatchNorm(r, m, false);
             }),
         false});
    rules.push_back(
        {Rule(name + "_blocked", pattern)
             .Where(MatchEpilogueOk)
             .Where([](const Match& m) {
               return HasBlockedForm(m.graph->value(MainNode(m).inputs[0]).type.shape);
             })
             .Where([fused](const Match& m) { return !fused || FusedActivationRuns<true>(m); })
             .Compiles([](const CompileRequest& r, const Match& m) {
               return CompileBatchNorm(r, m, true);
             }),
         true});
  }
}

}  // namespace collage::onednn
