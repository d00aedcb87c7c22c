// Concat (any axis, negative included, one or more float32 inputs) as oneDNN's concat
// primitive, plain and "_blocked": the blocked variant reads each input and writes the output
// in the format oneDNN's convolutions pick for its shape (ActivationDesc), so that DenseNet's
// dense blocks and SqueezeNet's fire modules stay in that format between convolutions.
#include "onednn_epilogue.h"
#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

// The concat axis in [0, rank), or nullopt when the node is not a Concat oneDNN can run:
// inputs of another dtype, an absent input, an empty tensor (oneDNN has no zero-size
// memory), or a rank past oneDNN's limit.
std::optional<int> ConcatAxis(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.outputs.size() != 1 || !IsFloatValue(graph, node.outputs[0])) {
    return std::nullopt;
  }
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  const int64_t rank = static_cast<int64_t>(y.size());
  if (rank < 1 || rank > DNNL_MAX_NDIMS) return std::nullopt;
  int64_t axis = node.attributes.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  if (NumElements(y) == 0) return std::nullopt;
  for (ValueId in : node.inputs) {
    if (!IsFloatValue(graph, in)) return std::nullopt;
    const Shape& x = graph.value(in).type.shape;
    if (x.size() != y.size() || NumElements(x) == 0) return std::nullopt;
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && x[static_cast<size_t>(d)] != y[static_cast<size_t>(d)]) return std::nullopt;
    }
  }
  return static_cast<int>(axis);
}

// The concat primitive descriptor with every operand in its ActivationDesc(blocked) format.
dnnl::concat::primitive_desc ConcatPrimitive(const Graph& graph, const Node& node, int axis,
                                             bool blocked) {
  std::vector<memory::desc> srcs;
  for (ValueId in : node.inputs) {
    srcs.push_back(ActivationDesc(graph.value(in).type.shape, blocked));
  }
  const memory::desc dst = ActivationDesc(graph.value(node.outputs[0]).type.shape, blocked);
  return dnnl::concat::primitive_desc(dst, axis, srcs, Engine(), BaseAttr());
}

StatusOr<std::unique_ptr<Kernel>> CompileConcat(const CompileRequest& request, const Match& match,
                                                bool blocked) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
  const std::optional<int> axis = ConcatAxis(graph, node);
  if (!axis) return Unsupported("Concat '{}' is not supported", node.name);
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("concat", [&]() -> Status {
    const dnnl::concat::primitive_desc pd = ConcatPrimitive(graph, node, *axis, blocked);
    KernelBuilder builder(request);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[i],
                                                DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i),
                                                pd.src_desc(static_cast<int>(i))));
    }
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(node.outputs[0], DNNL_ARG_DST, pd.dst_desc()));
    COLLAGE_ASSIGN_OR_RETURN(kernel, builder.Finish(std::string("concat ") + pd.impl_info_str(),
                                                    dnnl::concat(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

bool ConcatOk(const Graph& graph, const Node& node) { return ConcatAxis(graph, node).has_value(); }

// The blocked variant is a distinct candidate when the output has a non-plain form (images
// only, as for eltwise_blocked). It takes whatever implementation oneDNN picks: where a
// blocked format splits the channels into blocks that an input does not fill (nChw8c with 12
// channels, an AVX2 machine's format) that is "ref:any", which is not the slow reference
// kernel the name suggests but a JIT reorder of each input into a view of the output.
// Measured at 1 thread on 1x32x28x28 from 12 + 20 channels: ref:any in nChw8c 13 us, the
// copying simple:any in nchw 35 us and in nhwc 14 us (40 + 24 channels: ref:any in nChw16c
// 26 us, simple:any in nChw8c 70 us), and equal to a plain concat element for element.
bool BlockedConcatOk(const Match& m) {
  const Shape& y = m.graph->value(MainNode(m).outputs[0]).type.shape;
  return y.size() >= 4 && HasBlockedForm(y);
}

}  // namespace

void AddConcatRules(std::vector<RuleEntry>& rules) {
  const Pattern concat = Op("Concat").If(ConcatOk);
  rules.push_back({Rule("concat", concat).Compiles([](const CompileRequest& r, const Match& m) {
                     return CompileConcat(r, m, false);
                   }),
                   false});
  rules.push_back({Rule("concat_blocked", concat)
                       .Where(BlockedConcatOk)
                       .Compiles([](const CompileRequest& r, const Match& m) {
                         return CompileConcat(r, m, true);
                       }),
                   true});
}

}  // namespace collage::onednn
