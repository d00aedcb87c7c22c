#include "collage/sdk/backend.h"

#include <optional>

#include "collage/sdk/errors.h"

namespace collage {

CompileRequest CompileRequest::For(const Graph& graph, const SubGraph& nodes, std::string rule,
                                   int num_threads) {
  return For(graph, nodes, std::move(rule), std::make_shared<ExecutionContext>(num_threads));
}

CompileRequest CompileRequest::For(const Graph& graph, const SubGraph& nodes, std::string rule,
                                   std::shared_ptr<ExecutionContext> context) {
  CompileRequest request;
  request.graph = &graph;
  request.nodes = nodes;
  request.rule = std::move(rule);
  for (ValueId in : nodes.Inputs(graph)) {
    if (!graph.value(in).is_constant()) request.inputs.push_back(in);
  }
  request.outputs = nodes.Outputs(graph);
  request.context = std::move(context);
  return request;
}

StatusOr<std::unique_ptr<Kernel>> Backend::Compile(const CompileRequest& request) const {
  if (request.graph == nullptr || request.nodes.empty()) return InvalidArgument("empty group");
  if (request.context == nullptr) {
    return InvalidArgument("the request has no execution context (CompileRequest::For makes one)");
  }
  if (request.nodes.num_graph_nodes() != request.graph->num_nodes()) {
    return InvalidArgument("the group is a node set of another graph ({} nodes, the graph has {})",
                           request.nodes.num_graph_nodes(), request.graph->num_nodes());
  }
  const RuleSet& set = rules();
  if (const Rule* rule = set.FindRule(request.rule)) {
    if (!rule->Computes(request.precision)) {
      return InvalidArgument("rule '{}' does not compute in {}", request.rule,
                             PrecisionName(request.precision));
    }
    std::optional<Match> match = rule->MatchGroup(*request.graph, request.nodes);
    if (!match) return InvalidArgument("rule '{}' does not offer this group", request.rule);
    if (!rule->OffersIn(*match, request.precision)) {
      return InvalidArgument("rule '{}' does not offer this group in {}", request.rule,
                             PrecisionName(request.precision));
    }
    if (!rule->compiler()) return Internal("rule '{}' has no compile function", request.rule);
    return rule->compiler()(request, *match);
  }
  if (const Fusion* fusion = set.FindFusion(request.rule)) {
    if (!fusion->Computes(request.precision)) {
      return InvalidArgument("fusion '{}' does not compute in {}", request.rule,
                             PrecisionName(request.precision));
    }
    if (!fusion->Admits(*request.graph, request.nodes)) {
      return InvalidArgument("fusion '{}' does not admit this group", request.rule);
    }
    if (!fusion->compiler()) return Internal("fusion '{}' has no compile function", request.rule);
    return fusion->compiler()(request);
  }
  return InvalidArgument("backend '{}' has no rule or fusion '{}'", name(), request.rule);
}

StatusOr<std::unique_ptr<Kernel>> Backend::CompileConversion(const TensorType& type,
                                                             const Layout& from,
                                                             const Layout& to) const {
  return Unsupported("backend '{}' has no conversion from {} to {} for {}", name(), from.name(),
                     to.name(), type.ToString());
}

}  // namespace collage
