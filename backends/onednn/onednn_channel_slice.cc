// Slice and Split on the channel axis (axis 1) as oneDNN reorders, one per output, from a
// sub-memory of the source to the output: plain and "_blocked", so that ShuffleNet's channel
// split stays in the layout oneDNN picks between its convolutions. The groups' output shapes
// (inferred at import) give each part's size; a Slice's constants give its start.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

// One output of the group: channels [offset, offset + size) of the input.
struct ChannelPart {
  ValueId value = kNoValue;
  int64_t offset = 0;
};

std::vector<int64_t> ConstantInts(const Graph& graph, const Node& node, size_t input, bool* ok) {
  if (input >= node.inputs.size() || node.inputs[input] == kNoValue) return {};
  const Value& v = graph.value(node.inputs[input]);
  if (!v.is_constant()) {
    *ok = false;
    return {};
  }
  if (v.constant->dtype() == DType::kInt64) return v.constant->ToVector<int64_t>();
  if (v.constant->dtype() == DType::kInt32) {
    std::vector<int32_t> narrow = v.constant->ToVector<int32_t>();
    return std::vector<int64_t>(narrow.begin(), narrow.end());
  }
  *ok = false;
  return {};
}

// The start of a Slice on axis 1 only, step 1, with ONNX's negative and clamped indices;
// nullopt for any other Slice.
std::optional<int64_t> SliceStart(const Graph& graph, const Node& node) {
  const Shape& in = graph.value(node.inputs[0]).type.shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  bool ok = true;
  std::vector<int64_t> starts, ends, axes, steps;
  if (node.inputs.size() >= 3) {  // Slice-10 and later: constant inputs
    starts = ConstantInts(graph, node, 1, &ok);
    ends = ConstantInts(graph, node, 2, &ok);
    axes = ConstantInts(graph, node, 3, &ok);
    steps = ConstantInts(graph, node, 4, &ok);
  } else {  // Slice-1: attributes
    starts = node.attributes.GetInts("starts");
    ends = node.attributes.GetInts("ends");
    axes = node.attributes.GetInts("axes");
  }
  if (!ok || starts.size() != 1 || ends.size() != 1) return std::nullopt;
  const int64_t axis = axes.empty() ? 0 : axes[0] < 0 ? axes[0] + rank : axes[0];
  if (axes.size() > 1 || axis != 1 || steps.size() > 1 || (!steps.empty() && steps[0] != 1)) {
    return std::nullopt;
  }
  const int64_t dim = in[1];
  auto clamp = [dim](int64_t i) { return std::clamp(i < 0 ? i + dim : i, int64_t{0}, dim); };
  return clamp(starts[0]);
}

// The group's parts (each output the group hands on, with its channel offset), or empty when
// the node is not a channel Slice / Split of a float image oneDNN can cut.
std::vector<ChannelPart> ChannelParts(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || !IsFloatValue(graph, node.inputs[0])) return {};
  const Shape& in = graph.value(node.inputs[0]).type.shape;
  if (in.size() < 2 || in.size() > 5) return {};
  std::vector<ChannelPart> parts;
  int64_t offset = 0;
  if (node.op_type == "Slice") {
    const std::optional<int64_t> start = SliceStart(graph, node);
    if (!start.has_value()) return {};
    offset = *start;
  } else {
    const int64_t axis = node.attributes.GetInt("axis", 0);
    if (axis != 1 && axis != 1 - static_cast<int64_t>(in.size())) return {};
  }
  for (ValueId out : node.outputs) {
    // A Split output nobody reads still takes its channels; with no value its size is unknown.
    if (out == kNoValue) return {};
    const Shape& shape = graph.value(out).type.shape;
    if (shape.size() != in.size() || shape[1] == 0) return {};
    for (size_t d = 0; d < in.size(); ++d) {
      if (d != 1 && shape[d] != in[d]) return {};
    }
    parts.push_back({out, offset});
    offset += shape[1];
  }
  if (offset > in[1] || (node.op_type == "Split" && offset != in[1])) return {};
  return parts;
}

// The cut of `part` from `src` (the whole input's descriptor) and its output's descriptor in
// the same format.
struct Cut {
  memory::desc from, to;
};

std::optional<Cut> CutOf(const Graph& graph, const memory::desc& src, const ChannelPart& part) {
  const Shape& shape = graph.value(part.value).type.shape;
  memory::dims offsets(shape.size(), 0);
  offsets[1] = part.offset;
  // A blocked format refuses a cut across its channel blocks (an empty descriptor).
  const memory::desc from = src.submemory_desc(ToDims(shape), offsets, /*allow_empty=*/true);
  if (from.is_zero()) return std::nullopt;
  return Cut{from, SameFormatAs(src, shape)};
}

// The reorders of the group, one per output the group hands on, each writing its output.
class ChannelSliceKernel : public Kernel {
 public:
  struct Step {
    dnnl::reorder reorder;
    memory::desc from, to, scratchpad;
    size_t output = 0;
  };

