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

// A region the two-level search made has no cost of its own.
std::string EstimateOf(const GroupReport& group) {
  return group.measured_alone ? FormatDuration(group.cost_ms) : "in whole plans only";
}

std::string InRunOf(const GroupReport& group, bool profiled) {
  return profiled ? FormatDuration(group.in_run_ms) : "not profiled";
}

// That time over its estimate: how far the additive cost was off for the group.
std::string RatioOf(const GroupReport& group, bool profiled) {
  if (!profiled || !group.measured_alone || group.cost_ms <= 0) return "-";
  return fmt::format("{:.2f}x", group.in_run_ms / group.cost_ms);
}

std::string Percent(double part, double whole) {
  return whole > 0 ? fmt::format("{:.1f}%", 100 * part / whole) : "-";
}

// The best (fastest) single-backend finalist that ran, and the slowest finalist that ran.
const FinalistReport* BestSingleBackend(const OptimizeReport& report) {
  const FinalistReport* best = nullptr;
  for (const FinalistReport& f : report.finalists) {
    if (!f.skipped.empty() || f.source.kind != PlacementSource::Kind::kSingleBackend) continue;
    if (best == nullptr || f.ratio_to_kept < best->ratio_to_kept) best = &f;
  }
  return best;
}
const FinalistReport* Slowest(const OptimizeReport& report) {
  const FinalistReport* slowest = nullptr;
  for (const FinalistReport& f : report.finalists) {
    if (f.skipped.empty() && (slowest == nullptr || f.ratio_to_kept > slowest->ratio_to_kept))
      slowest = &f;
  }
  return slowest;
}

// The end-to-end decision: every finalist with its estimate, its median, its time against the
// kept one's (head to head, round by round) and its speed-up over the slowest; the kept one's
// row marked, and a sentence saying what keeping it gains.
std::string FinalistsHtml(const OptimizeReport& report) {
  const FinalistReport* kept = KeptFinalist(report);
  if (kept == nullptr) {
    return "<h2>End to end</h2><p>Not measured end to end (the end-to-end decision was skipped): "
           "the search's plan is kept on its estimate.</p>\n";
  }
  const FinalistReport* slowest = Slowest(report);
  std::string html = fmt::format(
      "<h2>End-to-end decision</h2>\n<p class=\"verdict\">Kept: <b>{}</b> ({}), {} end to end",
      Escape(PlacementSourceLabel(kept->source)), Escape(PlacementInBrief(report)),
      FormatDuration(kept->median_ms));
  const FinalistReport* best_single = BestSingleBackend(report);
  if (best_single != nullptr && best_single != kept && best_single->ratio_to_kept > 0) {
    html +=
        fmt::format("; {:.2f}x faster than the best single backend ({})",
                    best_single->ratio_to_kept, Escape(PlacementSourceLabel(best_single->source)));
  }
  if (slowest != nullptr && slowest != kept && slowest != best_single &&
      slowest->ratio_to_kept > 0) {
    html += fmt::format(", {:.2f}x faster than the slowest ({})", slowest->ratio_to_kept,
                        Escape(PlacementSourceLabel(slowest->source)));
  }
  const FinalistReport* search_plan = nullptr;
  for (const FinalistReport& f : report.finalists) {
    if (f.skipped.empty() && f.source.is_search()) search_plan = &f;
  }
  if (search_plan != nullptr && search_plan != kept && search_plan->ratio_to_kept > 0) {
    html +=
        fmt::format("; the search's plan ({}) took {:.2f}x its time",
                    Escape(PlacementSourceLabel(search_plan->source)), search_plan->ratio_to_kept);
  }
  html += fmt::format(
      ".</p>\n<p>{} finalists measured side by side in {} interleaved rounds; the kept one's "
      "round-to-round spread (p90 - p10) / median: {:.1f}%. <i>time / kept</i>: the median over "
      "the rounds of its time over the kept one's in the same round.</p>\n"
      "<table><tr><th>finalist</th><th>estimated</th><th>median</th><th>time / kept</th>"
      "<th>speed-up over the slowest</th><th>rounds won</th><th></th></tr>\n",
      report.finalists.size(), report.decision_rounds, 100 * report.round_spread);
  for (const FinalistReport& f : report.finalists) {
    if (!f.skipped.empty()) {
      html += fmt::format("<tr><td>{}</td><td colspan=\"6\">skipped: {}</td></tr>\n",
                          Escape(PlacementSourceLabel(f.source)), Escape(f.skipped));
      continue;
    }
    const std::string speedup =
        slowest != nullptr && f.ratio_to_kept > 0
            ? fmt::format("{:.2f}x", slowest->ratio_to_kept / f.ratio_to_kept)
            : "-";
    html += fmt::format(
        "<tr{}><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{:.2f}x</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        f.kept ? " class=\"kept\"" : "", Escape(PlacementSourceLabel(f.source)),
        f.estimated_ms > 0 ? FormatDuration(f.estimated_ms) : "-", FormatDuration(f.median_ms),
        f.ratio_to_kept, speedup, f.rounds_won, f.kept ? "&#10004; kept" : "");
  }
  html += "</table>\n";
  const EstimateAgainstRun check = CompareEstimateWithRun(report);
  if (check.finalist != nullptr) {
    html += fmt::format("<p>{}: estimated {}, measured {} end to end (estimate {}).</p>\n",
                        Escape(PlacementSourceLabel(check.finalist->source)),
                        FormatDuration(check.estimated_ms), FormatDuration(check.measured_ms),
                        EstimateError(check.estimated_ms, check.measured_ms));
  }
  return html;
}

