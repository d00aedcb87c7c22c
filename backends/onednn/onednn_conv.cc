// Conv (1-D/2-D/3-D, groups, depthwise, pads, strides, dilations, auto_pad, bias) with fused
// activations and residual adds, in plain and oneDNN-chosen ("_blocked") layouts; in float32,
// and in bf16 where the CPU computes it (the input converted in the kernel, weights once,
// float32 bias and output).
#include "collage/sdk/op_params.h"
#include "onednn_epilogue.h"
#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

bool ConvOk(const Graph& graph, const Node& node) {
  if (node.op_type != "Conv" || node.inputs.size() < 2 || node.outputs.size() != 1) return false;
  const TensorType& x = graph.value(node.inputs[0]).type;
  const Value& w = graph.value(node.inputs[1]);
  const TensorType& y = graph.value(node.outputs[0]).type;
  if (x.dtype != DType::kFloat32 || w.type.dtype != DType::kFloat32 || !w.is_constant()) return false;
  if (x.shape.size() < 3 || x.shape.size() > 5 || w.type.shape.size() != x.shape.size()) return false;
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
    const Value& b = graph.value(node.inputs[2]);
    if (!b.is_constant() || b.type.dtype != DType::kFloat32) return false;
  }
  const StatusOr<ConvParams> params = ReadConvParams(graph, node);
  return params.ok() && params->output_shape() == y.shape &&
         OnednnConvGeometry(params->strides, params->dilations, params->pads_begin,
                            params->pads_end)
             .ok();
}

// The operand descriptors of a Conv node: activations as ActivationDesc(blocked), weights in
// the format oneDNN picks ([G][OCg][ICg][k...] when grouped), bias plain.
struct ConvDescs {
  memory::desc src, weights, bias, dst;
  ConvGeometry geometry;
  // In bf16: the source as the primitive reads it (bf16, the format it picks); `src` stays
  // the float32 form the kernel input arrives in.
  memory::desc computed_src;

  dnnl::convolution_forward::desc OpDesc() const {
    return dnnl::convolution_forward::desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        computed_src.is_zero() ? src : computed_src, weights, bias, dst, geometry.strides,
        geometry.dilates, geometry.pads_l, geometry.pads_r);
  }
};

