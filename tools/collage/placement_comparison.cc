#include "placement_comparison.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "collage/backend.h"
#include "commands.h"
#include "progress_bar.h"
#include "util/errors.h"
#include "util/normalized_error.h"

namespace collage::cli {

Status OptimizeWithProgress(Session& session, OptimizeOptions options, OptimizeReport* report) {
  ProgressBar bar;
  options.on_progress = [&bar](const OptimizeProgress& p) { bar.Update(p); };
  options.on_generation = [&bar](const GenerationProgress& p) { bar.Update(p); };
  Status optimized = session.Optimize(options, report);
  bar.Finish();
  PrintWarnings(session);
  return optimized;
}

void PrintOptimizeReport(const OptimizeReport& report) {
  std::printf(
      "candidates: %d offered, %d distinct (repeated blocks measured once); %d measured now, "
      "%d from the cost database, %d invalid; %d layout conversions priced\n",
      report.candidates, report.distinct_candidates, report.measured, report.cache_hits,
      report.invalid, report.conversions);
  for (const std::string& line : report.invalid_examples)
    std::printf("  invalid: %s\n", line.c_str());
  const std::string exactness =
      report.search_states_cut > 0
          ? ", beam dropped " + std::to_string(report.search_states_cut) + " (not proven optimal)"
          : " (exact)";
  std::printf("search: %lld states%s; measuring %.1f s, searching %.2f s; estimated %s\n",
              static_cast<long long>(report.search_states), exactness.c_str(),
              report.measure_seconds, report.search_seconds,
              FormatMillis(report.estimated_ms).c_str());
  std::printf("cost database: %s\n", report.cost_db_path.c_str());

  std::map<std::string, std::tuple<int, int, double>> per_backend;  // nodes, groups, ms
  double total = 0;
  int whole_plan_regions = 0;
  for (const GroupReport& group : report.groups) {
    whole_plan_regions += group.measured_alone ? 0 : 1;
    auto& [nodes, groups, ms] = per_backend[group.backend];
    nodes += static_cast<int>(group.nodes.size());
    groups += 1;
    ms += group.cost_ms;
    total += group.cost_ms;
  }
  std::printf("%-14s %6s %7s %12s %8s\n", "backend", "nodes", "groups", "measured", "share");
  for (const auto& [backend, stat] : per_backend) {
    const auto& [nodes, groups, ms] = stat;
    std::printf("%-14s %6d %7d %12s %7.1f%%\n", backend.c_str(), nodes, groups,
                FormatMillis(ms).c_str(), total > 0 ? 100.0 * ms / total : 0.0);
  }
  if (whole_plan_regions > 0) {
    std::printf(
        "(%d regions made by the two-level search were measured only within whole plans: no "
        "share)\n",
        whole_plan_regions);
  }
}

StatusOr<std::vector<ComparisonRow>> CompareWithEachBackend(const std::string& model,
                                                            const SessionOptions& base,
                                                            Session& optimized,
                                                            std::vector<std::string> backends,
                                                            int rounds, double tolerance) {
  if (std::find(backends.begin(), backends.end(), "native") == backends.end())
    backends.insert(backends.begin(), "native");
  COLLAGE_ASSIGN_OR_RETURN(auto inputs,
                           LoadInputs(optimized, {}, /*random_rest=*/true, /*seed=*/0));
  std::vector<std::unique_ptr<Session>> singles;
  std::vector<Session*> sessions = {&optimized};
  std::vector<ComparisonRow> rows = {{"optimized"}};
  Session* reference = nullptr;
  std::vector<ComparisonRow> skipped;
  for (const std::string& name : backends) {
    SessionOptions options = base;
    options.backend = name;
    options.plan_path.clear();
    auto session = Session::LoadFile(model, options);
    if (!session.ok()) {
      if (name == "native") return session.status().WithContext("the reference placement (native)");
      skipped.push_back({name + " alone", 0, 0, session.status().message()});
      continue;
    }
    if (name == "native") reference = session->get();
    sessions.push_back(session->get());
    rows.push_back({name + " alone"});
    singles.push_back(std::move(*session));
  }
  auto expected = reference->Run(inputs);
  if (!expected.ok()) return expected.status().WithContext("the reference placement (native)");
  std::vector<Session*> checked;
  std::vector<ComparisonRow> kept;
  for (size_t i = 0; i < sessions.size(); ++i) {
    auto actual = sessions[i]->Run(inputs);
    std::string failure;
    if (!actual.ok()) {
      failure = actual.status().message();
    } else {
      for (const auto& [name, tensor] : *expected) {
        rows[i].error = std::max(rows[i].error, NormalizedError(actual->at(name), tensor));
      }
      if (!(rows[i].error <= tolerance)) {
        failure = fmt::format(
            "outputs differ from the reference kernels: normalized error {:.3g} > {:.0e}",
            rows[i].error, tolerance);
      }
    }
    if (failure.empty()) {
      checked.push_back(sessions[i]);
      kept.push_back(rows[i]);
    } else if (i == 0) {
      return Internal("the optimized placement: {}", failure);
    } else {
      rows[i].skipped = failure;
      skipped.push_back(rows[i]);
    }
  }
  std::printf("measuring end to end, %d rounds side by side...\n", rounds);
  COLLAGE_ASSIGN_OR_RETURN(std::vector<double> medians, TimeSideBySide(checked, inputs, 2, rounds));
  for (size_t i = 0; i < kept.size(); ++i) kept[i].median_ms = medians[i];
  kept.insert(kept.end(), skipped.begin(), skipped.end());
  return kept;
}

void PrintComparison(const std::vector<ComparisonRow>& rows) {
  std::printf("%-22s %10s %9s %10s\n", "placement", "median", "speedup", "error");
  size_t best = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].skipped.empty()) {
      std::printf("%-22s skipped: %s\n", rows[i].label.c_str(), rows[i].skipped.c_str());
      continue;
    }
    std::printf("%-22s %10s %8.2fx %10.2g\n", rows[i].label.c_str(),
                FormatMillis(rows[i].median_ms).c_str(),
                rows[0].median_ms > 0 ? rows[i].median_ms / rows[0].median_ms : 0.0, rows[i].error);
    if (i > 0 && (best == 0 || rows[i].median_ms < rows[best].median_ms)) best = i;
  }
  std::printf(
      "(speedup: the placement's median over the optimized one's; error: max|output - reference| / "
      "max(1, max|reference|))\n");
  if (best > 0) {
    std::printf("optimized vs the best single backend (%s): %.2fx\n", rows[best].label.c_str(),
                rows[0].median_ms > 0 ? rows[best].median_ms / rows[0].median_ms : 0.0);
  }
}

}  // namespace collage::cli
