#include "report/placement_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <map>

#include "collage/available_backends.h"
#include "collage/device_fingerprint.h"
#include "report/report_graph.h"
#include "report/report_graph_drawing.h"
#include "report/report_text.h"
#include "session/session_access.h"

namespace collage {
namespace {

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:20px;color:#222}"
    "h1{margin-bottom:4px}.subtitle{color:#555;margin-top:0}"
    "table{border-collapse:collapse;margin-bottom:8px}"
    "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:left}"
    "th{background:#f2f2f2}td.num{text-align:right}"
    "tr.kept td{background:#e8f5e9;font-weight:bold}"
    ".swatch{display:inline-block;width:12px;height:12px;margin-right:4px;border:1px solid #555;"
    "vertical-align:middle}"
    ".legend span.item{margin-right:14px;font-size:13px;white-space:nowrap}"
    ".graph{overflow:auto;border:1px solid #ddd;padding:6px;max-width:100%}"
    // A wide graph shrinks to the page's width (all of it in view); a narrow one keeps its size.
    ".graph svg{max-width:100%;height:auto}"
    "td.rivals{min-width:260px}"
    ".verdict{font-size:15px}";

constexpr size_t kNamesListed = 6;

std::string Escape(const std::string& text) { return XmlEscape(text); }

std::string Swatch(const std::string& backend) {
  return fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>",
                     BackendColour(backend));
}

double Ms(const ReportDocument& j, const char* key) { return j[key].get<double>(); }
const std::string& Text(const ReportDocument& j, const char* key) {
  return j[key].get_ref<const std::string&>();
}

// A region the two-level search made has no cost of its own.
std::string EstimateOf(const ReportDocument& group) {
  return group["measured_alone"].get<bool>() ? FormatDuration(Ms(group, "estimated_ms"))
                                             : "in whole plans only";
}

std::string InRunOf(const ReportDocument& group, bool profiled) {
  return profiled ? FormatDuration(Ms(group, "in_run_ms")) : "not profiled";
}

// That time over its estimate: how far the additive cost was off for the group.
std::string RatioOf(const ReportDocument& group, bool profiled) {
  const double estimated = Ms(group, "estimated_ms");
  if (!profiled || !group["measured_alone"].get<bool>() || estimated <= 0) return "-";
  return fmt::format("{:.2f}x", Ms(group, "in_run_ms") / estimated);
}

std::string Percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100 * part / whole) : "-";
}

bool Ran(const ReportDocument& finalist) { return Text(finalist, "skipped").empty(); }
double RatioToKept(const ReportDocument& finalist) { return Ms(finalist, "ratio_to_kept"); }

// The best (fastest) single-backend finalist that ran, and the slowest finalist that ran.
const ReportDocument* BestSingleBackend(const ReportDocument& finalists) {
  const ReportDocument* best = nullptr;
  for (const ReportDocument& f : finalists) {
    if (!Ran(f) || Text(f, "kind") != "single-backend") continue;
    if (best == nullptr || RatioToKept(f) < RatioToKept(*best)) best = &f;
  }
  return best;
}
const ReportDocument* Slowest(const ReportDocument& finalists) {
  const ReportDocument* slowest = nullptr;
  for (const ReportDocument& f : finalists) {
    if (Ran(f) && (slowest == nullptr || RatioToKept(f) > RatioToKept(*slowest))) slowest = &f;
  }
  return slowest;
}
const ReportDocument* Kept(const ReportDocument& finalists) {
  for (const ReportDocument& f : finalists) {
    if (f["kept"].get<bool>()) return &f;
  }
  return nullptr;
}

