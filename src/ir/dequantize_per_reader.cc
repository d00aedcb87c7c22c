#include "ir/dequantize_per_reader.h"

#include <algorithm>
#include <map>
#include <vector>

namespace collage {
namespace {

bool IsDequantize(const Node& node) {
  return node.op_type == "DequantizeLinear" && (node.domain.empty() || node.domain == "ai.onnx") &&
         node.outputs.size() == 1 && node.outputs[0] != kNoValue;
}

// How many nodes read `value` (a node reading it twice counts once).
int DistinctReaders(const Graph& graph, ValueId value) {
  std::vector<NodeId> readers = graph.value(value).consumers;
  std::sort(readers.begin(), readers.end());
  return static_cast<int>(std::unique(readers.begin(), readers.end()) - readers.begin());
}

}  // namespace

StatusOr<int> DequantizePerReader(Graph& graph) {
  std::vector<NodeId> shared;  // DequantizeLinear nodes with more than one reader
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    const Node& node = graph.node(id);
    if (IsDequantize(node) && DistinctReaders(graph, node.outputs[0]) > 1) shared.push_back(id);
  }
  if (shared.empty()) return 0;

  Graph next;
  for (const Value& v : graph.values()) {
    if (v.is_constant()) {
      next.AddConstant(v.name, *v.constant);
    } else {
      next.AddValue(v.name, v.type);
    }
  }
  for (ValueId in : graph.inputs()) next.AddInput(in);
  std::vector<bool> is_shared(static_cast<size_t>(graph.num_nodes()), false);
  for (NodeId id : shared) is_shared[static_cast<size_t>(id)] = true;
  // The reader that keeps the original output: its first reader in node order.
  std::vector<NodeId> keeper(static_cast<size_t>(graph.num_values()), -1);
  int copies = 0;
  for (NodeId id = 0; id < graph.num_nodes(); ++id) {
    Node node = graph.node(id);
    std::map<ValueId, ValueId> own_copy;  // this reader's copy of each shared value it reads
    for (ValueId& in : node.inputs) {
      if (in == kNoValue) continue;
      if (auto it = own_copy.find(in); it != own_copy.end()) {
        in = it->second;  // read twice: one copy serves both
        continue;
      }
      const NodeId producer = graph.value(in).producer;
      if (producer < 0 || !is_shared[static_cast<size_t>(producer)]) continue;
      NodeId& first = keeper[static_cast<size_t>(in)];
      if (first < 0 || first == id) {
        first = id;
        continue;
      }
      // A copy of the DequantizeLinear for this reader, just before it.
      Node copy = graph.node(producer);
      copy.name = next.UniqueName(copy.name + ".for_" + node.name);
      const ValueId out = next.AddValue(next.UniqueName(graph.value(in).name + ".for_" + node.name),
                                        graph.value(in).type);
      copy.outputs = {out};
      COLLAGE_RETURN_IF_ERROR(next.AddNode(std::move(copy)).status());
      own_copy[in] = out;
      in = out;
      ++copies;
    }
    COLLAGE_RETURN_IF_ERROR(next.AddNode(std::move(node)).status());
  }
  for (ValueId out : graph.outputs()) next.AddOutput(out);
  next.set_opset(graph.opset());
  next.set_name(graph.name());
  COLLAGE_RETURN_IF_ERROR(next.Validate());
  graph = std::move(next);
  return copies;
}

}  // namespace collage
