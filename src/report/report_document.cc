#include "report/report_document.h"

#include "collage/report.h"

namespace collage {
namespace {

using json = ReportDocument;

// A finalist's kind, with its backend in a field of its own: a reader never takes a backend
// out of a finalist's name.
const char* KindName(PlacementSource::Kind kind) {
  switch (kind) {
    case PlacementSource::Kind::kOpLevel: return "op-level";
    case PlacementSource::Kind::kTwoLevel: return "two-level";
    case PlacementSource::Kind::kSingleBackend: return "single-backend";
    case PlacementSource::Kind::kWholeGraph: return "whole-graph";
    case PlacementSource::Kind::kOtherShapes: return "other-shapes";
  }
  return "?";
}

json FinalistsOf(const OptimizeReport& report) {
  json finalists = json::array();
  for (const FinalistReport& f : report.finalists) {
    finalists.push_back({{"name", PlacementSourceName(f.source)},
                         {"kind", KindName(f.source.kind)},
                         {"backend", f.source.backend},
                         {"label", PlacementSourceLabel(f.source)},
                         {"estimated_ms", f.estimated_ms},
                         {"median_ms", f.median_ms},
                         {"ratio_to_kept", f.ratio_to_kept},
                         {"rounds_won", f.rounds_won},
                         {"rounds_run", f.rounds_run},
                         {"kept", f.kept},
                         {"skipped", f.skipped}});
  }
  return finalists;
}

json AlternativesOf(const GroupReport& group) {
  json alternatives = json::array();
  for (const GroupAlternative& a : group.alternatives) {
    alternatives.push_back({{"backend", a.backend},
                            {"rule", a.rule},
                            {"precision", PrecisionName(a.precision)},
                            {"nodes", a.num_nodes},
                            {"same_nodes", a.same_nodes},
                            {"valid", a.valid},
                            {"estimated_ms", a.cost_ms},
                            {"reason", a.reason}});
  }
  return alternatives;
}

json GroupsOf(const Graph& graph, const OptimizeReport& report) {
  json groups = json::array();
  for (const GroupReport& g : report.groups) {
    std::vector<std::string> node_names;
    std::vector<std::string> op_types;
    for (int id : g.nodes) {
      node_names.push_back(graph.node(id).name);
      op_types.push_back(graph.node(id).op_type);
    }
    groups.push_back({{"backend", g.backend},
                      {"rule", g.rule},
                      {"precision", PrecisionName(g.precision)},
                      {"nodes", g.nodes.size()},
                      {"node_names", node_names},
                      {"node_ids", g.nodes},
                      {"op_types", op_types},
                      {"estimated_ms", g.cost_ms},
                      {"measured_alone", g.measured_alone},
                      {"in_run_ms", g.in_run_ms},
                      {"alternatives", AlternativesOf(g)}});
  }
  return groups;
}

// Every step of the profiled run, in order: a group's (its index among the groups) or a
// layout conversion's (the value converted, its layouts).
json StepsOf(const RunProfile& in_run) {
  json steps = json::array();
  for (const NodeTiming& step : in_run.nodes) {
    const bool conversion = IsConversion(step);
    steps.push_back({{"kind", conversion ? "conversion" : "group"},
                     {"group", step.group},
                     {"node_name", step.node_name},
                     {"backend", step.backend},
                     {"rule", step.rule},
                     {"from_layout", step.from_layout},
                     {"to_layout", step.to_layout},
                     {"ms", step.milliseconds}});
  }
  return steps;
}

}  // namespace

std::string RuleShown(const ReportDocument& group) {
  const std::string& precision = group["precision"].get_ref<const std::string&>();
  const std::string& rule = group["rule"].get_ref<const std::string&>();
  return precision == PrecisionName(Precision::kFloat32) ? rule : rule + " " + precision;
}

ReportDocument OptimizeReportDocument(const Graph& graph, const OptimizeReport& report,
                                      const RunProfile& in_run,
                                      const ReportDocumentContext& context) {
  // In the order a reader looks for them: what ran, the estimate against the run, the details.
  json j;
  j["model"] = context.model;
  j["threads"] = context.threads;
  j["search"] = SearchKindName(report.search);
  j["placement"] = context.placement;
  j["placement_in_brief"] = PlacementInBrief(report);
  j["estimated_ms"] = report.estimated_ms;
  // 0 and "" when the decision was skipped (--no-compare): nothing measured end to end.
  j["measured_ms"] = report.measured_ms;
  j["kept_finalist"] =
      report.kept_finalist.has_value() ? PlacementSourceName(*report.kept_finalist) : "";
  j["decision_rounds"] = report.decision_rounds;
  j["round_spread"] = report.round_spread;
  j["finalists"] = FinalistsOf(report);
  // The cost model's error on one placement (collage/report.h); null when none was measured.
  const EstimateAgainstRun check = CompareEstimateWithRun(report);
  j["estimate_against_run"] =
      check.finalist == nullptr ? json(nullptr)
                                : json({{"finalist", PlacementSourceLabel(check.finalist->source)},
                                        {"estimated_ms", check.estimated_ms},
                                        {"measured_ms", check.measured_ms}});
  j["calibration"] = json::array();
  for (const CalibrationReport& c : report.calibration) {
    j["calibration"].push_back({{"estimated_ms", c.estimated_ms},
                                {"in_run_ms", c.in_run_ms},
                                {"groups_repriced", c.groups_repriced},
                                {"origin", CalibrationOriginName(c.origin)}});
  }
  j["calibration_stopped"] = report.calibration_stopped;
  j["calibration_retimed"] = report.calibration_retimed;
  // input_sets 0: a float32 optimize, no accuracy check.
  const OptimizeReport::AccuracyCheck& a = report.accuracy;
  j["accuracy"] = {{"error", a.error},
                   {"tolerance", a.tolerance},
                   {"input_sets", a.input_sets},
                   {"searches", a.searches},
                   {"reduced_groups", a.reduced_groups},
                   {"reverted", a.reverted},
                   {"all_float32_because", a.all_float32_because}};
  j["graph_nodes"] = graph.num_nodes();
  j["groups"] = GroupsOf(graph, report);
  j["conversions_in_run_ms"] = ConversionsMs(in_run);
  j["in_run_steps"] = StepsOf(in_run);
  j["measurements"] = {{"measured", report.measured},
                       {"cache_hits", report.cache_hits},
                       {"candidates_measured", report.candidates_measured},
                       {"candidates_found", report.candidates_found},
                       {"invalid", report.invalid},
                       {"invalid_examples", report.invalid_examples},
                       {"candidates_offered", report.candidates},
                       {"candidates_distinct", report.distinct_candidates},
                       {"conversions", report.conversions},
                       {"library_switches", report.library_switches},
                       {"measure_seconds", report.measure_seconds},
                       {"search_seconds", report.search_seconds},
                       {"search_exact", report.search_states_cut == 0}};
  if (report.search == SearchKind::kTwoLevel) {
    j["two_level"] = {{"generations", report.generations},
                      {"evaluations", report.evaluations},
                      {"seconds", report.evolve_seconds}};
  }
  j["cost_db"] = report.cost_db_path;
  j["warnings"] = context.warnings;
  j["plan"] = context.plan_path.empty() ? json(nullptr) : json(context.plan_path);
  return j;
}

}  // namespace collage
