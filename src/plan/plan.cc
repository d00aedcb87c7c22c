#include "plan/plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "collage/device_fingerprint.h"
#include "collage/printable_text.h"
#include "collage/sdk/errors.h"
#include "cost/group_signature.h"
#include "util/file_io.h"

namespace collage {
namespace {

using nlohmann::json;

// FNV-1a over 64-bit words (then the tail bytes): fast enough for BERT's 440 MB of weights.
class Hasher {
 public:
  void Add(const void* data, size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      Mix(word);
    }
    for (; i < bytes; ++i) Mix(p[i]);
  }
  void Add(const std::string& s) {
    Add(s.data(), s.size());
    Mix(s.size());
  }
  std::string Hex() const { return fmt::format("{:016x}", h_); }

 private:
  void Mix(uint64_t v) {
    h_ ^= v;
    h_ *= 0x100000001b3ull;
  }
  uint64_t h_ = 0xcbf29ce484222325ull;
};

// Reads a field of a JSON object with a message naming the field when it is absent or of
// another type.
template <typename T>
Status Get(const json& object, const char* field, const std::string& where, T* out) {
  if (!object.is_object() || !object.contains(field))
    return InvalidArgument("{}: missing field '{}'", where, field);
  const json& value = object[field];
  bool ok = false;
  if constexpr (std::is_same_v<T, std::string>)
    ok = value.is_string();
  else if constexpr (std::is_same_v<T, double>)
    ok = value.is_number();
  else if constexpr (std::is_same_v<T, bool>)
    ok = value.is_boolean();
  else if constexpr (std::is_integral_v<T>)
    ok = value.is_number_integer();
  if (!ok)
    return InvalidArgument("{}: field '{}' has the wrong type ({})", where, field,
                           value.type_name());
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // json's get<int>() truncates: 4294967297 would read as 1.
    const bool fits =
        value.is_number_unsigned()
            ? value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
            : value.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                  value.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max());
    if (!fits)
      return InvalidArgument("{}: field '{}' is out of range ({})", where, field, value.dump());
  }
  *out = value.get<T>();
  return Status();
}

// A PlacementSource as PlacementSourceName wrote it.
Status GetSource(const json& object, const char* field, const std::string& where,
                 PlacementSource* out) {
  std::string name;
  COLLAGE_RETURN_IF_ERROR(Get(object, field, where, &name));
  std::optional<PlacementSource> named = PlacementSourceNamed(name);
  if (!named.has_value()) {
    return InvalidArgument(
        "{}: field '{}' is '{}', not what chose a placement (op-level, two-level, "
        "single-backend:<backend>, ...)",
        where, field, PrintableText(name));
  }
  *out = std::move(*named);
  return Status();
}

// "input_shapes": {"x": [1, 3, 224, 224], ...}: every dim a non-negative integer.
Status ReadInputShapes(const json& field, const std::string& source,
                       std::map<std::string, Shape>& shapes) {
  if (!field.is_object()) return InvalidArgument("{}: field 'input_shapes' must be an object", source);
  for (const auto& [name, dims] : field.items()) {
    if (!dims.is_array()) {
      return InvalidArgument("{}: input_shapes.{} must be an array of dims", source, name);
    }
    Shape shape;
    for (const json& dim : dims) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0) {
        return InvalidArgument("{}: input_shapes.{} holds a dim that is not an integer >= 0", source,
                               name);
      }
      shape.push_back(dim.get<int64_t>());
    }
    shapes[name] = std::move(shape);
  }
  return Status();
}

