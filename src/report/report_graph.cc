#include "report/report_graph.h"

#include <fmt/format.h>

#include <map>

#include "report/report_text.h"

namespace collage {
namespace {

constexpr size_t kLineChars = 34;
// A group of more nodes than this (a region engine's whole model, a two-level region) is
// drawn as a cluster of its nodes: one box would hide the model's structure.
constexpr size_t kMaxNodesInABox = 8;

// One group of the document, read once.
struct GroupView {
  std::string backend;
  std::string rule;  // in its precision (RuleShown)
  std::vector<int> nodes;
  double estimated_ms = 0;
  double in_run_ms = 0;
  bool measured_alone = true;
  std::string rivals;  // the tooltip's lines of its rivals

  explicit GroupView(const ReportDocument& group)
      : backend(group["backend"].get<std::string>()),
        rule(RuleShown(group)),
        nodes(group["node_ids"].get<std::vector<int>>()),
        estimated_ms(group["estimated_ms"].get<double>()),
        in_run_ms(group["in_run_ms"].get<double>()),
        measured_alone(group["measured_alone"].get<bool>()) {
    for (const ReportDocument& a : group["alternatives"]) {
      rivals += fmt::format(
          "\n  {} {}{}: {}", a["backend"].get<std::string>(), RuleShown(a),
          a["same_nodes"].get<bool>() ? "" : fmt::format(" ({} nodes)", a["nodes"].get<int>()),
          a["valid"].get<bool>() ? FormatDuration(a["estimated_ms"].get<double>())
                                 : "invalid: " + a["reason"].get<std::string>());
    }
    rivals = rivals.empty() ? "\nno rivals" : "\nrivals:" + rivals;
  }
};

std::string OpsLine(const Graph& graph, const GroupView& group) {
  std::string ops;
  for (int n : group.nodes) ops += (ops.empty() ? "" : "+") + graph.node(n).op_type;
  if (group.nodes.size() > 1) ops = fmt::format("{} ops: {}", group.nodes.size(), ops);
  return Shorten(ops, kLineChars);
}

std::string CostLine(const GroupView& group, bool profiled) {
  std::string line = "est " + FormatDuration(group.estimated_ms);
  if (profiled) line += " · run " + FormatDuration(group.in_run_ms);
  return line;
}

class Builder {
 public:
  Builder(const Graph& graph, const ReportDocument& document)
      : graph_(graph),
        steps_(document["in_run_steps"]),
        profiled_(!steps_.empty()),
        box_of_node_(static_cast<size_t>(graph.num_nodes()), -1) {
    for (const ReportDocument& group : document["groups"]) groups_.emplace_back(group);
    for (const ReportDocument& step : steps_) run_total_ms_ += step["ms"].get<double>();
  }

  ReportGraph Build() {
    for (ValueId v : graph_.inputs()) {
      if (graph_.value(v).is_constant()) continue;
      box_of_input_[v] = AddTerminal("input", v);
    }
    for (const GroupView& group : groups_) {
      if (group.nodes.empty()) continue;
      if (group.measured_alone && group.nodes.size() <= kMaxNodesInABox)
        AddGroup(group);
      else
        AddRegion(group);
    }
    for (const GroupView& group : groups_) AddEdgesInto(group);
    for (ValueId v : graph_.outputs()) {
      const int from = BoxOfValue(v);
      const int to = AddTerminal("output", v);
      if (from >= 0) EdgeBetween(from, to);
    }
    AddConversions();
    return std::move(out_);
  }

 private:
  int AddBox(ReportBox box) {
    out_.boxes.push_back(std::move(box));
    return static_cast<int>(out_.boxes.size()) - 1;
  }

  int AddTerminal(const char* kind, ValueId v) {
    ReportBox box;
    const Value& value = graph_.value(v);
    box.lines = {Shorten(fmt::format("{}: {}", kind, value.name), kLineChars),
                 Shorten(value.type.ToString(), kLineChars)};
    box.fill = "#ffffff";
    box.tooltip = fmt::format("model {} {}: {}", kind, value.name, value.type.ToString());
    box.terminal = true;
    return AddBox(std::move(box));
  }

  void AddGroup(const GroupView& group) {
    ReportBox box;
    box.lines = {Shorten(group.backend + " · " + group.rule, kLineChars), OpsLine(graph_, group),
                 CostLine(group, profiled_)};
    box.fill = BackendColour(group.backend);
    std::string names;
    for (int n : group.nodes) names += (names.empty() ? "" : ", ") + graph_.node(n).name;
    box.tooltip = fmt::format("{} {}: estimated {}{}\nnodes: {}{}", group.backend, group.rule,
                              FormatDuration(group.estimated_ms),
                              profiled_ ? ", in run " + FormatDuration(group.in_run_ms) : "", names,
                              group.rivals);
    const int id = AddBox(std::move(box));
    for (int n : group.nodes) box_of_node_[static_cast<size_t>(n)] = id;
  }

