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

std::string OpsLine(const Graph& graph, const GroupReport& group) {
  std::string ops;
  for (int n : group.nodes) ops += (ops.empty() ? "" : "+") + graph.node(n).op_type;
  if (group.nodes.size() > 1) ops = fmt::format("{} ops: {}", group.nodes.size(), ops);
  return Shorten(ops, kLineChars);
}

std::string CostLine(const GroupReport& group, bool profiled) {
  std::string line = "est " + FormatDuration(group.cost_ms);
  if (profiled) line += " · run " + FormatDuration(group.in_run_ms);
  return line;
}

std::string RivalsText(const GroupReport& group) {
  std::string text;
  for (const GroupAlternative& a : group.alternatives) {
    text += fmt::format("\n  {} {}{}: {}", a.backend, RuleInPrecision(a.rule, a.precision),
                        a.same_nodes ? "" : fmt::format(" ({} nodes)", a.num_nodes),
                        a.valid ? FormatDuration(a.cost_ms) : "invalid: " + a.reason);
  }
  return text.empty() ? "\nno rivals" : "\nrivals:" + text;
}

class Builder {
 public:
  Builder(const Graph& graph, const OptimizeReport& report, const RunProfile& in_run)
      : graph_(graph),
        report_(report),
        in_run_(in_run),
        profiled_(!in_run.nodes.empty()),
        box_of_node_(static_cast<size_t>(graph.num_nodes()), -1) {
    for (const NodeTiming& step : in_run.nodes) run_total_ms_ += step.milliseconds;
  }

  ReportGraph Build() {
    for (ValueId v : graph_.inputs()) {
      if (graph_.value(v).is_constant()) continue;
      box_of_input_[v] = AddTerminal("input", v);
    }
    for (size_t g = 0; g < report_.groups.size(); ++g) {
      const GroupReport& group = report_.groups[g];
      if (group.nodes.empty()) continue;
      if (group.measured_alone && group.nodes.size() <= kMaxNodesInABox)
        AddGroup(group);
      else
        AddRegion(group);
    }
    for (size_t g = 0; g < report_.groups.size(); ++g) AddEdgesInto(report_.groups[g]);
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

  void AddGroup(const GroupReport& group) {
    ReportBox box;
    box.lines = {
        Shorten(group.backend + " · " + RuleInPrecision(group.rule, group.precision), kLineChars),
        OpsLine(graph_, group), CostLine(group, profiled_)};
    box.fill = BackendColour(group.backend);
    std::string names;
    for (int n : group.nodes) names += (names.empty() ? "" : ", ") + graph_.node(n).name;
    box.tooltip = fmt::format(
        "{} {}: estimated {}{}\nnodes: {}{}", group.backend,
        RuleInPrecision(group.rule, group.precision), FormatDuration(group.cost_ms),
        profiled_ ? ", in run " + FormatDuration(group.in_run_ms) : "", names, RivalsText(group));
    const int id = AddBox(std::move(box));
    for (int n : group.nodes) box_of_node_[static_cast<size_t>(n)] = id;
  }

  // A two-level region is measured only within whole plans: its share of the profiled run
  // says how much of the model it carries.
  void AddRegion(const GroupReport& group) {
    ReportCluster cluster;
    cluster.colour = BackendColour(group.backend);
    cluster.lines.push_back(
        Shorten(fmt::format("region on {} ({}) · {} nodes", group.backend,
                            RuleInPrecision(group.rule, group.precision), group.nodes.size()),
                60));
    std::string costs = group.measured_alone ? "est " + FormatDuration(group.cost_ms) : "";
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
                                group.backend, RuleInPrecision(group.rule, group.precision));
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

  void AddEdgesInto(const GroupReport& group) {
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
    size_t steps = 0;
    for (const NodeTiming& step : in_run_.nodes) steps += IsConversion(step) ? 0 : 1;
    if (steps != report_.groups.size()) return;
    size_t groups_seen = 0;
    for (size_t s = 0; s < in_run_.nodes.size(); ++s) {
      const NodeTiming& step = in_run_.nodes[s];
      if (!IsConversion(step)) {
        ++groups_seen;
        continue;
      }
      if (groups_seen >= report_.groups.size()) continue;
      const std::optional<ValueId> value = graph_.FindValue(step.node_name);
      if (!value) continue;
      const int from = BoxOfValue(*value);
      const int to = ReaderIn(report_.groups[groups_seen], *value);
      if (from < 0 || to < 0) continue;
      std::string& label = out_.edges[static_cast<size_t>(EdgeBetween(from, to))].conversion;
      label += fmt::format("{}{}→{} {}", label.empty() ? "" : "\n", step.from_layout,
                           step.to_layout, FormatDuration(step.milliseconds));
    }
  }

  // The box of the first node of `group` that reads `value`; -1 when none does.
  int ReaderIn(const GroupReport& group, ValueId value) const {
    for (int n : group.nodes) {
      for (ValueId in : graph_.node(n).inputs) {
        if (in == value) return box_of_node_[static_cast<size_t>(n)];
      }
    }
    return -1;
  }

  const Graph& graph_;
  const OptimizeReport& report_;
  const RunProfile& in_run_;
  const bool profiled_;
  double run_total_ms_ = 0;
  std::vector<int> box_of_node_;
  std::map<ValueId, int> box_of_input_;
  std::map<std::pair<int, int>, int> edge_index_;
  ReportGraph out_;
};

}  // namespace

ReportGraph BuildReportGraph(const Graph& graph, const OptimizeReport& report,
                             const RunProfile& in_run) {
  return Builder(graph, report, in_run).Build();
}

}  // namespace collage
