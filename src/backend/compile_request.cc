#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"

namespace collage {

CompileRequest CompileRequest::For(const Graph& graph, const SubGraph& nodes, std::string rule,
                                   int num_threads) {
  CompileRequest request;
  request.graph = &graph;
  request.nodes = nodes;
  request.rule = std::move(rule);
  for (ValueId in : nodes.Inputs(graph)) {
    if (!graph.value(in).is_constant()) request.inputs.push_back(in);
  }
  request.outputs = nodes.Outputs(graph);
  request.num_threads = num_threads;
  return request;
}

StatusOr<std::unique_ptr<Kernel>> Backend::CompileConversion(const TensorType& type,
                                                             const Layout& from,
                                                             const Layout& to) const {
  return Unsupported("backend '{}' has no conversion from {} to {} for {}", name(), from.name(),
                     to.name(), type.ToString());
}

}  // namespace collage
