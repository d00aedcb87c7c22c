// MaxPool (no Indices output), AveragePool (count_include_pad), GlobalAveragePool and
// GlobalMaxPool as oneDNN pooling, plain and "_blocked". ceil_mode becomes a larger right
// padding, which oneDNN's max and exclude-padding average treat as ONNX does; an
// include-padding average whose window would reach past the real padding is refused.
#include "onednn_epilogue.h"
#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

struct PoolGeometry {
  memory::dims kernel, strides, dilates, pads_l, pads_r;
  dnnl::algorithm algorithm;
};

StatusOr<PoolGeometry> PoolGeometryOf(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.empty() || node.outputs[0] == kNoValue) {
    return Unsupported("pooling takes one input");
  }
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != kNoValue) return Unsupported("MaxPool Indices output");
  }
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  if (x.size() < 3 || x.size() > 5 || y.size() != x.size()) return Unsupported("rank");
  const size_t spatial = x.size() - 2;
  PoolGeometry g;
  const std::string& op = node.op_type;
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    g.algorithm = op == "GlobalMaxPool" ? dnnl::algorithm::pooling_max
                                        : dnnl::algorithm::pooling_avg_exclude_padding;
    for (size_t d = 0; d < spatial; ++d) {
      g.kernel.push_back(x[d + 2]);
      g.strides.push_back(1);
      g.dilates.push_back(0);
      g.pads_l.push_back(0);
      g.pads_r.push_back(0);
    }
    return g;
  }
  const Attributes& a = node.attributes;
  const bool max = op == "MaxPool";
  if (!max && op != "AveragePool") return Unsupported("op {}", op);
  const bool include_pad = !max && a.GetInt("count_include_pad", 0) != 0;
  g.algorithm = max ? dnnl::algorithm::pooling_max
                    : include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                  : dnnl::algorithm::pooling_avg_exclude_padding;
  std::vector<int64_t> kernel = a.GetInts("kernel_shape");
  std::vector<int64_t> strides = a.GetInts("strides", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> dilations = a.GetInts("dilations", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = a.GetInts("pads", std::vector<int64_t>(2 * spatial, 0));
  const std::string auto_pad = a.GetString("auto_pad", "NOTSET");
  const bool ceil_mode = a.GetInt("ceil_mode", 0) != 0;
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial) {
    return Unsupported("attribute sizes");
  }
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t k = kernel[d], s = strides[d], dil = dilations[d];
    if (k < 1 || s < 1 || dil < 1) return Unsupported("non-positive geometry");
    if (!max && dil != 1) return Unsupported("AveragePool dilations");
    const int64_t dk = (k - 1) * dil + 1;
    int64_t pl = 0, pr = 0;
    if (auto_pad == "NOTSET") {
      pl = pads[d];
      pr = pads[d + spatial];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total = std::max<int64_t>(0, (y[d + 2] - 1) * s + dk - x[d + 2]);
      pl = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pr = total - pl;
    } else if (auto_pad != "VALID") {
      return Unsupported("auto_pad '{}'", auto_pad);
    }
    if (pl < 0 || pr < 0) return Unsupported("negative pads");
    // The right padding oneDNN needs to produce y's size (ceil_mode adds to it).
    const int64_t needed = (y[d + 2] - 1) * s + dk - x[d + 2] - pl;
    if (needed > pr) {
      if (!ceil_mode || auto_pad != "NOTSET" || include_pad) return Unsupported("ceil_mode form");
      pr = needed;
    } else if ((x[d + 2] + pl + pr - dk) / s + 1 != y[d + 2]) {
      return Unsupported("output size mismatch");
    }
    // A window wholly in the padding has no ONNX value oneDNN would reproduce.
    if (pl >= dk || pr >= dk) return Unsupported("padding as large as the window");
    g.kernel.push_back(k);
    g.strides.push_back(s);
    g.dilates.push_back(dil - 1);
    g.pads_l.push_back(pl);
    g.pads_r.push_back(pr);
  }
  return g;
}

bool PoolOk(const Graph& graph, const Node& node) {
  return IsFloatValue(graph, node.inputs.empty() ? kNoValue : node.inputs[0]) &&
         PoolGeometryOf(graph, node).ok();
}

StatusOr<std::unique_ptr<Kernel>> CompilePool(const CompileRequest& request, bool blocked) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(request);
  if (!PoolOk(graph, node)) return Unsupported("{} '{}' is not supported", node.op_type, node.name);
  COLLAGE_ASSIGN_OR_RETURN(PoolGeometry g, PoolGeometryOf(graph, node));
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("pooling", [&]() -> Status {
    const memory::desc src = ActivationDesc(x, blocked);
    const memory::desc dst = SameFormatAs(src, y);
    dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, g.algorithm, src, dst,
                                        g.strides, g.kernel, g.dilates, g.pads_l, g.pads_r);
    KernelBuilder builder(request);
    COLLAGE_ASSIGN_OR_RETURN(Epilogue epilogue, BuildEpilogue(request, dst, builder));
    dnnl::primitive_attr attr = BaseAttr();
    attr.set_post_ops(epilogue.ops);
    dnnl::pooling_v2_forward::primitive_desc pd(desc, attr, Engine());
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[0], DNNL_ARG_SRC, src));
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(epilogue.output, DNNL_ARG_DST, dst));
    COLLAGE_ASSIGN_OR_RETURN(kernel, builder.Finish(std::string("pooling ") + pd.impl_info_str(),
                                                    dnnl::pooling_v2_forward(pd),
                                                    pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

bool BlockedDiffers(const Match& m) {
  return HasBlockedForm(m.graph->value(m.root_node().inputs[0]).type.shape);
}

}  // namespace

void AddPoolingRules(std::vector<RuleEntry>& rules) {
  auto ok = [](const Graph& graph, const Node& node) { return PoolOk(graph, node); };
  const std::vector<std::pair<std::string, Pattern>> shapes = {
      {"max_pool", Op("MaxPool")(Any()).If(ok)},
      {"avg_pool", Op("AveragePool")(Any()).If(ok)},
      {"global_pool", Op({"GlobalAveragePool", "GlobalMaxPool"})(Any()).If(ok)},
  };
  for (const auto& entry : shapes) {
    rules.push_back({Rule(entry.first, entry.second),
                     [](const CompileRequest& r) { return CompilePool(r, false); }});
    rules.push_back({Rule(entry.first + "_blocked", entry.second).Where(BlockedDiffers),
                     [](const CompileRequest& r) { return CompilePool(r, true); }});
  }
}

}  // namespace collage::onednn
