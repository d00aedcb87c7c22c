#include "plan/plan_set.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "collage/native_backend.h"
#include "collage/sdk/errors.h"
#include "util/file_io.h"

namespace collage {
namespace {

using json = nlohmann::json;

constexpr int kSetFormatVersion = 1;

// Whether the plan's groups name `graph`'s nodes: every node once, under the same name (the
// same model, whatever its input shapes folded into).
bool NamesTheNodesOf(const Plan& plan, const Graph& graph) {
  std::vector<bool> seen(static_cast<size_t>(graph.num_nodes()), false);
  int count = 0;
  for (const PlanGroup& group : plan.groups) {
    if (group.node_names.size() != group.nodes.size()) return false;
    for (size_t i = 0; i < group.nodes.size(); ++i) {
      const NodeId n = group.nodes[i];
      if (n < 0 || n >= graph.num_nodes() || seen[static_cast<size_t>(n)]) return false;
      if (graph.node(n).name != group.node_names[i]) return false;
      seen[static_cast<size_t>(n)] = true;
      ++count;
    }
  }
  return count == graph.num_nodes();
}

// How far apart two sets of input shapes are: the sum over inputs of |log(elements ratio)|.
double ShapeDistance(const std::map<std::string, Shape>& a, const std::map<std::string, Shape>& b) {
  double distance = 0;
  for (const auto& [name, shape] : a) {
    auto other = b.find(name);
    if (other == b.end()) return std::numeric_limits<double>::infinity();
    double ratio = 1;
    for (int64_t d : shape) ratio *= static_cast<double>(std::max<int64_t>(d, 1));
    for (int64_t d : other->second) ratio /= static_cast<double>(std::max<int64_t>(d, 1));
    distance += std::abs(std::log(ratio));
  }
  return distance;
}

// Whether the backend's rule or fusion of `group` still offers its nodes on `graph` (what
// Backend::Compile checks before compiling).
bool StillOffered(const PlacedGroup& group, const Graph& graph, const BackendRegistry& registry) {
  const Backend* backend = registry.Find(group.backend);
  if (backend == nullptr) return false;
  if (const Rule* rule = backend->rules().FindRule(group.rule)) {
    std::optional<Match> match = rule->MatchGroup(graph, group.nodes);
    return match.has_value() && rule->Computes(group.precision) &&
           rule->OffersIn(*match, group.precision);
  }
  if (const Fusion* fusion = backend->rules().FindFusion(group.rule)) {
    return fusion->Computes(group.precision) && fusion->Admits(graph, group.nodes);
  }
  return false;
}

}  // namespace

std::string PlanSetToJson(const std::vector<Plan>& plans) {
  if (plans.size() == 1) return PlanToJson(plans.front());
  json set;
  set["format"] = "collage-plan-set";
  set["version"] = kSetFormatVersion;
  set["plans"] = json::array();
  for (const Plan& plan : plans) set["plans"].push_back(json::parse(PlanToJson(plan)));
  return set.dump(2) + "\n";
}

StatusOr<std::vector<Plan>> PlanSetFromJson(const std::string& text, const std::string& source) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return InvalidArgument("plan {} is not valid JSON (truncated or corrupt?)", source);
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != "collage-plan-set") {
    COLLAGE_ASSIGN_OR_RETURN(Plan plan, PlanFromJson(text, source));
    return std::vector<Plan>{std::move(plan)};
  }
  if (!j.contains("version") || j["version"] != kSetFormatVersion) {
    return InvalidArgument("plan set {} has format version {}; this collage reads version {}",
                           source, j.contains("version") ? j["version"].dump() : "none",
                           kSetFormatVersion);
  }
  if (!j.contains("plans") || !j["plans"].is_array() || j["plans"].empty() ||
      j["plans"].size() > kMaxPlansInSet) {
    return InvalidArgument("plan set {} must list 1 to {} plans under \"plans\"", source,
                           kMaxPlansInSet);
  }
  std::vector<Plan> plans;
  for (size_t i = 0; i < j["plans"].size(); ++i) {
    COLLAGE_ASSIGN_OR_RETURN(
        Plan plan, PlanFromJson(j["plans"][i].dump(), fmt::format("{} (plan {})", source, i)));
    plans.push_back(std::move(plan));
  }
  return plans;
}

Status WritePlanSetFile(const std::vector<Plan>& plans, const std::string& path) {
  Status written = WriteFileAtomically(path, PlanSetToJson(plans));
  if (!written.ok()) return written.WithContext("saving the plan");
  return written;
}