// "input_ranges": {"x": {"min": [1, 3, 224, 224], "max": [1, 3, 640, 640]}, ...}: per input
// of input_shapes, bounds that hold its measured shape (read after input_shapes).
Status ReadInputRanges(const json& field, const std::string& source, const Plan& plan,
                       InputShapeRanges& ranges) {
  if (!field.is_object()) return InvalidArgument("{}: field 'input_ranges' must be an object", source);
  for (const auto& [name, bounds] : field.items()) {
    auto measured = plan.input_shapes.find(name);
    if (measured == plan.input_shapes.end()) {
      return InvalidArgument("{}: input_ranges.{} names no input of input_shapes", source, name);
    }
    if (!bounds.is_object() || !bounds.contains("min") || !bounds.contains("max")) {
      return InvalidArgument("{}: input_ranges.{} must be an object with 'min' and 'max'", source,
                             name);
    }
    std::map<std::string, Shape> ends;
    COLLAGE_RETURN_IF_ERROR(ReadInputShapes(json{{"min", bounds["min"]}, {"max", bounds["max"]}},
                                            source + ": input_ranges." + name, ends));
    ShapeRange range{ends["min"], ends["max"]};
    Status valid = CheckShapeRange(name, range, measured->second);
    if (!valid.ok()) return InvalidArgument("{}: {}", source, valid.message());
    ranges[name] = std::move(range);
  }
  return Status();
}

// Input shapes differ from the plan's: the plan is refused with what to run instead.
Status CheckInputShapes(const Plan& plan, const Graph& graph) {
  if (plan.input_shapes.empty()) return Status();  // a plan older than the field
  const std::map<std::string, Shape> here = InputShapesOf(graph);
  if (here == plan.input_shapes) return Status();
  std::string shape_flags;
  for (const auto& [name, shape] : here) shape_flags += " --shape " + name + "=" + ShapeToString(shape);
  return InvalidArgument(
      "the plan was made for input shapes {}, these inputs are {}: make a plan for them with "
      "`collage optimize MODEL{} --save-plan NEW.plan`",
      ShapesText(plan.input_shapes), ShapesText(here), shape_flags);
}

// The record of `placed` in a plan: its node numbers, and their names for readers (the cost
// is filled after measuring).
PlanGroup PlanGroupOf(const Graph& graph, const PlacedGroup& placed) {
  PlanGroup group;
  group.backend = placed.backend;
  group.rule = placed.rule;
  group.precision = placed.precision;
  group.nodes = placed.nodes.Nodes();
  for (NodeId n : group.nodes) group.node_names.push_back(graph.node(n).name);
  return group;
}

// The placed group that the plan's group `index` records, its node numbers checked against
// `graph` (which sizes the SubGraph).
StatusOr<PlacedGroup> PlacedGroupOf(const PlanGroup& group, size_t index, const Graph& graph) {
  PlacedGroup placed(group.backend, {group.rule, SubGraph(graph.num_nodes()), group.precision});
  for (NodeId n : group.nodes) {
    if (n >= graph.num_nodes()) {
      return InvalidArgument("the plan's group {} names node {}, the model has {} nodes", index,
                             n, graph.num_nodes());
    }
    placed.nodes.Add(n);
  }
  return placed;
}

}  // namespace

std::map<std::string, Shape> InputShapesOf(const Graph& graph) {
  std::map<std::string, Shape> shapes;
  for (ValueId in : graph.inputs()) shapes[graph.value(in).name] = graph.value(in).type.shape;
  return shapes;
}

std::string ShapesText(const std::map<std::string, Shape>& shapes) {
  std::string text;
  for (const auto& [name, shape] : shapes) {
    text += (text.empty() ? "" : ", ") + name + "=" + ShapeToString(shape);
  }
  return text;
}

bool WithinDeclaredRanges(const Plan& plan, const std::map<std::string, Shape>& shapes) {
  if (plan.input_ranges.empty() || shapes.size() != plan.input_shapes.size()) return false;
  for (const auto& [name, shape] : shapes) {
    auto range = plan.input_ranges.find(name);
    if (range != plan.input_ranges.end()) {
      if (!WithinRange(range->second, shape)) return false;
      continue;
    }
    auto measured = plan.input_shapes.find(name);
    if (measured == plan.input_shapes.end() || measured->second != shape) return false;
  }
  return true;
}

std::string DeclaredShapesText(const Plan& plan) {
  std::string text;
  for (const auto& [name, shape] : plan.input_shapes) {
    text += (text.empty() ? "" : ", ") + name + "=" + ShapeToString(shape);
    auto range = plan.input_ranges.find(name);
    if (range != plan.input_ranges.end()) text += " (" + ShapeRangeText(range->second) + ")";
  }
  return text;
}

