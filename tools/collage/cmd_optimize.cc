// `collage optimize MODEL`: measure every backend's candidates on this machine, find the
// cheapest placement (op-level search), then measure it end to end side by side with each
// backend alone, check it against the reference kernels, and save the plan / the report.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "collage/backend.h"
#include "commands.h"
#include "progress_bar.h"
#include "search/placement_report.h"
#include "util/errors.h"
#include "util/normalized_error.h"

namespace collage::cli {

namespace {

struct OptimizeFlags {
  std::string model;
  std::vector<std::string> shapes;
  std::string backends;
  int threads = 0;
  std::string cost_db;
  std::string save_plan;
  std::string report;
  int beam = 256;
  int rounds = 10;
  bool compare = true;
  double tolerance = 1e-3;
  std::vector<std::string> plugin_dirs;
};

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

void PrintSearchSummary(const OptimizeReport& report) {
  std::printf("candidates: %d offered, %d distinct (repeated blocks measured once); %d measured now, "
              "%d from the cost database, %d invalid; %d layout conversions priced\n",
              report.candidates, report.distinct_candidates, report.measured, report.cache_hits,
              report.invalid, report.conversions);
  for (const std::string& line : report.invalid_examples) std::printf("  invalid: %s\n", line.c_str());
  std::printf("search: %lld states%s; measuring %.1f s, searching %.2f s; estimated %s\n",
              static_cast<long long>(report.search_states),
              report.search_states_cut > 0
                  ? (", beam dropped " + std::to_string(report.search_states_cut) + " (not proven optimal)").c_str()
                  : " (exact)",
              report.measure_seconds, report.search_seconds, FormatMillis(report.estimated_ms).c_str());
  std::printf("cost database: %s\n", report.cost_db_path.c_str());
}

void PrintBackendShares(const OptimizeReport& report) {
  std::map<std::string, std::tuple<int, int, double>> per_backend;  // nodes, groups, ms
  double total = 0;
  for (const GroupReport& group : report.groups) {
    auto& [nodes, groups, ms] = per_backend[group.backend];
    nodes += static_cast<int>(group.nodes.size());
    groups += 1;
    ms += group.cost_ms;
    total += group.cost_ms;
  }
  std::printf("\n%-14s %6s %7s %12s %8s\n", "backend", "nodes", "groups", "measured", "share");
  for (const auto& [backend, stat] : per_backend) {
    const auto& [nodes, groups, ms] = stat;
    std::printf("%-14s %6d %7d %12s %7.1f%%\n", backend.c_str(), nodes, groups, FormatMillis(ms).c_str(),
                total > 0 ? 100.0 * ms / total : 0.0);
  }
}

// The optimized session against every backend alone, side by side; checks its outputs
// against the reference kernels (native alone). Returns the optimized median.
StatusOr<double> CompareSideBySide(const OptimizeFlags& flags, const SessionOptions& base,
                                   Session& optimized, const std::vector<std::string>& backends,
                                   std::vector<ReportLatency>* latencies) {
  COLLAGE_ASSIGN_OR_RETURN(auto inputs, LoadInputs(optimized, {}, /*random_rest=*/true, /*seed=*/0));
  std::vector<std::unique_ptr<Session>> singles;
  std::vector<Session*> sessions = {&optimized};
  std::vector<std::string> labels = {"optimized"};
  for (const std::string& name : backends) {
    SessionOptions options = base;
    options.backend = name;
    COLLAGE_ASSIGN_OR_RETURN(auto session, Session::LoadFile(flags.model, options));
    sessions.push_back(session.get());
    labels.push_back(name + " alone");
    singles.push_back(std::move(session));
  }
  // The reference: the native backend alone.
  Session* reference = nullptr;
  for (size_t i = 0; i < backends.size(); ++i) {
    if (backends[i] == "native") reference = singles[i].get();
  }
  COLLAGE_ASSIGN_OR_RETURN(auto expected, reference->Run(inputs));
  COLLAGE_ASSIGN_OR_RETURN(auto actual, optimized.Run(inputs));
  double error = 0;
  for (const auto& [name, tensor] : expected) error = std::max(error, NormalizedError(actual.at(name), tensor));
  std::printf("\noutputs against the reference kernels: normalized error %.3g (tolerance %.0e)\n", error,
              flags.tolerance);
  if (!(error <= flags.tolerance)) {
    return Internal("the optimized placement's outputs differ from the reference kernels (error {:.3g})", error);
  }
  std::printf("measuring end to end, %d rounds side by side...\n", flags.rounds);
  COLLAGE_ASSIGN_OR_RETURN(std::vector<double> medians, TimeSideBySide(sessions, inputs, 2, flags.rounds));
  double best_single = 0;
  std::string best_name;
  for (size_t i = 1; i < medians.size(); ++i) {
    if (best_name.empty() || medians[i] < best_single) {
      best_single = medians[i];
      best_name = labels[i];
    }
  }
  std::printf("%-22s %10s %10s\n", "placement", "median", "speedup");
  for (size_t i = 0; i < medians.size(); ++i) {
    std::printf("%-22s %10s %9.2fx\n", labels[i].c_str(), FormatMillis(medians[i]).c_str(),
                medians[0] > 0 ? medians[i] / medians[0] : 0.0);
    latencies->push_back({labels[i], medians[i]});
  }
  std::printf("optimized vs the best single backend (%s): %.2fx\n", best_name.c_str(),
              medians[0] > 0 ? best_single / medians[0] : 0.0);
  return medians[0];
}

Status Optimize(const OptimizeFlags& flags) {
  COLLAGE_RETURN_IF_ERROR(LoadPlugins(flags.plugin_dirs));
  if (flags.rounds < 1) return InvalidArgument("--rounds must be >= 1");
  if (flags.beam < 0) return InvalidArgument("--beam must be >= 0 (0: unbounded)");
  SessionOptions options;
  options.num_threads = flags.threads;
  COLLAGE_RETURN_IF_ERROR(ParseShapeFlags(flags.shapes, options));
  COLLAGE_ASSIGN_OR_RETURN(auto session, Session::LoadFile(flags.model, options));

  OptimizeOptions optimize;
  optimize.backends = SplitList(flags.backends);
  optimize.cost_db_path = flags.cost_db;
  optimize.beam_width = flags.beam;
  ProgressBar bar;
  optimize.on_progress = [&bar](const OptimizeProgress& p) { bar.Update(p); };
  OptimizeReport report;
  Status optimized = session->Optimize(optimize, &report);
  bar.Finish();
  PrintWarnings(*session);
  COLLAGE_RETURN_IF_ERROR(optimized);

  std::printf("model: %s  threads: %d\n", flags.model.c_str(), flags.threads);
  PrintSearchSummary(report);
  std::printf("%s\n", PlacementSummary(*session).c_str());
  PrintBackendShares(report);

  std::vector<ReportLatency> latencies;
  if (flags.compare) {
    std::vector<std::string> backends = optimize.backends;
    if (backends.empty()) {
      for (const Backend* b : BackendRegistry::Global().backends()) backends.push_back(b->name());
    }
    if (std::find(backends.begin(), backends.end(), "native") == backends.end()) backends.insert(backends.begin(), "native");
    COLLAGE_ASSIGN_OR_RETURN(double median, CompareSideBySide(flags, options, *session, backends, &latencies));
    session->RecordMeasuredLatency(median);
  }
  if (!flags.save_plan.empty()) {
    COLLAGE_RETURN_IF_ERROR(session->SavePlan(flags.save_plan));
    std::printf("plan saved to %s\n", flags.save_plan.c_str());
  }
  if (!flags.report.empty()) {
    COLLAGE_RETURN_IF_ERROR(WriteTextFile(flags.report, PlacementReportHtml(session->graph(), report, latencies)));
    std::printf("report written to %s\n", flags.report.c_str());
  }
  return Status();
}

}  // namespace

void AddOptimizeCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<OptimizeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "optimize", "Measure every backend's candidates and find the fastest placement (op-level search)");
  cmd->add_option("model", flags->model, "ONNX model file")->required();
  cmd->add_option("--shape", flags->shapes, "Fix an input's shape: NAME=1x3x224x224 (repeatable)");
  cmd->add_option("--backends", flags->backends,
                  "Backends the placement may use, comma-separated (default: all; native is always in)");
  cmd->add_option("--threads", flags->threads, "Threads (0 = one per core): measured and run with");
  cmd->add_option("--cost-db", flags->cost_db,
                  "Cost database (SQLite); default: ~/.cache/collage/costs.sqlite or $COLLAGE_CACHE_DIR");
  cmd->add_option("--save-plan", flags->save_plan, "Write the plan (JSON) here, for run/bench --plan");
  cmd->add_option("--report", flags->report, "Write an HTML page of the placement and every group's rivals");
  cmd->add_option("--beam", flags->beam, "States the search keeps per step (0 = unbounded, exact)")
      ->capture_default_str();
  cmd->add_option("--rounds", flags->rounds, "Side-by-side rounds of the end-to-end comparison")
      ->capture_default_str();
  cmd->add_flag("!--no-compare", flags->compare,
                "Skip the end-to-end comparison with each backend alone (and the output check)");
  cmd->add_option("--tolerance", flags->tolerance,
                  "Largest normalized error against the reference kernels the check accepts")
      ->capture_default_str();
  AddPluginOption(cmd, flags->plugin_dirs);
  cmd->callback([flags, &exit_code] {
    Status s = Optimize(*flags);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace collage::cli