// The end-to-end decision: every finalist with its estimate, its median, its time against the
// kept one's (head to head, round by round) and its speed-up over the slowest; the kept one's
// row marked, and a sentence saying what keeping it gains.
std::string FinalistsHtml(const ReportDocument& document) {
  const ReportDocument& finalists = document["finalists"];
  const ReportDocument* kept = Kept(finalists);
  if (kept == nullptr) {
    return "<h2>End to end</h2><p>Not measured end to end (the end-to-end decision was skipped): "
           "the search's plan is kept on its estimate.</p>\n";
  }
  const ReportDocument* slowest = Slowest(finalists);
  std::string html = fmt::format(
      "<h2>End-to-end decision</h2>\n<p class=\"verdict\">Kept: <b>{}</b> ({}), {} end to end",
      Escape(Text(*kept, "label")), Escape(Text(document, "placement_in_brief")),
      FormatDuration(Ms(*kept, "median_ms")));
  const ReportDocument* best_single = BestSingleBackend(finalists);
  if (best_single != nullptr && best_single != kept && RatioToKept(*best_single) > 0) {
    html += fmt::format("; {:.2f}x faster than the best single backend ({})",
                        RatioToKept(*best_single), Escape(Text(*best_single, "label")));
  }
  if (slowest != nullptr && slowest != kept && slowest != best_single &&
      RatioToKept(*slowest) > 0) {
    html += fmt::format(", {:.2f}x faster than the slowest ({})", RatioToKept(*slowest),
                        Escape(Text(*slowest, "label")));
  }
  const ReportDocument* search_plan = nullptr;
  for (const ReportDocument& f : finalists) {
    const std::string& kind = Text(f, "kind");
    if (Ran(f) && (kind == "op-level" || kind == "two-level")) search_plan = &f;
  }
  if (search_plan != nullptr && search_plan != kept && RatioToKept(*search_plan) > 0) {
    html += fmt::format("; the search's plan ({}) took {:.2f}x its time",
                        Escape(Text(*search_plan, "label")), RatioToKept(*search_plan));
  }
  html += fmt::format(
      ".</p>\n<p>{} finalists measured side by side in {} interleaved rounds; the kept one's "
      "round-to-round spread (p90 - p10) / median: {:.1f}%. <i>time / kept</i>: the median over "
      "the rounds of its time over the kept one's in the same round.</p>\n"
      "<table><tr><th>finalist</th><th>estimated</th><th>median</th><th>time / kept</th>"
      "<th>speed-up over the slowest</th><th>rounds won</th><th></th></tr>\n",
      finalists.size(), document["decision_rounds"].get<int>(), 100 * Ms(document, "round_spread"));
  for (const ReportDocument& f : finalists) {
    if (!Ran(f)) {
      html += fmt::format("<tr><td>{}</td><td colspan=\"6\">skipped: {}</td></tr>\n",
                          Escape(Text(f, "label")), Escape(Text(f, "skipped")));
      continue;
    }
    const std::string speedup = slowest != nullptr && RatioToKept(f) > 0
                                    ? fmt::format("{:.2f}x", RatioToKept(*slowest) / RatioToKept(f))
                                    : "-";
    const bool is_kept = f["kept"].get<bool>();
    const double estimated = Ms(f, "estimated_ms");
    html += fmt::format(
        "<tr{}><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{:.2f}x</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        is_kept ? " class=\"kept\"" : "", Escape(Text(f, "label")),
        estimated > 0 ? FormatDuration(estimated) : "-", FormatDuration(Ms(f, "median_ms")),
        RatioToKept(f), speedup, f["rounds_won"].get<int>(), is_kept ? "&#10004; kept" : "");
  }
  html += "</table>\n";
  const ReportDocument& check = document["estimate_against_run"];
  if (!check.is_null()) {
    html += fmt::format("<p>{}: estimated {}, measured {} end to end (estimate {}).</p>\n",
                        Escape(Text(check, "finalist")), FormatDuration(Ms(check, "estimated_ms")),
                        FormatDuration(Ms(check, "measured_ms")),
                        EstimateError(Ms(check, "estimated_ms"), Ms(check, "measured_ms")));
  }
  return html;
}

double RunTotal(const ReportDocument& steps) {
  double total = 0;
  for (const ReportDocument& step : steps) total += Ms(step, "ms");
  return total;
}