StatusOr<ConvDescs> DescribeConv(const Graph& graph, const Node& node, bool blocked,
                                 Precision precision = Precision::kFloat32) {
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& w = graph.value(node.inputs[1]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  ConvDescs d;
  COLLAGE_ASSIGN_OR_RETURN(const ConvParams p, ReadConvParams(node, x, w));
  COLLAGE_ASSIGN_OR_RETURN(d.geometry,
                           OnednnConvGeometry(p.strides, p.dilations, p.pads_begin, p.pads_end));
  const int64_t group = p.group;
  memory::dims wdims = ToDims(w);
  if (group > 1) {
    wdims[0] /= group;
    wdims.insert(wdims.begin(), group);
  }
  d.src = ActivationDesc(x, blocked);
  d.dst = ActivationDesc(y, blocked);
  const bool bf16 = precision == Precision::kBfloat16;
  d.weights = memory::desc(wdims, bf16 ? memory::data_type::bf16 : memory::data_type::f32,
                           memory::format_tag::any);
  if (bf16)
    d.computed_src = memory::desc(ToDims(x), memory::data_type::bf16, memory::format_tag::any);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  if (has_bias) d.bias = PlainDesc({y[1]});
  return d;
}

StatusOr<std::unique_ptr<Kernel>> CompileConv(const CompileRequest& request, const Match& match,
                                              bool blocked) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
  if (!ConvOk(graph, node)) return Unsupported("Conv '{}' is not supported", node.name);
  const Value& w = graph.value(node.inputs[1]);
  const bool bf16 = request.precision == Precision::kBfloat16;
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("convolution", [&]() -> Status {
    COLLAGE_ASSIGN_OR_RETURN(ConvDescs d, DescribeConv(graph, node, blocked, request.precision));
    KernelBuilder builder(request);
    COLLAGE_ASSIGN_OR_RETURN(Epilogue epilogue, BuildEpilogue(request, match, d.dst, builder));
    dnnl::primitive_attr attr = BaseAttr();
    attr.set_post_ops(epilogue.ops);
    dnnl::convolution_forward::primitive_desc pd(d.OpDesc(), attr, Engine());
    if (bf16) {
      // The float32 rules decline shapes only a reference implementation runs; in bf16 the
      // same is found here, once the primitive exists.
      if (IsReferenceImplementation(pd.impl_info_str())) {
        return Unsupported(
            "oneDNN runs this convolution in bf16 only by its reference implementation");
      }
      COLLAGE_RETURN_IF_ERROR(builder.BindValueConverted(node.inputs[0], DNNL_ARG_SRC, d.src,
                                                         LayoutOf(d.src), pd.src_desc()));
    } else {
      COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[0], DNNL_ARG_SRC, d.src));
    }
    // The weights' own form is [O][I][k...] (grouped: [G][O/G][I][k...]) over pd's dims.
    const memory::desc weights_plain = PlainDesc(pd.weights_desc().dims());
    COLLAGE_ASSIGN_OR_RETURN(dnnl::memory packed,
                             ConstantMemory(*w.constant, pd.weights_desc(), &weights_plain));
    builder.BindConstant(DNNL_ARG_WEIGHTS, std::move(packed));
    if (!d.bias.is_zero())
      COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[2], DNNL_ARG_BIAS, d.bias));
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(epilogue.output, DNNL_ARG_DST, d.dst));
    COLLAGE_ASSIGN_OR_RETURN(
        kernel, builder.Finish(
                    std::string(bf16 ? "bf16 convolution " : "convolution ") + pd.impl_info_str(),
                    dnnl::convolution_forward(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

Pattern ConvPattern() {
  return Op("Conv")(Any(), Const(), Optional(Const())).If(ConvOk);
}

// The blocked variant is a distinct candidate only when some activation has a non-plain form.
bool BlockedDiffers(const Match& m) {
  const Node& conv = MainNode(m);
  return HasBlockedForm(m.graph->value(conv.inputs[0]).type.shape) ||
         HasBlockedForm(m.graph->value(conv.outputs[0]).type.shape);
}

// The implementation oneDNN picks for a Conv node in the plain or its chosen layout, with a
// binary Add post-op of the output's shape or none, in `precision` ("" when it offers none).
std::string ConvImplementation(const Graph& graph, const Node& node, bool blocked, bool with_add,
                               Precision precision = Precision::kFloat32) {
  try {
    auto d = DescribeConv(graph, node, blocked, precision);
    if (!d.ok()) return "";
    dnnl::primitive_attr attr = BaseAttr();
    if (with_add) {
      dnnl::post_ops ops;
      ops.append_binary(dnnl::algorithm::binary_add, d->dst);
      attr.set_post_ops(ops);
    }
    return dnnl::convolution_forward::primitive_desc(d->OpDesc(), attr, Engine()).impl_info_str();
  } catch (const dnnl::error&) {
    return "";
  }
}

// Declines a Conv oneDNN would run only with its reference implementation (see
// IsReferenceImplementation): a 3-channel stem in the blocked layout, 4 channels per group.
template <bool kBlocked>
bool NotReference(const Match& m) {
  return !IsReferenceImplementation(ConvImplementation(*m.graph, MainNode(m), kBlocked, false));
}

bool HasAdd(const Match& m) {
  return std::any_of(m.op_nodes.begin(), m.op_nodes.end(),
                     [&](NodeId n) { return n >= 0 && m.graph->node(n).op_type == "Add"; });
}

// The bf16 offers: declined where oneDNN 2.6 has only its reference implementation for the
// group in bf16 (a residual Add in the blocked layout, among others), or a gemm-based one with
// an Add post-op (see AddPostOpIsSafe).
template <bool kBlocked>
bool OptimizedInBfloat16(const Match& m) {
  const bool has_add = HasAdd(m);
  const std::string impl =
      ConvImplementation(*m.graph, MainNode(m), kBlocked, has_add, Precision::kBfloat16);
  return !impl.empty() && !IsReferenceImplementation(impl) &&
         !(has_add && impl.find("gemm") != std::string::npos);
}

// oneDNN 2.6's gemm-based convolution gives wrong results in the channels-last format with a
// binary (Add) post-op (found by collage_backend_ops on dilated, grouped and strided cases of
// 1-D to 3-D convolutions). Such groups run as conv_blocked and a separate binary instead.
bool AddPostOpIsSafe(const Match& m) {
  if (!HasAdd(m)) return true;
  return ConvImplementation(*m.graph, MainNode(m), /*blocked=*/true, /*with_add=*/true)
             .find("gemm") == std::string::npos;
}

}  // namespace

void AddConvRules(std::vector<RuleEntry>& rules) {
  const Pattern conv = ConvPattern();
  const std::vector<std::pair<std::string, Pattern>> shapes = {
      {"conv", conv},
      {"conv_act", WithActivation(conv)},
      {"conv_add", WithAdd(conv)},
      {"conv_add_act", WithActivation(WithAdd(conv))},
  };
  // bf16 where the CPU computes it natively, beside float32: the search measures both.
  const std::vector<Precision> precisions =
      ComputesBfloat16() ? std::vector<Precision>{Precision::kFloat32, Precision::kBfloat16}
                         : std::vector<Precision>{Precision::kFloat32};
  for (const auto& entry : shapes) {
    const std::string& name = entry.first;
    rules.push_back({Rule(name, entry.second)
                         .Where(MatchEpilogueOk)
                         .Where(NotReference<false>)
                         .Precisions(precisions)
                         .WhereIn(Precision::kBfloat16, OptimizedInBfloat16<false>)
                         .Compiles([](const CompileRequest& r, const Match& m) {
                           return CompileConv(r, m, false);
                         }),
                     false});
    rules.push_back({Rule(name + "_blocked", entry.second)
                         .Where(MatchEpilogueOk)
                         .Where(BlockedDiffers)
                         .Where(NotReference<true>)
                         .Where(AddPostOpIsSafe)
                         .Precisions(precisions)
                         .WhereIn(Precision::kBfloat16, OptimizedInBfloat16<true>)
                         .Compiles([](const CompileRequest& r, const Match& m) {
                           return CompileConv(r, m, true);
                         }),
                     true});
  }
}

}  // namespace collage::onednn
