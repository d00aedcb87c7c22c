#include "group_check.h"

#include <fmt/format.h>

#include "ops/flops.h"

namespace collage::backend_ops {

double GroupFlops(const Graph& graph, const SubGraph& nodes) {
  double flops = 0;
  for (NodeId id : nodes.Nodes()) flops += NodeFlops(graph, graph.node(id));
  return flops;
}

std::string DescribeTypes(const Graph& graph, const std::vector<ValueId>& values) {
  std::vector<std::string> parts;
  for (ValueId v : values) parts.push_back(graph.value(v).type.ToString());
  return parts.empty() ? "()" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string DescribeOps(const Graph& graph, const SubGraph& nodes) {
  std::vector<std::string> ops;
  for (NodeId id : nodes.Nodes()) ops.push_back(graph.node(id).op_type);
  return fmt::format("{}", fmt::join(ops, "+"));
}

}  // namespace collage::backend_ops
