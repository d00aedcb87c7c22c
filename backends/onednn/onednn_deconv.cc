// ConvTranspose as oneDNN deconvolution (1-D/2-D/3-D, groups, strides, dilations, pads,
// VALID/SAME auto_pad, bias), plain and "_blocked", with fused activations. output_padding
// and output_shape are refused.
#include "onednn_epilogue.h"
#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

struct DeconvGeometry {
  memory::dims strides, dilates, pads_l, pads_r;
};

StatusOr<DeconvGeometry> DeconvGeometryOf(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.outputs.size() != 1) return Unsupported("inputs");
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Value& w = graph.value(node.inputs[1]);
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  if (x.size() < 3 || x.size() > 5 || w.type.shape.size() != x.size() || y.size() != x.size()) {
    return Unsupported("rank");
  }
  const size_t spatial = x.size() - 2;
  const Attributes& a = node.attributes;
  if (a.Has("output_shape")) return Unsupported("output_shape");
  for (int64_t p : a.GetInts("output_padding")) {
    if (p != 0) return Unsupported("output_padding");
  }
  const int64_t group = a.GetInt("group", 1);
  if (group < 1 || x[1] != w.type.shape[0] || x[1] % group != 0 || y[1] != w.type.shape[1] * group) {
    return Unsupported("channels");
  }
  std::vector<int64_t> kernel = a.GetInts("kernel_shape", Shape(w.type.shape.begin() + 2, w.type.shape.end()));
  std::vector<int64_t> strides = a.GetInts("strides", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> dilations = a.GetInts("dilations", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = a.GetInts("pads", std::vector<int64_t>(2 * spatial, 0));
  const std::string auto_pad = a.GetString("auto_pad", "NOTSET");
  if (kernel != Shape(w.type.shape.begin() + 2, w.type.shape.end()) || strides.size() != spatial ||
      dilations.size() != spatial || pads.size() != 2 * spatial) {
    return Unsupported("attribute sizes");
  }
  DeconvGeometry g;
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t s = strides[d], dil = dilations[d];
    if (s < 1 || dil < 1) return Unsupported("geometry");
    const int64_t dk = (kernel[d] - 1) * dil + 1;
    int64_t pl = 0, pr = 0;
    if (auto_pad == "NOTSET") {
      pl = pads[d];
      pr = pads[d + spatial];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // Output in * stride; the total padding split as the reference does.
      const int64_t total = (x[d + 2] - 1) * s + dk - y[d + 2];
      if (total < 0) return Unsupported("SAME with negative padding");
      pl = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pr = total - pl;
    } else if (auto_pad != "VALID") {
      return Unsupported("auto_pad '{}'", auto_pad);
    }
    if (pl < 0 || pr < 0) return Unsupported("negative pads");
    if ((x[d + 2] - 1) * s + dk - pl - pr != y[d + 2]) return Unsupported("output size mismatch");
    g.strides.push_back(s);
    g.dilates.push_back(dil - 1);
    g.pads_l.push_back(pl);
    g.pads_r.push_back(pr);
  }
  return g;
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

StatusOr<std::unique_ptr<Kernel>> CompileDeconv(const CompileRequest& request, bool blocked) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(request);
  if (!DeconvOk(graph, node)) return Unsupported("ConvTranspose '{}' is not supported", node.name);
  COLLAGE_ASSIGN_OR_RETURN(DeconvGeometry g, DeconvGeometryOf(graph, node));
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Value& w = graph.value(node.inputs[1]);
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  const int64_t group = node.attributes.GetInt("group", 1);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("deconvolution", [&]() -> Status {
    // ONNX weights are [C_in][C_out / group][k...]; oneDNN's logical dims are
    // [group][OC / group][IC / group][k...]: the same bytes seen through strides.
    const Shape& ws = w.type.shape;
    const int64_t icg = ws[0] / group, ocg = ws[1];
    int64_t kernel_size = 1;
    for (size_t d = 2; d < ws.size(); ++d) kernel_size *= ws[d];
    memory::dims dims = {group, ocg, icg};
    memory::dims strides = {icg * ocg * kernel_size, kernel_size, ocg * kernel_size};
    int64_t stride = 1;
    memory::dims kstrides(ws.size() - 2);
    for (size_t d = ws.size(); d-- > 2;) {
      kstrides[d - 2] = stride;
      stride *= ws[d];
    }
    for (size_t d = 2; d < ws.size(); ++d) {
      dims.push_back(ws[d]);
      strides.push_back(kstrides[d - 2]);
    }
    if (group == 1) {  // oneDNN wants no group dim then
      dims.erase(dims.begin());
      strides.erase(strides.begin());
    }
    const memory::desc weights_plain(dims, memory::data_type::f32, strides);
    const memory::desc weights(dims, memory::data_type::f32, memory::format_tag::any);
    const memory::desc src = ActivationDesc(x, blocked);
    const memory::desc dst = ActivationDesc(y, blocked);
    const memory::desc bias = has_bias ? PlainDesc({y[1]}) : memory::desc();
    dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::deconvolution_direct, src, weights,
                                           bias, dst, g.strides, g.dilates, g.pads_l, g.pads_r);
    KernelBuilder builder(request);
    COLLAGE_ASSIGN_OR_RETURN(Epilogue epilogue, BuildEpilogue(request, dst, builder));
    dnnl::primitive_attr attr = BaseAttr();
    attr.set_post_ops(epilogue.ops);
    dnnl::deconvolution_forward::primitive_desc pd(desc, attr, Engine());
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[0], DNNL_ARG_SRC, src));
    COLLAGE_ASSIGN_OR_RETURN(dnnl::memory packed, ConstantMemory(*w.constant, pd.weights_desc(), &weights_plain));
    builder.BindConstant(DNNL_ARG_WEIGHTS, std::move(packed));
    if (has_bias) COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[2], DNNL_ARG_BIAS, bias));
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(epilogue.output, DNNL_ARG_DST, dst));
    COLLAGE_ASSIGN_OR_RETURN(kernel, builder.Finish(std::string("deconvolution ") + pd.impl_info_str(),
                                                    dnnl::deconvolution_forward(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

bool BlockedDiffers(const Match& m) {
  const Node& node = m.graph->node(*std::min_element(m.op_nodes.begin(), m.op_nodes.end()));
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
    rules.push_back({Rule(entry.first, entry.second).Where(MatchEpilogueOk),
                     [](const CompileRequest& r) { return CompileDeconv(r, false); }});
    rules.push_back({Rule(entry.first + "_blocked", entry.second).Where(MatchEpilogueOk).Where(BlockedDiffers),
                     [](const CompileRequest& r) { return CompileDeconv(r, true); }});
  }
}

}  // namespace collage::onednn
