#include "collage/sdk/index_bounds.h"

#include <fmt/format.h>

#include "collage/sdk/errors.h"

namespace collage {

namespace {

int64_t NormalizedAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

}  // namespace

std::vector<IndexAxis> IndexedAxes(const Graph& graph, const Node& node, size_t* index_input) {
  const std::string& op = node.op_type;
  if (!node.domain.empty() && node.domain != "ai.onnx") return {};
  const bool by_axis =
      op == "Gather" || op == "GatherElements" || op == "ScatterElements" || op == "Scatter";
  const bool by_tuple = op == "GatherND" || op == "ScatterND";
  if ((!by_axis && !by_tuple) || node.inputs.size() < 2 || node.inputs[1] == kNoValue) return {};
  *index_input = 1;
  const Shape& data = graph.value(node.inputs[0]).type.shape;
  if (by_axis) {
    const int64_t axis = NormalizedAxis(node.attributes.GetInt("axis", 0), data.size());
    if (axis < 0 || axis >= static_cast<int64_t>(data.size())) return {};
    return {IndexAxis{data[static_cast<size_t>(axis)], -1}};
  }
  // GatherND / ScatterND: the last dim of the indices addresses the data's dims after the
  // batch dims, one component each.
  const Shape& indices = graph.value(node.inputs[1]).type.shape;
  const int64_t batch = node.attributes.GetInt("batch_dims", 0);
  if (indices.empty() || batch < 0) return {};
  const int64_t depth = indices.back();
  if (depth < 0 || batch + depth > static_cast<int64_t>(data.size())) return {};
  std::vector<IndexAxis> axes;
  for (int64_t k = 0; k < depth; ++k) {
    axes.push_back({data[static_cast<size_t>(batch + k)], static_cast<int>(k)});
  }
  return axes;
}

Status CheckIndexValues(const Tensor& indices, const std::vector<IndexAxis>& axes) {
  if (axes.empty()) return Status();
  if (indices.dtype() != DType::kInt64 && indices.dtype() != DType::kInt32) return Status();
  const std::vector<int64_t> values = indices.ToVector<int64_t>();
  const size_t depth = axes.front().component < 0 ? 1 : axes.size();
  for (size_t i = 0; i < values.size(); ++i) {
    const IndexAxis& axis = axes[axes.front().component < 0 ? 0 : i % depth];
    if (values[i] < -axis.extent || values[i] >= axis.extent) {
      return InvalidArgument(
          "index {} (at position {}) is outside [-{}, {}) of the axis it addresses", values[i], i,
          axis.extent, axis.extent);
    }
  }
  return Status();
}

std::vector<IndexInputBound> IndexInputBounds(const Graph& graph) {
  std::vector<IndexInputBound> bounds;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    size_t slot = 0;
    std::vector<IndexAxis> axes = IndexedAxes(graph, node, &slot);
    if (axes.empty()) continue;
    const ValueId indices = node.inputs[slot];
    const std::vector<ValueId>& inputs = graph.inputs();
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] == indices) {
        bounds.push_back({i, axes, fmt::format("{} node '{}'", node.op_type, node.name)});
      }
    }
  }
  return bounds;
}

}  // namespace collage
