#include "runtime/placement.h"

#include <algorithm>
#include <map>

#include "collage/native_backend.h"
#include "collage/sdk/errors.h"

namespace collage {

bool GroupInputsAvailable(const Graph& graph, const SubGraph& group, const SubGraph& covered) {
  for (ValueId in : group.Inputs(graph)) {
    const Value& value = graph.value(in);
    if (value.is_constant() || value.producer < 0) continue;
    if (!covered.Contains(value.producer)) return false;
  }
  return true;
}

Status ValidatePlacement(const Graph& graph, const Placement& placement,
                         const BackendRegistry& registry) {
  SubGraph covered(graph.num_nodes());
  for (size_t g = 0; g < placement.groups.size(); ++g) {
    const PlacedGroup& group = placement.groups[g];
    if (registry.Find(group.backend) == nullptr) {
      return NotFound("group {} is placed on backend '{}', which is not registered", g,
                      group.backend);
    }
    if (group.nodes.num_graph_nodes() != graph.num_nodes()) {
      return InvalidArgument("group {} was made for a graph of {} nodes, this one has {}", g,
                             group.nodes.num_graph_nodes(), graph.num_nodes());
    }
    if (group.nodes.empty()) return InvalidArgument("group {} is empty", g);
    if (group.nodes.Overlaps(covered)) {
      return InvalidArgument("group {} ({}) overlaps an earlier group", g, group.nodes.ToString());
    }
    if (!group.nodes.IsConvex(graph)) {
      return InvalidArgument("group {} ({}) is not convex", g, group.nodes.ToString());
    }
    if (!GroupInputsAvailable(graph, group.nodes, covered)) {
      return InvalidArgument("group {} ({}) reads a value that no earlier group computes", g,
                             group.nodes.ToString());
    }
    covered.AddAll(group.nodes);
  }
  if (covered.size() != graph.num_nodes()) {
    for (NodeId n = 0; n < graph.num_nodes(); ++n) {
      if (!covered.Contains(n)) {
        return InvalidArgument("node '{}' ({}) is in no group", graph.node(n).name,
                               graph.node(n).op_type);
      }
    }
  }
  return Status();
}

StatusOr<Placement> PlaceOnSingleBackend(const Graph& graph, const Backend& backend,
                                         const BackendRegistry& registry, bool strict_non_finite) {
  const Backend* native = registry.Find(kNativeBackend);
  if (native == nullptr) return NotFound("the native backend is not registered");
  // Native's rules all meet the contract, so strict mode leaves them; filtered anyway, so that
  // the placement's check holds by construction.
  const std::vector<Candidate> offered =
      EnumerateCandidates(graph, backend.rules(), strict_non_finite);
  const std::vector<Candidate> native_offered =
      EnumerateCandidates(graph, native->rules(), strict_non_finite);
  auto pointers = [](const std::vector<Candidate>& candidates) {
    std::vector<const Candidate*> to;
    for (const Candidate& c : candidates) to.push_back(&c);
    return to;
  };
  return PlaceOnSingleBackend(graph, backend, pointers(offered), pointers(native_offered),
                              registry);
}

StatusOr<Placement> PlaceOnSingleBackend(const Graph& graph, const Backend& backend,
                                         const std::vector<const Candidate*>& candidates,
                                         const std::vector<const Candidate*>& native_candidates,
                                         const BackendRegistry& registry) {
  const Backend* native = registry.Find(kNativeBackend);
  if (native == nullptr) return NotFound("the native backend is not registered");
  // The fallback: native's single-node groups.
  std::vector<const Candidate*> fallback(static_cast<size_t>(graph.num_nodes()), nullptr);
  for (const Candidate* candidate : native_candidates) {
    if (candidate->nodes.size() != 1) continue;
    auto& slot = fallback[static_cast<size_t>(candidate->nodes.Nodes().front())];
    if (slot == nullptr) slot = candidate;
  }
  // The candidates that hold each node, so that choosing a node's group looks at those only
  // (placement stays linear in the graph's size).
  std::vector<std::vector<const Candidate*>> candidates_of(static_cast<size_t>(graph.num_nodes()));
  for (const Candidate* candidate : candidates) {
    for (NodeId n : candidate->nodes.Nodes())
      candidates_of[static_cast<size_t>(n)].push_back(candidate);
  }
  Placement placement;
  SubGraph covered(graph.num_nodes());
  // Node n's group: the largest offered that can run now, else n alone on native. `waits`
  // is set when a larger group of n waits for an input that a node after n computes.
  auto choose = [&](NodeId n, bool* waits) -> std::pair<const Candidate*, const Backend*> {
    const Candidate* best = nullptr;
    int32_t waiting = 0;
    for (const Candidate* candidate : candidates_of[static_cast<size_t>(n)]) {
      if (candidate->nodes.Overlaps(covered)) continue;
      if (!GroupInputsAvailable(graph, candidate->nodes, covered)) {
        waiting = std::max(waiting, candidate->nodes.size());
        continue;
      }
      if (best != nullptr && candidate->nodes.size() <= best->nodes.size()) continue;
      best = candidate;
    }
    const Backend* chosen = &backend;
    if (best == nullptr) {
      best = fallback[static_cast<size_t>(n)];
      chosen = native;
    }
    *waits = waiting > (best != nullptr ? best->nodes.size() : 0) ||
             (best != nullptr && !GroupInputsAvailable(graph, best->nodes, covered));
    return {best, chosen};
  };
  auto place = [&](NodeId n, const Candidate* group, const Backend* chosen) -> Status {
    if (group == nullptr) {
      const Node& node = graph.node(n);
      return Unsupported("{} node '{}': no backend can run it", node.op_type, node.name);
    }
    placement.groups.push_back({chosen->name(), *group});
    covered.AddAll(group->nodes);
    return Status::Ok();
  };
  // Passes over the nodes not yet placed, in topological order. A node whose largest group
  // waits for an input a later node computes (a quantized convolution's group holds the
  // DequantizeLinear of its weights, at the top of the model, and that of its input, just
  // before it) is passed over until the group can run. A pass that places nothing places the
  // first node left — whose inputs are all computed — in the largest group that can run now.
  while (covered.size() < graph.num_nodes()) {
    NodeId first_left = -1;
    bool progressed = false;
    for (NodeId n = 0; n < graph.num_nodes(); ++n) {
      if (covered.Contains(n)) continue;
      if (first_left < 0) first_left = n;
      bool waits = false;
      const auto [group, chosen] = choose(n, &waits);
      if (waits) continue;
      COLLAGE_RETURN_IF_ERROR(place(n, group, chosen));
      progressed = true;
    }
    if (!progressed) {
      bool waits = false;
      const auto [group, chosen] = choose(first_left, &waits);
      COLLAGE_RETURN_IF_ERROR(place(first_left, group, chosen));
    }
  }
  COLLAGE_RETURN_IF_ERROR(ValidatePlacement(graph, placement, registry));
  return placement;
}

Status CheckNonFiniteContract(const Graph& graph, const Placement& placement,
                              const BackendRegistry& registry) {
  for (size_t g = 0; g < placement.groups.size(); ++g) {
    const PlacedGroup& group = placement.groups[g];
    const Backend* backend = registry.Find(group.backend);
    if (backend != nullptr && backend->rules().MeetsNonFiniteContract(group.rule)) continue;
    std::string ops;
    for (NodeId n : group.nodes.Nodes()) ops += (ops.empty() ? "" : "+") + graph.node(n).op_type;
    const std::string first =
        group.nodes.empty() ? std::string() : graph.node(group.nodes.Nodes().front()).name;
    return InvalidArgument(
        "group {} ({} '{}') runs rule '{}' of backend '{}', which does not declare that it "
        "propagates NaN and infinities as the ONNX spec does; strict NaN/Inf mode allows only "
        "declared rules: re-optimize with --strict-nan (or run without it)",
        g, ops, first, group.rule, group.backend);
  }
  return Status();
}

std::string DescribePlacement(const Placement& placement) {
  std::map<std::string, std::pair<int, int>> per_backend;  // groups, nodes
  for (const PlacedGroup& group : placement.groups) {
    auto& [groups, nodes] = per_backend[group.backend];
    groups += 1;
    nodes += group.nodes.size();
  }
  std::string text;
  for (const auto& [backend, counts] : per_backend) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{}: {} nodes in {} groups", backend, counts.second, counts.first);
  }
  return text;
}

}  // namespace collage
