#include "search/placement_report.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "search/finalist_summary.h"

namespace collage {
namespace {

constexpr int kBoxWidth = 220;
constexpr int kBoxHeight = 46;
constexpr int kColumnGap = 30;
constexpr int kRowGap = 26;
constexpr int kMargin = 20;

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A fixed palette by backend name, so that a backend keeps its colour across reports.
std::string ColourOf(const std::string& backend) {
  static const std::map<std::string, std::string> known = {
      {"native", "#9e9e9e"}, {"onednn", "#1f77b4"}, {"xnnpack", "#2ca02c"},
      {"xnnpack_graph", "#98df8a"}, {"openblas", "#d62728"}, {"eigen", "#9467bd"},
      {"cublas", "#ff7f0e"}, {"cudnn", "#8c564b"}};
  if (auto it = known.find(backend); it != known.end()) return it->second;
  static const char* extra[] = {"#e377c2", "#bcbd22", "#17becf", "#7f7f7f", "#aec7e8"};
  return extra[std::hash<std::string>()(backend) % 5];
}

std::string Ms(double ms) { return ms < 1.0 ? fmt::format("{:.0f} us", ms * 1000) : fmt::format("{:.2f} ms", ms); }

// A region the two-level search made has no cost of its own.
std::string CostOf(const GroupReport& group) {
  return group.measured_alone ? Ms(group.cost_ms) : "in the whole plan";
}

// A group's time in the profiled run, and that time over its estimate (how far the additive
// cost was off for it).
std::string InRunOf(const GroupReport& group, bool profiled) {
  return profiled ? Ms(group.in_run_ms) : "not profiled";
}
std::string RatioOf(const GroupReport& group, bool profiled) {
  if (!profiled || !group.measured_alone || group.cost_ms <= 0) return "-";
  return fmt::format("{:.2f}x", group.in_run_ms / group.cost_ms);
}

// The end-to-end decision: every finalist with its estimate, median, ratio to the kept one and
// rounds won, the kept one marked; then the estimate against the run and the margin.
std::string FinalistsHtml(const OptimizeReport& report) {
  const FinalistReport* kept = KeptFinalist(report);
  if (kept == nullptr) {
    return "<h2>End to end</h2><p>Not measured end to end (the end-to-end decision was skipped): "
           "the search's plan is kept on its estimate.</p>\n";
  }
  std::string html = fmt::format(
      "<h2>End-to-end decision</h2><p>{} finalists measured side by side in {} interleaved "
      "rounds; the kept one's round-to-round spread (p90 - p10) / median: {:.1f}%.</p>\n"
      "<table><tr><th>finalist</th><th>estimated</th><th>median</th><th>vs kept</th>"
      "<th>rounds won</th><th></th></tr>\n",
      report.finalists.size(), report.decision_rounds, 100 * report.round_spread);
  for (const FinalistReport& f : report.finalists) {
    if (!f.skipped.empty()) {
      html += fmt::format("<tr><td>{}</td><td colspan=\"5\">skipped: {}</td></tr>\n",
                          Escape(FinalistLabel(f.name)), Escape(f.skipped));
      continue;
    }
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2f}x</td><td>{}</td><td>{}</td></tr>\n",
        Escape(FinalistLabel(f.name)), f.estimated_ms > 0 ? Ms(f.estimated_ms) : "-",
        Ms(f.median_ms), f.ratio_to_kept, f.rounds_won, f.kept ? "<b>kept</b>" : "");
  }
  html += "</table>\n";
  const EstimateAgainstRun check = CompareEstimateWithRun(report);
  if (check.finalist != nullptr) {
    html +=
        fmt::format("<p>{}: estimated {}, measured {} end to end (estimate {}).</p>\n",
                    Escape(FinalistLabel(check.finalist->name)), Ms(check.estimated_ms),
                    Ms(check.measured_ms), EstimateError(check.estimated_ms, check.measured_ms));
  }
  return html;
}

