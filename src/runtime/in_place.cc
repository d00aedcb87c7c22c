#include "runtime/in_place.h"

#include <array>
#include <string_view>

#include "runtime/memory_planner.h"

namespace collage {

namespace {

const Node* SingleNode(const Graph& graph, const PlacedGroup& group) {
  if (group.nodes.size() != 1) return nullptr;
  const Node& node = graph.node(group.nodes.Nodes().front());
  return node.domain.empty() ? &node : nullptr;
}

bool IsViewOp(std::string_view op_type) {
  constexpr std::array<std::string_view, 5> kViews = {"Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                                      "Identity"};
  for (std::string_view view : kViews) {
    if (op_type == view) return true;
  }
  return false;
}

// Byte offset of each part's block in `whole` (a Concat's output, a Split's input), parts
// joined along `axis`; nullopt unless every block is dense (all dims before the axis are 1)
// and starts at a multiple of kArenaAlignment.
std::optional<std::vector<size_t>> DenseSliceOffsets(const Graph& graph, const Node& node,
                                                     ValueId whole,
                                                     const std::vector<ValueId>& parts) {
  if (whole == kNoValue || parts.empty()) return std::nullopt;
  const TensorType& type = graph.value(whole).type;
  const int64_t rank = static_cast<int64_t>(type.shape.size());
  if (!type.is_static() || rank == 0) return std::nullopt;
  int64_t axis = node.attributes.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  for (int64_t d = 0; d < axis; ++d) {
    if (type.shape[static_cast<size_t>(d)] != 1) return std::nullopt;
  }
  std::vector<size_t> offsets;
  size_t offset = 0;
  for (ValueId part : parts) {
    if (part == kNoValue || offset % kArenaAlignment != 0) return std::nullopt;
    const TensorType& part_type = graph.value(part).type;
    if (part_type.dtype != type.dtype || !part_type.is_static() || part_type.nbytes() == 0) {
      return std::nullopt;
    }
    offsets.push_back(offset);
    offset += part_type.nbytes();
  }
  if (offset != type.nbytes()) return std::nullopt;
  return offsets;
}

}  // namespace

std::optional<ValueId> ViewSource(const Graph& graph, const PlacedGroup& group) {
  const Node* node = SingleNode(graph, group);
  if (node == nullptr || !IsViewOp(node->op_type) || node->inputs.empty() ||
      node->outputs.size() != 1) {
    return std::nullopt;
  }
  const ValueId in = node->inputs[0];
  const ValueId out = node->outputs[0];
  if (in == kNoValue || out == kNoValue || graph.value(in).is_constant()) return std::nullopt;
  const TensorType& from = graph.value(in).type;
  const TensorType& to = graph.value(out).type;
  if (!from.is_static() || !to.is_static() || from.dtype != to.dtype ||
      from.nbytes() != to.nbytes()) {
    return std::nullopt;
  }
  return in;
}

std::optional<std::vector<size_t>> SplitSliceOffsets(const Graph& graph, const PlacedGroup& group) {
  const Node* node = SingleNode(graph, group);
  if (node == nullptr || node->op_type != "Split" || node->inputs.empty()) return std::nullopt;
  return DenseSliceOffsets(graph, *node, node->inputs[0], node->outputs);
}

InPlaceConcats PlanInPlaceConcats(const Graph& graph, const Placement& placement) {
  InPlaceConcats plan;
  // Values computed by a group that runs a kernel, so an output buffer can be chosen for them.
  std::set<ValueId> computed;
  for (size_t g = 0; g < placement.groups.size(); ++g) {
    const PlacedGroup& group = placement.groups[g];
    const Node* node = SingleNode(graph, group);
    if (node != nullptr && node->op_type == "Concat") {
      auto offsets = node->outputs.size() == 1
                         ? DenseSliceOffsets(graph, *node, node->outputs[0], node->inputs)
                         : std::nullopt;
      bool ok = offsets.has_value();
      std::set<ValueId> seen;
      for (size_t i = 0; ok && i < node->inputs.size(); ++i) {
        const ValueId in = node->inputs[i];
        ok = computed.count(in) && !plan.slice_of.count(in) && seen.insert(in).second;
      }
      if (ok) {
        plan.groups.insert(g);
        for (size_t i = 0; i < node->inputs.size(); ++i) {
          plan.slice_of[node->inputs[i]] = ConcatSlice{node->outputs[0], (*offsets)[i]};
        }
        continue;  // its output shares the buffer of its inputs' slices: not a slice itself
      }
    }
    // A view's or an in-place Split's outputs lie in another value's buffer already.
    if (ViewSource(graph, group).has_value() || SplitSliceOffsets(graph, group).has_value()) {
      continue;
    }
    for (NodeId id : group.nodes.Nodes()) {
      for (ValueId out : graph.node(id).outputs) {
        if (out != kNoValue) computed.insert(out);
      }
    }
  }
  return plan;
}

}  // namespace collage
