// An optimize's report as JSON (declared in collage/report.h): the one form the command line's
// --json file and Python's report are made from.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "collage/report.h"
#include "session/session_access.h"

namespace collage {

std::string OptimizeReportJson(const Session& session, const OptimizeReport& report,
                               const OptimizeJsonContext& context) {
  // In the order a reader looks for them: what ran, the estimate against the run, the details.
  using json = nlohmann::ordered_json;
  json j;
  j["model"] = context.model;
  j["threads"] = session.num_threads();
  j["search"] = SearchKindName(report.search);
  j["placement"] = session.DescribePlacement();
  j["estimated_ms"] = report.estimated_ms;
  // 0 and "" when the decision was skipped (--no-compare): nothing measured end to end.
  j["measured_ms"] = report.measured_ms;
  j["kept_finalist"] =
      report.kept_finalist.has_value() ? PlacementSourceName(*report.kept_finalist) : "";
  j["decision_rounds"] = report.decision_rounds;
  j["round_spread"] = report.round_spread;
  j["finalists"] = json::array();
  for (const FinalistReport& f : report.finalists) {
    j["finalists"].push_back({{"name", PlacementSourceName(f.source)},
                              {"estimated_ms", f.estimated_ms},
                              {"median_ms", f.median_ms},
                              {"ratio_to_kept", f.ratio_to_kept},
                              {"rounds_won", f.rounds_won},
                              {"rounds_run", f.rounds_run},
                              {"kept", f.kept},
                              {"skipped", f.skipped}});
  }
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
  j["groups"] = json::array();
  const Graph& graph = SessionGraph(session);
  for (const GroupReport& g : report.groups) {
    std::vector<std::string> node_names;
    for (int id : g.nodes) node_names.push_back(graph.node(id).name);
    j["groups"].push_back({{"backend", g.backend},
                           {"rule", g.rule},
                           {"precision", PrecisionName(g.precision)},
                           {"nodes", g.nodes.size()},
                           {"node_names", node_names},
                           {"estimated_ms", g.cost_ms},
                           {"measured_alone", g.measured_alone},
                           {"in_run_ms", g.in_run_ms}});
  }
  j["conversions_in_run_ms"] = ConversionsMs(report.in_run);
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
                       {"search_seconds", report.search_seconds}};
  if (report.search == SearchKind::kTwoLevel) {
    j["two_level"] = {{"generations", report.generations},
                      {"evaluations", report.evaluations},
                      {"seconds", report.evolve_seconds}};
  }
  j["cost_db"] = report.cost_db_path;
  // The optimize's warnings and the session's (a plan's, a backend's), each once.
  std::vector<std::string> warnings = report.warnings;
  for (const std::string& w : session.warnings()) {
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
  j["warnings"] = warnings;
  j["plan"] = context.plan_path.empty() ? json(nullptr) : json(context.plan_path);
  // Replaced, not thrown on: a model path or a skip reason need not be valid UTF-8.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace collage