// Every layout conversion of the running placement with its time in the run.
std::string ConversionsHtml(const RunProfile& in_run) {
  std::string rows;
  double total = 0;
  int count = 0;
  for (const NodeTiming& step : in_run.nodes) {
    if (step.op_type != "LayoutConversion") continue;
    ++count;
    total += step.milliseconds;
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        Escape(step.node_name), Escape(step.rule), Escape(step.backend),
                        Ms(step.milliseconds));
  }
  if (in_run.nodes.empty()) return "";
  std::string html =
      fmt::format("<h2>Layout conversions in the run</h2><p>{} conversions, {} in all.</p>\n",
                  count, Ms(total));
  if (count > 0) {
    html += "<table><tr><th>value</th><th>layouts</th><th>backend</th><th>in run</th></tr>\n" +
            rows + "</table>\n";
  }
  return html;
}

std::string OpsOf(const Graph& graph, const GroupReport& group) {
  std::string ops;
  for (int n : group.nodes) ops += (ops.empty() ? "" : "+") + graph.node(n).op_type;
  return ops.size() > 30 ? ops.substr(0, 27) + "..." : ops;
}

std::string RivalsText(const GroupReport& group) {
  std::string text;
  for (const GroupAlternative& a : group.alternatives) {
    text += fmt::format("\n{} {}{}: {}", a.backend, a.rule,
                        a.same_nodes ? "" : fmt::format(" ({} nodes)", a.num_nodes),
                        a.valid ? Ms(a.cost_ms) : "invalid — " + a.reason);
  }
  return text;
}

}  // namespace

