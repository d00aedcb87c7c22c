// ConvTranspose as oneDNN deconvolution (1-D/2-D/3-D, groups, strides, dilations, pads,
// VALID/SAME auto_pad, output_padding, output_shape, bias), plain and "_blocked", with fused
// activations. Forms that need negative padding are refused.
#include "collage/sdk/op_params.h"
#include "onednn_epilogue.h"
#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

// A ConvTranspose's geometry (ReadConvTransposeParams) as oneDNN's deconvolution, whose
// output is (in - 1) * stride + dilated kernel - pads: output_padding (and an output_shape
// beyond the scatter) is so much less end padding, refused where that would be negative.
StatusOr<ConvGeometry> DeconvGeometryOf(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.outputs.size() != 1) return Unsupported("inputs");
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  if (x.size() < 3 || x.size() > 5) return Unsupported("rank");
  COLLAGE_ASSIGN_OR_RETURN(const ConvTransposeParams p, ReadConvTransposeParams(graph, node));
  if (p.output_shape() != graph.value(node.outputs[0]).type.shape) {
    return Unsupported("output size mismatch");
  }
  std::vector<int64_t> pads_end = p.pads_end;
  for (size_t d = 0; d < p.spatial_rank; ++d) pads_end[d] -= p.output_padding[d];
  return OnednnConvGeometry(p.strides, p.dilations, p.pads_begin, pads_end);
}

bool DeconvOk(const Graph& graph, const Node& node) {
  if (node.op_type != "ConvTranspose" || node.inputs.size() < 2) return false;
  if (!IsFloatValue(graph, node.inputs[0]) || !IsFloatValue(graph, node.inputs[1]) ||
      !graph.value(node.inputs[1]).is_constant()) {
    return false;
  }
  if (node.inputs.size() > 2 && node.inputs[2] != kNoValue &&
      (!graph.value(node.inputs[2]).is_constant() || !IsFloatValue(graph, node.inputs[2]))) {
    return false;
  }
  return DeconvGeometryOf(graph, node).ok();
}

// The operand descriptors of a ConvTranspose node; weights_plain is the ONNX weight tensor
// seen through oneDNN's dims.
struct DeconvDescs {
  memory::desc src, weights, weights_plain, bias, dst;
  ConvGeometry geometry;

  dnnl::deconvolution_forward::desc OpDesc() const {
    return dnnl::deconvolution_forward::desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src, weights,
        bias, dst, geometry.strides, geometry.dilates, geometry.pads_l, geometry.pads_r);
  }
};