std::string ModelHash(const Graph& graph) {
  Hasher hasher;
  SubGraph all(graph.num_nodes());
  for (NodeId n = 0; n < graph.num_nodes(); ++n) all.Add(n);
  hasher.Add(GroupSignature(graph, all));
  // The signature numbers non-constant inputs by first use; the graph's own inputs and
  // outputs, and where each constant goes, complete the picture.
  for (ValueId in : graph.inputs()) hasher.Add(graph.value(in).type.ToString());
  for (ValueId out : graph.outputs()) hasher.Add(std::to_string(out));
  for (const Value& value : graph.values()) {
    if (!value.is_constant()) continue;
    hasher.Add(value.type.ToString());
    hasher.Add(value.constant->data(), value.constant->nbytes());
  }
  return hasher.Hex();
}

Plan MakePlan(const Graph& graph, const Placement& placement, const BackendRegistry& registry,
              PlacementSource search, int threads) {
  Plan plan;
  plan.model_name = graph.name();
  plan.model_hash = ModelHash(graph);
  plan.device = DeviceFingerprint();
  plan.search = std::move(search);
  plan.threads = threads;
  plan.input_shapes = InputShapesOf(graph);
  for (const PlacedGroup& placed : placement.groups) {
    if (const Backend* backend = registry.Find(placed.backend)) {
      plan.backend_versions[placed.backend] = backend->version();
    }
    plan.groups.push_back(PlanGroupOf(graph, placed));
  }
  return plan;
}