std::string PlacementReportHtml(const Graph& graph, const OptimizeReport& report,
                                const RunProfile& in_run) {
  const size_t num_groups = report.groups.size();
  const bool profiled = !in_run.nodes.empty();
  // Group of each node, then a layer per group: one below the deepest group it reads from.
  std::vector<int> group_of(static_cast<size_t>(graph.num_nodes()), -1);
  for (size_t g = 0; g < num_groups; ++g) {
    for (int n : report.groups[g].nodes) group_of[static_cast<size_t>(n)] = static_cast<int>(g);
  }
  std::vector<std::set<int>> producers(num_groups);
  for (size_t g = 0; g < num_groups; ++g) {
    for (int n : report.groups[g].nodes) {
      for (ValueId in : graph.node(n).inputs) {
        if (in == kNoValue) continue;
        const NodeId p = graph.value(in).producer;
        if (p >= 0 && group_of[static_cast<size_t>(p)] != static_cast<int>(g)) {
          producers[g].insert(group_of[static_cast<size_t>(p)]);
        }
      }
    }
  }
  std::vector<int> layer(num_groups, 0);
  std::vector<int> column(num_groups, 0);
  std::map<int, int> width_of_layer;
  for (size_t g = 0; g < num_groups; ++g) {  // groups are in execution order
    for (int p : producers[g]) layer[g] = std::max(layer[g], layer[static_cast<size_t>(p)] + 1);
    column[g] = width_of_layer[layer[g]]++;
  }
  int columns = 1, layers = 1;
  for (const auto& [l, w] : width_of_layer) {
    columns = std::max(columns, w);
    layers = std::max(layers, l + 1);
  }
  auto x_of = [&](size_t g) { return kMargin + column[g] * (kBoxWidth + kColumnGap); };
  auto y_of = [&](size_t g) { return kMargin + layer[g] * (kBoxHeight + kRowGap); };
  const int svg_width = 2 * kMargin + columns * (kBoxWidth + kColumnGap);
  const int svg_height = 2 * kMargin + layers * (kBoxHeight + kRowGap);

  struct BackendTotals {
    int nodes = 0;
    double estimated_ms = 0;
    double in_run_ms = 0;
  };
  std::map<std::string, BackendTotals> per_backend;
  double total_ms = 0;
  for (const GroupReport& group : report.groups) {
    BackendTotals& totals = per_backend[group.backend];
    totals.nodes += static_cast<int>(group.nodes.size());
    totals.estimated_ms += group.cost_ms;
    totals.in_run_ms += group.in_run_ms;
    total_ms += group.cost_ms;
  }

  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>collage placement: {}</title>\n"
      "<style>body{{font-family:sans-serif;margin:20px}} table{{border-collapse:collapse}} "
      "td,th{{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}} "
      ".swatch{{display:inline-block;width:12px;height:12px;margin-right:4px}} "
      "svg text{{font-size:11px;fill:#fff}}</style></head><body>\n"
      "<h1>Placement of {}</h1>\n<p>{} nodes in {} groups; {} candidates offered ({} distinct), {} "
      "measured now, {} from the cost database, {} invalid; search estimate {}{}.</p>\n",
      Escape(graph.name()), Escape(graph.name()), graph.num_nodes(), num_groups, report.candidates,
      report.distinct_candidates, report.measured, report.cache_hits, report.invalid,
      Ms(report.estimated_ms), report.search_states_cut > 0 ? " (beam-bounded)" : " (exact)");
  html += FinalistsHtml(report);
  html +=
      "<h2>Backends</h2><p>Estimated: the search's costs, each group measured alone; in run: "
      "the groups' mean time in profiled runs of the kept placement.</p>\n<table><tr>"
      "<th>backend</th><th>nodes</th><th>estimated</th><th>share of the estimate</th>"
      "<th>in run</th></tr>\n";
  for (const auto& [backend, totals] : per_backend) {
    html += fmt::format(
        "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td>{}</td>"
        "<td>{}</td><td>{:.1f}%</td><td>{}</td></tr>\n",
        ColourOf(backend), Escape(backend), totals.nodes, Ms(totals.estimated_ms),
        total_ms > 0 ? 100.0 * totals.estimated_ms / total_ms : 0.0,
        profiled ? Ms(totals.in_run_ms) : "not profiled");
  }
  html += "</table>\n<h2>Graph</h2><p>One box per group, in layers by data dependence; hover "
          "over a box for its rivals.</p>\n";
  html += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\">\n",
                      svg_width, svg_height);
  for (size_t g = 0; g < num_groups; ++g) {
    for (int p : producers[g]) {
      const size_t q = static_cast<size_t>(p);
      html += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\"/>\n",
                          x_of(q) + kBoxWidth / 2, y_of(q) + kBoxHeight, x_of(g) + kBoxWidth / 2, y_of(g));
    }
  }
  for (size_t g = 0; g < num_groups; ++g) {
    const GroupReport& group = report.groups[g];
    html += fmt::format(
        "<g><title>group {}: {} {} — estimated {}, in run {}\nnodes: {}{}</title>"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"5\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\">{} {} · {}</text></g>\n",
        g, Escape(group.backend), Escape(group.rule), CostOf(group), InRunOf(group, profiled),
        Escape(graph.node(group.nodes.front()).name), Escape(RivalsText(group)), x_of(g), y_of(g),
        kBoxWidth, kBoxHeight, ColourOf(group.backend), x_of(g) + 6, y_of(g) + 18,
        Escape(OpsOf(graph, group)), x_of(g) + 6, y_of(g) + 36, Escape(group.backend),
        Escape(group.rule.substr(0, 18)), CostOf(group));
  }
  html +=
      "</svg>\n<h2>Groups and their rivals</h2>\n<table><tr><th>#</th><th>nodes</th>"
      "<th>backend</th><th>rule</th><th>estimated</th><th>in run</th><th>in run / estimated</th>"
      "<th>rivals</th></tr>\n";
  for (size_t g = 0; g < num_groups; ++g) {
    const GroupReport& group = report.groups[g];
    std::string rivals;
    for (const GroupAlternative& a : group.alternatives) {
      rivals += fmt::format("{}{} {}{}: {}", rivals.empty() ? "" : "<br>", Escape(a.backend), Escape(a.rule),
                            a.same_nodes ? "" : fmt::format(" ({} nodes)", a.num_nodes),
                            a.valid ? Ms(a.cost_ms) : "invalid — " + Escape(a.reason));
    }
    std::string names;
    for (int n : group.nodes) names += (names.empty() ? "" : ", ") + Escape(graph.node(n).name);
    html += fmt::format(
        "<tr><td>{}</td><td>{} ({})</td><td><span class=\"swatch\" style=\"background:{}\">"
        "</span>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        g, names, Escape(OpsOf(graph, group)), ColourOf(group.backend), Escape(group.backend),
        Escape(group.rule), CostOf(group), InRunOf(group, profiled), RatioOf(group, profiled),
        rivals.empty() ? "none" : rivals);
  }
  html += "</table>\n" + ConversionsHtml(in_run) + "</body></html>\n";
  return html;
}

}  // namespace collage