  // A two-level region is measured only within whole plans: its share of the profiled run
  // says how much of the model it carries.
  void AddRegion(const GroupView& group) {
    ReportCluster cluster;
    cluster.colour = BackendColour(group.backend);
    cluster.lines.push_back(Shorten(
        fmt::format("region on {} ({}) · {} nodes", group.backend, group.rule, group.nodes.size()),
        60));
    std::string costs = group.measured_alone ? "est " + FormatDuration(group.estimated_ms) : "";
    if (profiled_ && run_total_ms_ > 0) {
      costs += fmt::format("{}run {} · {:.1f}% of the run", costs.empty() ? "" : " · ",
                           FormatDuration(group.in_run_ms), 100 * group.in_run_ms / run_total_ms_);
    }
    if (!group.measured_alone) {
      costs += costs.empty() ? "measured only within whole plans" : "";
    }
    cluster.lines.push_back(costs);
    out_.clusters.push_back(std::move(cluster));
    const int cluster_index = static_cast<int>(out_.clusters.size()) - 1;
    for (int n : group.nodes) {
      const Node& node = graph_.node(n);
      ReportBox box;
      box.lines = {node.op_type, Shorten(node.name, kLineChars)};
      box.fill = BackendColour(group.backend);
      box.tooltip = fmt::format("{} ({}) in the {} region {}", node.name, node.op_type,
                                group.backend, group.rule);
      box.cluster = cluster_index;
      box_of_node_[static_cast<size_t>(n)] = AddBox(std::move(box));
    }
  }

  // The box computing `v`: its producer's, or the model input's; -1 for a constant.
  int BoxOfValue(ValueId v) const {
    const NodeId producer = graph_.value(v).producer;
    if (producer >= 0) return box_of_node_[static_cast<size_t>(producer)];
    auto it = box_of_input_.find(v);
    return it == box_of_input_.end() ? -1 : it->second;
  }

  int EdgeBetween(int from, int to) {
    auto [it, added] = edge_index_.try_emplace({from, to}, static_cast<int>(out_.edges.size()));
    if (added) out_.edges.push_back(ReportEdge{from, to, ""});
    return it->second;
  }

  void AddEdgesInto(const GroupView& group) {
    for (int n : group.nodes) {
      const int to = box_of_node_[static_cast<size_t>(n)];
      for (ValueId in : graph_.node(n).inputs) {
        if (in == kNoValue) continue;
        const int from = BoxOfValue(in);
        if (from >= 0 && from != to) EdgeBetween(from, to);
      }
    }
  }

  // The runtime adds a conversion just before the first step that reads the value in the other
  // layout: it goes on the edge from the value's producer to that step's box.
  void AddConversions() {
    // Only a profile of this very placement: one step per group, in the groups' order.
    size_t group_steps = 0;
    for (const ReportDocument& step : steps_) group_steps += IsConversion(step) ? 0 : 1;
    if (group_steps != groups_.size()) return;
    size_t groups_seen = 0;
    for (const ReportDocument& step : steps_) {
      if (!IsConversion(step)) {
        ++groups_seen;
        continue;
      }
      if (groups_seen >= groups_.size()) continue;
      const std::optional<ValueId> value = graph_.FindValue(step["node_name"].get<std::string>());
      if (!value) continue;
      const int from = BoxOfValue(*value);
      const int to = ReaderIn(groups_[groups_seen], *value);
      if (from < 0 || to < 0) continue;
      std::string& label = out_.edges[static_cast<size_t>(EdgeBetween(from, to))].conversion;
      label += fmt::format(
          "{}{}→{} {}", label.empty() ? "" : "\n", step["from_layout"].get<std::string>(),
          step["to_layout"].get<std::string>(), FormatDuration(step["ms"].get<double>()));
    }
  }

  // The box of the first node of `group` that reads `value`; -1 when none does.
  static bool IsConversion(const ReportDocument& step) { return step["kind"] == "conversion"; }

  int ReaderIn(const GroupView& group, ValueId value) const {
    for (int n : group.nodes) {
      for (ValueId in : graph_.node(n).inputs) {
        if (in == value) return box_of_node_[static_cast<size_t>(n)];
      }
    }
    return -1;
  }

  const Graph& graph_;
  const ReportDocument& steps_;
  std::vector<GroupView> groups_;
  const bool profiled_;
  double run_total_ms_ = 0;
  std::vector<int> box_of_node_;
  std::map<ValueId, int> box_of_input_;
  std::map<std::pair<int, int>, int> edge_index_;
  ReportGraph out_;
};

}  // namespace

ReportGraph BuildReportGraph(const Graph& graph, const ReportDocument& document) {
  return Builder(graph, document).Build();
}

ReportGraph BuildReportGraph(const Graph& graph, const OptimizeReport& report,
                             const RunProfile& in_run) {
  return BuildReportGraph(graph, OptimizeReportDocument(graph, report, in_run, {}));
}

}  // namespace collage