std::string PlanToJson(const Plan& plan) {
  json j;
  j["format"] = "collage-plan";
  j["version"] = Plan::kFormatVersion;
  j["model_name"] = plan.model_name;
  j["model_hash"] = plan.model_hash;
  j["device"] = plan.device;
  j["search"] = PlacementSourceName(plan.search);
  j["threads"] = plan.threads;
  j["input_shapes"] = plan.input_shapes;
  if (!plan.input_ranges.empty()) {
    json ranges = json::object();
    for (const auto& [name, range] : plan.input_ranges) {
      ranges[name] = {{"min", range.min}, {"max", range.max}};
    }
    j["input_ranges"] = ranges;
  }
  j["backend_versions"] = plan.backend_versions;
  j["estimated_ms"] = plan.estimated_ms;
  j["measured_ms"] = plan.measured_ms;
  j["strict_non_finite"] = plan.strict_non_finite;
  if (plan.tolerance > 0) {
    j["tolerance"] = plan.tolerance;
    j["checked_error"] = plan.checked_error;
  }
  if (plan.kept_finalist.has_value()) {
    j["kept_finalist"] = PlacementSourceName(*plan.kept_finalist);
    j["runner_up"] = plan.runner_up.has_value() ? PlacementSourceName(*plan.runner_up) : "";
    j["runner_up_ratio"] = plan.runner_up_ratio;
  }
  j["groups"] = json::array();
  for (const PlanGroup& group : plan.groups) {
    json item = {{"backend", group.backend},
                 {"rule", group.rule},
                 {"nodes", group.nodes},
                 {"node_names", group.node_names},
                 {"cost_ms", group.cost_ms}};
    if (group.precision != Precision::kFloat32) item["precision"] = PrecisionName(group.precision);
    j["groups"].push_back(std::move(item));
  }
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

StatusOr<Plan> PlanFromJson(const std::string& text, const std::string& source) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return InvalidArgument("plan {} is not valid JSON (truncated or corrupt?)", source);
  std::string format;
  if (!j.is_object() || !Get(j, "format", source, &format).ok() || format != "collage-plan") {
    return InvalidArgument("{} is not a collage plan (no \"format\": \"collage-plan\")", source);
  }
  int version = 0;
  COLLAGE_RETURN_IF_ERROR(Get(j, "version", source, &version));
  if (version != Plan::kFormatVersion) {
    return InvalidArgument("plan {} has format version {}; this collage reads version {}", source,
                           version, Plan::kFormatVersion);
  }
  Plan plan;
  COLLAGE_RETURN_IF_ERROR(Get(j, "model_name", source, &plan.model_name));
  COLLAGE_RETURN_IF_ERROR(Get(j, "model_hash", source, &plan.model_hash));
  COLLAGE_RETURN_IF_ERROR(Get(j, "device", source, &plan.device));
  COLLAGE_RETURN_IF_ERROR(GetSource(j, "search", source, &plan.search));
  COLLAGE_RETURN_IF_ERROR(Get(j, "threads", source, &plan.threads));
  COLLAGE_RETURN_IF_ERROR(Get(j, "estimated_ms", source, &plan.estimated_ms));
  COLLAGE_RETURN_IF_ERROR(Get(j, "measured_ms", source, &plan.measured_ms));
  // Optional: plans written before strict NaN/Inf mode existed were placed without it.
  if (j.contains("kept_finalist")) {
    plan.kept_finalist.emplace();
    COLLAGE_RETURN_IF_ERROR(GetSource(j, "kept_finalist", source, &*plan.kept_finalist));
    // "" when no other finalist ran.
    const bool none = j.contains("runner_up") && j["runner_up"].is_string() &&
                      j["runner_up"].get<std::string>().empty();
    if (!none) {
      plan.runner_up.emplace();
      COLLAGE_RETURN_IF_ERROR(GetSource(j, "runner_up", source, &*plan.runner_up));
    }
    COLLAGE_RETURN_IF_ERROR(Get(j, "runner_up_ratio", source, &plan.runner_up_ratio));
  }
  if (j.contains("strict_non_finite")) {
    COLLAGE_RETURN_IF_ERROR(Get(j, "strict_non_finite", source, &plan.strict_non_finite));
  }
  if (j.contains("tolerance")) {
    COLLAGE_RETURN_IF_ERROR(Get(j, "tolerance", source, &plan.tolerance));
    COLLAGE_RETURN_IF_ERROR(Get(j, "checked_error", source, &plan.checked_error));
    if (!(plan.tolerance > 0) || !std::isfinite(plan.tolerance) || !(plan.checked_error >= 0)) {
      return InvalidArgument("{}: 'tolerance' must be above 0 and 'checked_error' at least 0",
                             source);
    }
  }
  if (j.contains("input_shapes")) {
    COLLAGE_RETURN_IF_ERROR(ReadInputShapes(j["input_shapes"], source, plan.input_shapes));
  }
  if (j.contains("input_ranges")) {
    COLLAGE_RETURN_IF_ERROR(ReadInputRanges(j["input_ranges"], source, plan, plan.input_ranges));
  }
  if (!j.contains("backend_versions") || !j["backend_versions"].is_object()) {
    return InvalidArgument("{}: field 'backend_versions' must be an object", source);
  }
  for (const auto& [name, value] : j["backend_versions"].items()) {
    if (!value.is_string())
      return InvalidArgument("{}: backend_versions.{} must be a string", source, name);
    plan.backend_versions[name] = value.get<std::string>();
  }
  if (!j.contains("groups") || !j["groups"].is_array()) {
    return InvalidArgument("{}: field 'groups' must be an array", source);
  }
  for (size_t g = 0; g < j["groups"].size(); ++g) {
    const json& item = j["groups"][g];
    const std::string where = fmt::format("{}: groups[{}]", source, g);
    PlanGroup group;
    COLLAGE_RETURN_IF_ERROR(Get(item, "backend", where, &group.backend));
    COLLAGE_RETURN_IF_ERROR(Get(item, "rule", where, &group.rule));
    COLLAGE_RETURN_IF_ERROR(Get(item, "cost_ms", where, &group.cost_ms));
    if (item.contains("precision")) {
      std::string name;
      COLLAGE_RETURN_IF_ERROR(Get(item, "precision", where, &name));
      const std::optional<Precision> precision = PrecisionNamed(name);
      if (!precision.has_value()) {
        return InvalidArgument("{}: unknown precision '{}' (fp32 or bf16)", where,
                               PrintableExcerpt(name, 40));
      }
      group.precision = *precision;
    }
    if (!item.contains("nodes") || !item["nodes"].is_array()) {
      return InvalidArgument("{}: field 'nodes' must be an array of node numbers", where);
    }
    // A set finds repeats in linear time: a hostile plan may list a million ids.
    std::unordered_set<NodeId> listed;
    for (const json& node : item["nodes"]) {
      if (!node.is_number_integer())
        return InvalidArgument("{}: 'nodes' holds a non-integer", where);
      const int64_t id = node.get<int64_t>();
      if (id < 0 || id > INT32_MAX)
        return InvalidArgument("{}: node {} is out of range", where, node.dump());
      if (!listed.insert(static_cast<NodeId>(id)).second)
        return InvalidArgument("{}: node {} is listed twice", where, id);
      group.nodes.push_back(static_cast<NodeId>(id));
    }
    if (item.contains("node_names") && item["node_names"].is_array()) {
      for (const json& name : item["node_names"]) {
        if (name.is_string()) group.node_names.push_back(name.get<std::string>());
      }
    }
    plan.groups.push_back(std::move(group));
  }
  return plan;
}