StatusOr<std::vector<Plan>> ReadPlanSetFile(const std::string& path) {
  COLLAGE_ASSIGN_OR_RETURN(std::string text, ReadPlanText(path));
  return PlanSetFromJson(text, path);
}

ChosenPlan ChoosePlan(const std::vector<Plan>& plans, const Graph& graph) {
  const std::map<std::string, Shape> here = InputShapesOf(graph);
  for (const Plan& plan : plans) {
    if (plan.input_shapes.empty() || plan.input_shapes == here) return {&plan, true};
  }
  ChosenPlan nearest;
  double best = std::numeric_limits<double>::infinity();
  for (const Plan& plan : plans) {
    const bool declared = WithinDeclaredRanges(plan, here);
    if (nearest.declared && !declared) continue;
    const double distance = ShapeDistance(here, plan.input_shapes);
    if ((distance < best || (declared && !nearest.declared)) && NamesTheNodesOf(plan, graph)) {
      best = distance;
      nearest.plan = &plan;
      nearest.declared = declared;
    }
  }
  return nearest;
}

StatusOr<Placement> PlacementAtOtherShapes(const Plan& plan, const Graph& graph,
                                           const BackendRegistry& registry, int threads,
                                           bool declared, std::vector<std::string>* warnings) {
  if (!NamesTheNodesOf(plan, graph)) {
    return InvalidArgument("the plan was made for another model ('{}'): its groups do not name "
                           "this model's nodes",
                           plan.model_name);
  }
  const Backend* native = registry.Find(kNativeBackend);
  if (native == nullptr) return NotFound("the native backend is not registered");
  // Native's single-node groups, for the groups that no longer apply.
  std::vector<const Candidate*> alone(static_cast<size_t>(graph.num_nodes()), nullptr);
  const std::vector<Candidate> native_candidates = EnumerateCandidates(graph, native->rules());
  for (const Candidate& candidate : native_candidates) {
    if (candidate.nodes.size() != 1) continue;
    auto& slot = alone[static_cast<size_t>(candidate.nodes.Nodes().front())];
    if (slot == nullptr) slot = &candidate;
  }
  Placement placement;
  std::vector<std::string> fell_back;
  for (const PlanGroup& group : plan.groups) {
    if (registry.Find(group.backend) == nullptr) {
      return NotFound("the plan places a group on backend '{}', which is not registered; load "
                      "its plug-in with --backend-path",
                      group.backend);
    }
    PlacedGroup placed(group.backend, {group.rule, SubGraph(graph.num_nodes()), group.precision});
    for (NodeId n : group.nodes) placed.nodes.Add(n);
    if (StillOffered(placed, graph, registry)) {
      placement.groups.push_back(std::move(placed));
      continue;
    }
    fell_back.push_back(fmt::format("{} on {} ({})", group.rule, group.backend,
                                    fmt::join(group.node_names, ", ")));
    for (NodeId n : group.nodes) {  // ascending ids: an order the group's edges allow
      const Candidate* single = alone[static_cast<size_t>(n)];
      if (single == nullptr) {
        return Unsupported("{} node '{}': its group no longer applies at these shapes, and no "
                           "backend runs it alone",
                           graph.node(n).op_type, graph.node(n).name);
      }
      placement.groups.push_back({native->name(), *single});
    }
  }
  COLLAGE_RETURN_IF_ERROR(ValidatePlacement(graph, placement, registry));
  if (warnings != nullptr) {
    if (!declared) {
      warnings->push_back(fmt::format(
          "the plan was measured at input shapes {}, these are {}: its placement is used where "
          "its groups still apply (run `collage optimize` with --shape for these shapes to "
          "measure them, or --shape-range to declare them)",
          DeclaredShapesText(plan), ShapesText(InputShapesOf(graph))));
    }
    if (!fell_back.empty()) {
      warnings->push_back(fmt::format("{} group{} of the plan no longer appl{} at these shapes and "
                                      "run{} on native: {}",
                                      fell_back.size(), fell_back.size() == 1 ? "" : "s",
                                      fell_back.size() == 1 ? "ies" : "y",
                                      fell_back.size() == 1 ? "s" : "", fmt::join(fell_back, "; ")));
    }
    if (plan.threads != threads) {
      warnings->push_back(fmt::format("the plan was measured with {} threads, running with {}",
                                      plan.threads, threads));
    }
  }
  return placement;
}

}  // namespace collage
