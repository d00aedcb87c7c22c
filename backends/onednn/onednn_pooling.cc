// MaxPool (no Indices output), AveragePool (count_include_pad), GlobalAveragePool and
// GlobalMaxPool as oneDNN pooling, plain and "_blocked". ceil_mode becomes a larger right
// padding, which oneDNN's max and exclude-padding average treat as ONNX does; an
// include-padding average whose window would reach past the real padding is refused.
#include "collage/sdk/op_params.h"
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
  if (x.size() < 3 || x.size() > 5) return Unsupported("rank");
  COLLAGE_ASSIGN_OR_RETURN(const PoolParams p, ReadPoolParams(graph, node));
  if (p.output_shape() != graph.value(node.outputs[0]).type.shape) {
    return Unsupported("output size mismatch");
  }
  PoolGeometry g;
  g.algorithm = p.is_max()              ? dnnl::algorithm::pooling_max
                : p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                      : dnnl::algorithm::pooling_avg_exclude_padding;
  for (size_t d = 0; d < p.spatial_rank; ++d) {
    if (p.kind == PoolKind::kAverage && p.dilations[d] != 1) {
      return Unsupported("AveragePool dilations");
    }
    const int64_t pl = p.pads_begin[d];
    // oneDNN's output size comes from its padding: the end padding the last window reaches,
    // which ceil_mode can put past the real one. Max and the exclude-padding average treat
    // that extra padding as ONNX does; the include-padding average would count it.
    const int64_t pr = std::max(p.pads_end[d], p.reached_pad_end(d));
    if (pr > p.pads_end[d] && p.count_include_pad) return Unsupported("ceil_mode form");
    // A window wholly in the padding has no ONNX value oneDNN would reproduce.
    const int64_t dk = p.dilated_kernel(d);
    if (pl >= dk || pr >= dk) return Unsupported("padding as large as the window");
    g.kernel.push_back(p.kernel[d]);
    g.strides.push_back(p.strides[d]);
    g.dilates.push_back(p.dilations[d] - 1);
    g.pads_l.push_back(pl);
    g.pads_r.push_back(pr);
  }
  return g;
}

bool PoolOk(const Graph& graph, const Node& node) {
  return IsFloatValue(graph, node.inputs.empty() ? kNoValue : node.inputs[0]) &&
         PoolGeometryOf(graph, node).ok();
}

StatusOr<std::unique_ptr<Kernel>> CompilePool(const CompileRequest& request, const Match& match,
                                              bool blocked) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
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
    COLLAGE_ASSIGN_OR_RETURN(Epilogue epilogue, BuildEpilogue(request, match, dst, builder));
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
    rules.push_back(
        {Rule(entry.first, entry.second).Compiles([](const CompileRequest& r, const Match& m) {
           return CompilePool(r, m, false);
         }),
         false});
    rules.push_back({Rule(entry.first + "_blocked", entry.second)
                         .Where(BlockedDiffers)
                         .Compiles([](const CompileRequest& r, const Match& m) {
                           return CompilePool(r, m, true);
                         }),
                     true});
  }
}

}  // namespace collage::onednn