  ChannelSliceKernel(std::vector<Step> steps, Layout input_layout,
                     std::vector<Layout> output_layouts)
      : steps_(std::move(steps)) {
    input_layouts_ = {std::move(input_layout)};
    output_layouts_ = std::move(output_layouts);
    for (const Step& s : steps_)
      workspace_bytes_ = std::max(workspace_bytes_, s.scratchpad.get_size());
  }

  Status Run(const KernelBuffers& buffers) const override {
    return Guard("channel slice", [&]() -> Status {
      if (buffers.inputs.size() != 1 || buffers.outputs.size() != steps_.size()) {
        return Internal("channel slice: {} inputs and {} outputs bound, expected 1 and {}",
                        buffers.inputs.size(), buffers.outputs.size(), steps_.size());
      }
      dnnl::stream& stream = ThreadStream();
      void* in = const_cast<void*>(buffers.inputs[0]);
      for (const Step& s : steps_) {
        // The sub-memory descriptor carries the part's offset: it views the whole input.
        std::unordered_map<int, memory> args = {
            {DNNL_ARG_FROM, memory(s.from, Engine(), in)},
            {DNNL_ARG_TO, memory(s.to, Engine(), buffers.outputs[s.output])}};
        if (s.scratchpad.get_size() > 0) {
          if (buffers.workspace == nullptr) return Internal("channel slice: no workspace bound");
          args.emplace(DNNL_ARG_SCRATCHPAD, memory(s.scratchpad, Engine(), buffers.workspace));
        }
        s.reorder.execute(stream, args);
      }
      stream.wait();
      return Status();
    });
  }

 private:
  std::vector<Step> steps_;
};

StatusOr<std::unique_ptr<Kernel>> CompileChannelSlice(const CompileRequest& request,
                                                      const Match& match, bool blocked) {
  const Graph& graph = *request.graph;
  const Node& node = match.root_node();
  const std::vector<ChannelPart> parts = ChannelParts(graph, node);
  if (parts.empty()) return Unsupported("{} '{}' is not a channel cut", node.op_type, node.name);
  if (request.inputs.size() != 1 || request.inputs[0] != node.inputs[0]) {
    return Internal("channel slice: the group must read only its data input");
  }
  const memory::desc src = ActivationDesc(graph.value(node.inputs[0]).type.shape, blocked);
  std::vector<ChannelSliceKernel::Step> steps;
  std::vector<Layout> output_layouts;
  COLLAGE_RETURN_IF_ERROR(Guard("channel slice", [&]() -> Status {
    for (size_t o = 0; o < request.outputs.size(); ++o) {
      auto part = std::find_if(parts.begin(), parts.end(),
                               [&](const ChannelPart& p) { return p.value == request.outputs[o]; });
      if (part == parts.end()) return Internal("channel slice: output {} is not a part", o);
      const std::optional<Cut> cut = CutOf(graph, src, *part);
      if (!cut.has_value())
        return Unsupported("a cut across {}'s channel blocks", LayoutOf(src).name());
      dnnl::reorder::primitive_desc pd(Engine(), cut->from, Engine(), cut->to, BaseAttr());
      if (blocked && IsReferenceImplementation(pd.impl_info_str())) {
        return Unsupported("the cut has only oneDNN's reference reorder");
      }
      steps.push_back({dnnl::reorder(pd), cut->from, cut->to, pd.scratchpad_desc(), o});
      output_layouts.push_back(LayoutOf(cut->to));
    }
    return Status();
  }));
  std::unique_ptr<Kernel> kernel = std::make_unique<ChannelSliceKernel>(
      std::move(steps), LayoutOf(src), std::move(output_layouts));
  return kernel;
}

bool PlainOk(const Match& m) { return !ChannelParts(*m.graph, m.root_node()).empty(); }

// The blocked variant only where it differs from plain and every cut is one oneDNN accepts
// in that format: a blocked format (nChw16c) takes only cuts at whole channel blocks, and
// oneDNN's reorder of the others would be its slow reference one anyway. Channels-last takes
// any cut.
bool BlockedOk(const Match& m) {
  const Graph& graph = *m.graph;
  const Node& node = m.root_node();
  const std::vector<ChannelPart> parts = ChannelParts(graph, node);
  if (parts.empty()) return false;
  const Shape& in = graph.value(node.inputs[0]).type.shape;
  if (!HasBlockedForm(in)) return false;
  const memory::desc src = ActivationDesc(in, true);
  return std::all_of(parts.begin(), parts.end(),
                     [&](const ChannelPart& p) { return CutOf(graph, src, p).has_value(); });
}

}  // namespace

void AddChannelSliceRules(std::vector<RuleEntry>& rules) {
  const Pattern cut = Op({"Slice", "Split"})(Any(), Optional(Const()), Optional(Const()),
                                             Optional(Const()), Optional(Const()));
  rules.push_back({Rule("channel_slice", cut)
                       .Where(PlainOk)
                       .Compiles([](const CompileRequest& r, const Match& m) {
                         return CompileChannelSlice(r, m, false);
                       }),
                   false});
  rules.push_back({Rule("channel_slice_blocked", cut)
                       .Where(BlockedOk)
                       .Compiles([](const CompileRequest& r, const Match& m) {
                         return CompileChannelSlice(r, m, true);
                       }),
                   true});
}

}  // namespace collage::onednn