// Per backend: nodes, the estimate and its share, the time in the run and its share of the
// run (which a region, measured only in whole plans, has too).
std::string BackendsHtml(const OptimizeReport& report, const RunProfile& in_run) {
  struct Totals {
    int nodes = 0;
    double estimated_ms = 0;
    bool all_estimated = true;
    double in_run_ms = 0;
  };
  std::map<std::string, Totals> per_backend;
  double estimated_total = 0;
  for (const GroupReport& group : report.groups) {
    Totals& totals = per_backend[group.backend];
    totals.nodes += static_cast<int>(group.nodes.size());
    totals.estimated_ms += group.cost_ms;
    totals.all_estimated = totals.all_estimated && group.measured_alone;
    totals.in_run_ms += group.in_run_ms;
    estimated_total += group.cost_ms;
  }
  double run_total = 0;
  for (const NodeTiming& step : in_run.nodes) run_total += step.milliseconds;
  const bool profiled = !in_run.nodes.empty();
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

std::string LegendHtml(const OptimizeReport& report) {
  std::map<std::string, bool> backends;
  for (const GroupReport& group : report.groups) backends[group.backend] = true;
  std::string html = "<p class=\"legend\">";
  for (const auto& [backend, unused] : backends)
    html += "<span class=\"item\">" + Swatch(backend) + Escape(backend) + "</span>";
  return html +
         "<span class=\"item\"><svg width=\"36\" height=\"10\"><line x1=\"0\" y1=\"5\" x2=\"36\" "
         "y2=\"5\" stroke=\"#d35400\" stroke-width=\"2\"/></svg> layout conversion (its time in "
         "the run)</span></p>\n";
}

std::string GraphHtml(const Graph& graph, const OptimizeReport& report, const RunProfile& in_run,
                      ReportLayout layout) {
  const GraphDrawing drawing = DrawReportGraph(BuildReportGraph(graph, report, in_run), layout);
  return fmt::format(
      "<h2>Graph</h2><p>One box per group of the placement, its backend and rule, its ops, "
      "<i>est</i> its estimated cost (measured alone) and <i>run</i> its time in the "
      "profiled runs; an arrow where a value flows, orange where the run converted its layout; a "
      "dashed frame around a region's nodes (a two-level region, or a group of more than 8 "
      "nodes). Hover over a box for its nodes and rivals. ({}.)</p>\n{}"
      "<div class=\"graph\">\n{}</div>\n",
      Escape(drawing.how), LegendHtml(report), drawing.svg);
}

std::string OpsOf(const Graph& graph, const GroupReport& group) {
  std::string ops;
  for (int n : group.nodes) ops += (ops.empty() ? "" : "+") + graph.node(n).op_type;
  return Shorten(ops, 40);
}

std::string GroupsHtml(const Graph& graph, const OptimizeReport& report, bool profiled) {
  std::string html =
      "<h2>Groups and their rivals</h2>\n<table><tr><th>#</th><th>nodes</th>"
      "<th>backend</th><th>rule</th><th>estimated</th><th>in run</th><th>in run / estimated</th>"
      "<th>rivals</th></tr>\n";
  for (size_t g = 0; g < report.groups.size(); ++g) {
    const GroupReport& group = report.groups[g];
    std::string rivals;
    for (const GroupAlternative& a : group.alternatives) {
      rivals += fmt::format("{}{} {}{}: {}", rivals.empty() ? "" : "<br>", Escape(a.backend),
                            Escape(RuleInPrecision(a.rule, a.precision)),
                            a.same_nodes ? "" : fmt::format(" ({} nodes)", a.num_nodes),
                            a.valid ? FormatDuration(a.cost_ms) : "invalid — " + Escape(a.reason));
    }
    // A region's hundred names would fill the page: the first few and the count.
    std::string names;
    for (size_t i = 0; i < group.nodes.size() && i < kNamesListed; ++i)
      names += (names.empty() ? "" : ", ") + Escape(graph.node(group.nodes[i]).name);
    if (group.nodes.size() > kNamesListed)
      names += fmt::format(", … ({} nodes in all)", group.nodes.size());
    html += fmt::format(
        "<tr><td>{}</td><td>{} ({})</td><td>{}{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"rivals\">{}</td></tr>\n",
        g, names, Escape(OpsOf(graph, group)), Swatch(group.backend), Escape(group.backend),
        Escape(RuleInPrecision(group.rule, group.precision)), EstimateOf(group),
        InRunOf(group, profiled), RatioOf(group, profiled), rivals.empty() ? "none" : rivals);
  }
  return html + "</table>\n";
}

// Every layout conversion of the running placement with its time in the run.
std::string ConversionsHtml(const RunProfile& in_run) {
  if (in_run.nodes.empty()) return "";
  std::string rows;
  double total = 0, run_total = 0;
  int count = 0;
  for (const NodeTiming& step : in_run.nodes) {
    run_total += step.milliseconds;
    if (!IsConversion(step)) continue;
    ++count;
    total += step.milliseconds;
    rows += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td></tr>\n",
                        Escape(step.node_name), Escape(step.rule), Escape(step.backend),
                        FormatDuration(step.milliseconds));
  }
  std::string html = fmt::format(
      "<h2>Layout conversions in the run</h2><p>{} conversions, {} in all ({} of the run).</p>\n",
      count, FormatDuration(total), Percent(total, run_total));
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

std::string PlacementReportHtml(const Graph& graph, const OptimizeReport& report,
                                const RunProfile& in_run, const PlacementReportOptions& options) {
  const std::string title = options.title.empty() ? graph.name() : options.title;
  const bool profiled = !in_run.nodes.empty();
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>collage placement: {0}</title>\n"
      "<style>{1}</style></head><body>\n<h1>Placement of {0}</h1>\n"
      "<p class=\"subtitle\">{2} nodes in {3} group{12}; {4} candidates offered ({5} distinct), "
      "{6} "
      "measured now, {7} from the cost database, {8} invalid; {9} search, estimate {10}{11}.</p>\n",
      Escape(title), kStyle, graph.num_nodes(), report.groups.size(), report.candidates,
      report.distinct_candidates, report.measured, report.cache_hits, report.invalid,
      SearchKindName(report.search), FormatDuration(report.estimated_ms),
      report.search_states_cut > 0 ? " (beam-bounded)" : " (exact)",
      report.groups.size() == 1 ? "" : "s");
  if (!options.measured_on.empty()) {
    html += "<p class=\"subtitle\">Measured on " + Escape(options.measured_on) + ".</p>\n";
  }
  html += FinalistsHtml(report);
  html += BackendsHtml(report, in_run);
  html += GraphHtml(graph, report, in_run, options.layout);
  html += GroupsHtml(graph, report, profiled);
  html += ConversionsHtml(in_run);
  return html + "</body></html>\n";
}

std::string PlacementReportHtml(const Session& session, const OptimizeReport& report,
                                const RunProfile& in_run, const PlacementReportOptions& options) {
  PlacementReportOptions page = options;
  if (page.measured_on.empty()) page.measured_on = MeasuredOn(session.num_threads());
  return PlacementReportHtml(SessionGraph(session), report, in_run, page);
}

}  // namespace collage