// Per backend: nodes, the estimate and its share, the time in the run and its share of the
// run (which a region, measured only in whole plans, has too).
std::string BackendsHtml(const ReportDocument& document) {
  struct Totals {
    size_t nodes = 0;
    double estimated_ms = 0;
    bool all_estimated = true;
    double in_run_ms = 0;
  };
  std::map<std::string, Totals> per_backend;
  double estimated_total = 0;
  for (const ReportDocument& group : document["groups"]) {
    Totals& totals = per_backend[Text(group, "backend")];
    totals.nodes += group["nodes"].get<size_t>();
    totals.estimated_ms += Ms(group, "estimated_ms");
    totals.all_estimated = totals.all_estimated && group["measured_alone"].get<bool>();
    totals.in_run_ms += Ms(group, "in_run_ms");
    estimated_total += Ms(group, "estimated_ms");
  }
  const ReportDocument& steps = document["in_run_steps"];
  const double run_total = RunTotal(steps);
  const bool profiled = !steps.empty();
  std::string html =
      "<h2>Backends</h2><p>Estimated: the search's costs, each group measured alone; in run: the "
      "groups' time in profiled runs of the kept placement (the rest of the run is layout "
      "conversions).</p>\n<table><tr><th>backend</th><th>nodes</th><th>estimated</th>"
      "<th>share of the estimate</th><th>in run</th><th>share of the run</th></tr>\n";
  for (const auto& [backend, totals] : per_backend) {
    const bool estimated = totals.all_estimated;
    html += fmt::format(
        "<tr><td>{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
        Swatch(backend), Escape(backend), totals.nodes,
        estimated ? FormatDuration(totals.estimated_ms) : "in whole plans only",
        estimated ? Percent(totals.estimated_ms, estimated_total) : "-",
        profiled ? FormatDuration(totals.in_run_ms) : "not profiled",
        profiled ? Percent(totals.in_run_ms, run_total) : "-");
  }
  return html + "</table>\n";
}

std::string LegendHtml(const ReportDocument& document) {
  std::map<std::string, bool> backends;
  for (const ReportDocument& group : document["groups"]) backends[Text(group, "backend")] = true;
  std::string html = "<p class=\"legend\">";
  for (const auto& [backend, unused] : backends)
    html += "<span class=\"item\">" + Swatch(backend) + Escape(backend) + "</span>";
  return html +
         "<span class=\"item\"><svg width=\"36\" height=\"10\"><line x1=\"0\" y1=\"5\" x2=\"36\" "
         "y2=\"5\" stroke=\"#d35400\" stroke-width=\"2\"/></svg> layout conversion (its time in "
         "the run)</span></p>\n";
}

std::string GraphHtml(const Graph& graph, const ReportDocument& document, ReportLayout layout) {
  const GraphDrawing drawing = DrawReportGraph(BuildReportGraph(graph, document), layout);
  return fmt::format(
      "<h2>Graph</h2><p>One box per group of the placement, its backend and rule, its ops, "
      "<i>est</i> its estimated cost (measured alone) and <i>run</i> its time in the "
      "profiled runs; an arrow where a value flows, orange where the run converted its layout; a "
      "dashed frame around a region's nodes (a two-level region, or a group of more than 8 "
      "nodes). Hover over a box for its nodes and rivals. ({}.)</p>\n{}"
      "<div class=\"graph\">\n{}</div>\n",
      Escape(drawing.how), LegendHtml(document), drawing.svg);
}

std::string OpsOf(const ReportDocument& group) {
  std::string ops;
  for (const ReportDocument& op : group["op_types"])
    ops += (ops.empty() ? "" : "+") + op.get<std::string>();
  return Shorten(ops, 40);
}

std::string RivalsOf(const ReportDocument& group) {
  std::string rivals;
  for (const ReportDocument& a : group["alternatives"]) {
    rivals += fmt::format(
        "{}{} {}{}: {}", rivals.empty() ? "" : "<br>", Escape(Text(a, "backend")),
        Escape(RuleShown(a)),
        a["same_nodes"].get<bool>() ? "" : fmt::format(" ({} nodes)", a["nodes"].get<int>()),
        a["valid"].get<bool>() ? FormatDuration(Ms(a, "estimated_ms"))
                               : "invalid — " + Escape(Text(a, "reason")));
  }
  return rivals.empty() ? "none" : rivals;
}

std::string GroupsHtml(const ReportDocument& document, bool profiled) {
  std::string html =
      "<h2>Groups and their rivals</h2>\n<table><tr><th>#</th><th>nodes</th>"
      "<th>backend</th><th>rule</th><th>estimated</th><th>in run</th><th>in run / estimated</th>"
      "<th>rivals</th></tr>\n";
  const ReportDocument& groups = document["groups"];
  for (size_t g = 0; g < groups.size(); ++g) {
    const ReportDocument& group = groups[g];
    const ReportDocument& node_names = group["node_names"];
    // A region's hundred names would fill the page: the first few and the count.
    std::string names;
    for (size_t i = 0; i < node_names.size() && i < kNamesListed; ++i)
      names += (names.empty() ? "" : ", ") + Escape(node_names[i].get<std::string>());
    if (node_names.size() > kNamesListed)
      names += fmt::format(", … ({} nodes in all)", node_names.size());
    html += fmt::format(
        "<tr><td>{}</td><td>{} ({})</td><td>{}{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"rivals\">{}</td></tr>\n",
        g, names, Escape(OpsOf(group)), Swatch(Text(group, "backend")),
        Escape(Text(group, "backend")), Escape(RuleShown(group)), EstimateOf(group),
        InRunOf(group, profiled), RatioOf(group, profiled), RivalsOf(group));
  }
  return html + "</table>\n";
}