StatusOr<DeconvDescs> DescribeDeconv(const Graph& graph, const Node& node, bool blocked) {
  DeconvDescs d;
  COLLAGE_ASSIGN_OR_RETURN(d.geometry, DeconvGeometryOf(graph, node));
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& ws = graph.value(node.inputs[1]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  COLLAGE_ASSIGN_OR_RETURN(const ConvTransposeParams p, ReadConvTransposeParams(graph, node));
  const int64_t group = p.group;
  // ONNX weights are [C_in][C_out / group][k...]; oneDNN's logical dims are
  // [group][OC / group][IC / group][k...]: the same bytes seen through strides.
  const int64_t icg = ws[0] / group, ocg = ws[1];
  int64_t kernel_size = 1;
  for (size_t k = 2; k < ws.size(); ++k) kernel_size *= ws[k];
  memory::dims dims = {group, ocg, icg};
  memory::dims strides = {icg * ocg * kernel_size, kernel_size, ocg * kernel_size};
  int64_t stride = 1;
  memory::dims kstrides(ws.size() - 2);
  for (size_t k = ws.size(); k-- > 2;) {
    kstrides[k - 2] = stride;
    stride *= ws[k];
  }
  for (size_t k = 2; k < ws.size(); ++k) {
    dims.push_back(ws[k]);
    strides.push_back(kstrides[k - 2]);
  }
  if (group == 1) {  // oneDNN wants no group dim then
    dims.erase(dims.begin());
    strides.erase(strides.begin());
  }
  d.weights_plain = memory::desc(dims, memory::data_type::f32, strides);
  d.weights = memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
  d.src = ActivationDesc(x, blocked);
  d.dst = ActivationDesc(y, blocked);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  if (has_bias) d.bias = PlainDesc({y[1]});
  return d;
}

StatusOr<std::unique_ptr<Kernel>> CompileDeconv(const CompileRequest& request, const Match& match,
                                                bool blocked) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
  if (!DeconvOk(graph, node)) return Unsupported("ConvTranspose '{}' is not supported", node.name);
  const Value& w = graph.value(node.inputs[1]);
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("deconvolution", [&]() -> Status {
    COLLAGE_ASSIGN_OR_RETURN(DeconvDescs d, DescribeDeconv(graph, node, blocked));
    KernelBuilder builder(request);
    COLLAGE_ASSIGN_OR_RETURN(Epilogue epilogue, BuildEpilogue(request, match, d.dst, builder));
    dnnl::primitive_attr attr = BaseAttr();
    attr.set_post_ops(epilogue.ops);
    dnnl::deconvolution_forward::primitive_desc pd(d.OpDesc(), attr, Engine());
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[0], DNNL_ARG_SRC, d.src));
    COLLAGE_ASSIGN_OR_RETURN(dnnl::memory packed,
                             ConstantMemory(*w.constant, pd.weights_desc(), &d.weights_plain));
    builder.BindConstant(DNNL_ARG_WEIGHTS, std::move(packed));
    if (!d.bias.is_zero()) COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[2], DNNL_ARG_BIAS, d.bias));
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(epilogue.output, DNNL_ARG_DST, d.dst));
    COLLAGE_ASSIGN_OR_RETURN(kernel, builder.Finish(std::string("deconvolution ") + pd.impl_info_str(),
                                                    dnnl::deconvolution_forward(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

// Declines a ConvTranspose oneDNN would run only with its reference implementation (see
// IsReferenceImplementation; DCGAN's last layer to 3 channels, for one).
template <bool kBlocked>
bool NotReference(const Match& m) {
  const Node& node = MainNode(m);
  try {
    auto d = DescribeDeconv(*m.graph, node, kBlocked);
    if (!d.ok()) return false;
    const dnnl::deconvolution_forward::primitive_desc pd(d->OpDesc(), BaseAttr(), Engine());
    return !IsReferenceImplementation(pd.impl_info_str());
  } catch (const dnnl::error&) {
    return false;
  }
}

bool BlockedDiffers(const Match& m) {
  const Node& node = MainNode(m);
  return HasBlockedForm(m.graph->value(node.inputs[0]).type.shape) ||
         HasBlockedForm(m.graph->value(node.outputs[0]).type.shape);
}

}  // namespace

void AddDeconvRules(std::vector<RuleEntry>& rules) {
  auto ok = [](const Graph& graph, const Node& node) { return DeconvOk(graph, node); };
  const Pattern deconv = Op("ConvTranspose")(Any(), Const(), Optional(Const())).If(ok);
  const std::vector<std::pair<std::string, Pattern>> shapes = {
      {"conv_transpose", deconv}, {"conv_transpose_act", WithActivation(deconv)}};
  for (const auto& entry : shapes) {
    rules.push_back({Rule(entry.first, entry.second)
                         .Where(MatchEpilogueOk)
                         .Where(NotReference<false>)
                         .Compiles([](const CompileRequest& r, const Match& m) {
                           return CompileDeconv(r, m, false);
                         }),
                     false});
    rules.push_back({Rule(entry.first + "_blocked", entry.second)
                         .Where(MatchEpilogueOk)
                         .Where(BlockedDiffers)
                         .Where(NotReference<true>)
                         .Compiles([](const CompileRequest& r, const Match& m) {
                           return CompileDeconv(r, m, true);
                         }),
                     true});
  }
}

}  // namespace collage::onednn