Status WritePlanFile(const Plan& plan, const std::string& path) {
  Status written = WriteFileAtomically(path, PlanToJson(plan));
  if (!written.ok()) return written.WithContext("saving the plan");
  return written;
}

StatusOr<std::string> ReadPlanText(const std::string& path) {
  // A plan lists one entry per group; even a model of a million nodes stays far below this.
  constexpr int64_t kMaxPlanBytes = int64_t{256} << 20;
  auto text = ReadRegularFile(path, kMaxPlanBytes, "a plan is a few kilobytes per group");
  if (!text.ok()) return text.status().WithContext("loading the plan");
  return text;
}

StatusOr<Plan> ReadPlanFile(const std::string& path) {
  COLLAGE_ASSIGN_OR_RETURN(std::string text, ReadPlanText(path));
  return PlanFromJson(text, path);
}

StatusOr<Placement> PlacementFromPlan(const Plan& plan, const Graph& graph,
                                      const BackendRegistry& registry, int threads,
                                      std::vector<std::string>* warnings) {
  auto warn = [&](std::string text) {
    if (warnings != nullptr) warnings->push_back(std::move(text));
  };
  COLLAGE_RETURN_IF_ERROR(CheckInputShapes(plan, graph));
  const std::string hash = ModelHash(graph);
  if (plan.model_hash != hash) {
    return InvalidArgument(
        "the plan was made for another model ('{}', hash {}; this model's hash is {})",
        plan.model_name, plan.model_hash, hash);
  }
  Placement placement;
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    const PlanGroup& group = plan.groups[g];
    const Backend* backend = registry.Find(group.backend);
    if (backend == nullptr) {
      std::string registered;
      for (const Backend* b : registry.backends())
        registered += (registered.empty() ? "" : ", ") + b->name();
      return NotFound(
          "the plan places group {} on backend '{}', which is not registered (registered: {}); "
          "load its plug-in with --backend-path",
          g, group.backend, registered);
    }
    COLLAGE_ASSIGN_OR_RETURN(PlacedGroup placed, PlacedGroupOf(group, g, graph));
    placement.groups.push_back(std::move(placed));
  }
  COLLAGE_RETURN_IF_ERROR(ValidatePlacement(graph, placement, registry));
  if (plan.device != DeviceFingerprint()) {
    warn(
        fmt::format("the plan was measured on another device ({}; this one is {}): it runs, but "
                    "may not be the fastest here — run `collage optimize` to measure again",
                    plan.device, DeviceFingerprint()));
  }
  for (const auto& [name, version] : plan.backend_versions) {
    const Backend* backend = registry.Find(name);
    if (backend != nullptr && backend->version() != version) {
      warn(
          fmt::format("the plan was measured with {} '{}', this is '{}': run `collage optimize` to "
                      "measure again",
                      name, version, backend->version()));
    }
  }
  if (plan.threads != threads) {
    warn(fmt::format("the plan was measured with {} threads, running with {}", plan.threads,
                     threads));
  }
  return placement;
}

}  // namespace collage