// Every layout conversion of the running placement with its time in the run.
std::string ConversionsHtml(const ReportDocument& steps) {
  if (steps.empty()) return "";
  std::string rows;
  double total = 0;
  int count = 0;
  for (const ReportDocument& step : steps) {
    if (Text(step, "kind") != "conversion") continue;
    ++count;
    total += Ms(step, "ms");
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>\n",
                        Escape(Text(step, "node_name")), Escape(Text(step, "rule")),
                        Escape(Text(step, "backend")), FormatDuration(Ms(step, "ms")));
  }
  std::string html = fmt::format(
      "<h2>Layout conversions in the run</h2><p>{} conversions, {} in all ({} of the run).</p>\n",
      count, FormatDuration(total), Percent(total, RunTotal(steps)));
  if (count > 0) {
    html += "<table><tr><th>value</th><th>layouts</th><th>backend</th><th>in run</th></tr>\n" +
            rows + "</table>\n";
  }
  return html;
}

// This machine (DeviceFingerprint), the thread count, the date (UTC) and every backend
// library's version: what a reader needs to know whether the page's times apply to them.
std::string MeasuredOn(int threads) {
  std::string libraries;
  for (const BackendInfo& backend : AvailableBackends()) {
    libraries += (libraries.empty() ? "" : ", ") + backend.name + " (" + backend.version + ")";
  }
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", &utc);
  return fmt::format("{}, {} thread{}, {}; libraries: {}", DeviceFingerprint(), threads,
                     threads == 1 ? "" : "s", date, libraries);
}

}  // namespace

std::string PlacementReportHtml(const Graph& graph, const ReportDocument& document,
                                const PlacementReportOptions& options) {
  const std::string title = options.title.empty() ? graph.name() : options.title;
  const bool profiled = !document["in_run_steps"].empty();
  const ReportDocument& measurements = document["measurements"];
  const size_t groups = document["groups"].size();
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>collage placement: {0}</title>\n"
      "<style>{1}</style></head><body>\n<h1>Placement of {0}</h1>\n"
      "<p class=\"subtitle\">{2} nodes in {3} group{12}; {4} candidates offered ({5} distinct), "
      "{6} "
      "measured now, {7} from the cost database, {8} invalid; {9} search, estimate {10}{11}.</p>\n",
      Escape(title), kStyle, document["graph_nodes"].get<int>(), groups,
      measurements["candidates_offered"].get<int>(), measurements["candidates_distinct"].get<int>(),
      measurements["measured"].get<int>(), measurements["cache_hits"].get<int>(),
      measurements["invalid"].get<int>(), Text(document, "search"),
      FormatDuration(Ms(document, "estimated_ms")),
      measurements["search_exact"].get<bool>() ? " (exact)" : " (beam-bounded)",
      groups == 1 ? "" : "s");
  if (!options.measured_on.empty()) {
    html += "<p class=\"subtitle\">Measured on " + Escape(options.measured_on) + ".</p>\n";
  }
  html += FinalistsHtml(document);
  html += BackendsHtml(document);
  html += GraphHtml(graph, document, options.layout);
  html += GroupsHtml(document, profiled);
  html += ConversionsHtml(document["in_run_steps"]);
  return html + "</body></html>\n";
}

std::string PlacementReportHtml(const Graph& graph, const OptimizeReport& report,
                                const RunProfile& in_run, const PlacementReportOptions& options) {
  return PlacementReportHtml(graph, OptimizeReportDocument(graph, report, in_run, {}), options);
}

std::string PlacementReportHtml(const Session& session, const OptimizeReport& report,
                                const RunProfile& in_run, const PlacementReportOptions& options) {
  PlacementReportOptions page = options;
  if (page.measured_on.empty()) page.measured_on = MeasuredOn(session.num_threads());
  return PlacementReportHtml(SessionGraph(session), report, in_run, page);
}

}  // namespace collage
