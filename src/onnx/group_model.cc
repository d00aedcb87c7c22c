#include "collage/sdk/group_model.h"

#include "onnx/onnx_export.h"
#include "collage/sdk/errors.h"

namespace collage {

StatusOr<Graph> GroupAsGraph(const Graph& graph, const SubGraph& nodes) {
  Graph group;
  group.set_opset(graph.opset());
  group.set_name(graph.name() + "_group");
  std::vector<ValueId> map(static_cast<size_t>(graph.num_values()), kNoValue);
  // In order of first use, as CompileRequest::For lists the inputs.
  for (ValueId in : nodes.Inputs(graph)) {
    const Value& value = graph.value(in);
    if (value.is_constant()) {
      map[static_cast<size_t>(in)] = group.AddConstant(value.name, *value.constant);
    } else {
      map[static_cast<size_t>(in)] = group.AddValue(value.name, value.type);
      group.AddInput(map[static_cast<size_t>(in)]);
    }
  }
  for (NodeId n : nodes.Nodes()) {
    Node node = graph.node(n);
    for (ValueId& in : node.inputs) {
      if (in != kNoValue) in = map[static_cast<size_t>(in)];
    }
    for (ValueId& out : node.outputs) {
      if (out == kNoValue) continue;
      const Value& value = graph.value(out);
      out = map[static_cast<size_t>(out)] = group.AddValue(value.name, value.type);
    }
    COLLAGE_ASSIGN_OR_RETURN(NodeId added, group.AddNode(std::move(node)));
    (void)added;
  }
  for (ValueId out : nodes.Outputs(graph)) group.AddOutput(map[static_cast<size_t>(out)]);
  return group;
}

StatusOr<std::string> GroupModelBytes(const Graph& graph, const SubGraph& nodes) {
  COLLAGE_ASSIGN_OR_RETURN(Graph group, GroupAsGraph(graph, nodes));
  return ExportOnnxBytes(group);
}

}  // namespace collage
