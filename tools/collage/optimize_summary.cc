#include "optimize_summary.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>

#include "collage/printable_text.h"
#include "collage/report.h"
#include "commands.h"
#include "progress_bar.h"

namespace collage::cli {

Status OptimizeWithProgress(Session& session, OptimizeOptions options, OptimizeReport* report) {
  ProgressBar bar;
  options.on_progress = [&bar](const OptimizeProgress& p) { bar.Update(p); };
  options.on_generation = [&bar](const GenerationProgress& p) { bar.Update(p); };
  // The library reads no environment: the command line passes the worker it names.
  if (const char* worker = std::getenv("COLLAGE_MEASURE_WORKER"); worker != nullptr) {
    UseMeasureWorkerSetting(worker, &options);
  }
  Status optimized = session.Optimize(options, report);
  bar.Finish();
  PrintWarnings(session);
  return optimized;
}

namespace {

// A reason is shown up to this many bytes: one read from a cost database may be megabytes.
constexpr size_t kShownReasonBytes = 400;

// One line per plan the search ran to calibrate its costs: its estimate before it ran
// against its time in the run.
void PrintCalibration(const OptimizeReport& report) {
  if (report.calibration.empty()) return;
  std::printf("calibration: %zu plan(s) run, each group re-priced at its time in the run%s\n",
              report.calibration.size(),
              report.calibration_stopped.empty() ? " until the search repeated a plan"
                                                 : ("; " + report.calibration_stopped).c_str());
  for (size_t i = 0; i < report.calibration.size(); ++i) {
    const CalibrationReport& round = report.calibration[i];
    std::printf(
        "  plan %zu%s: estimated %s, in its run %s (estimate %s), %d group(s) re-priced\n", i + 1,
        round.origin.is_search() ? "" : (" (" + PlacementSourceLabel(round.origin) + ")").c_str(),
        FormatMillis(round.estimated_ms).c_str(), FormatMillis(round.in_run_ms).c_str(),
        EstimateError(round.estimated_ms, round.in_run_ms).c_str(), round.groups_repriced);
  }
  if (report.calibration_retimed > 0) {
    std::printf(
        "  the %d fastest (within 25%%) timed again side by side; the fastest there is the "
        "op-level plan\n",
        report.calibration_retimed);
  }
}

}  // namespace

void PrintOptimizeReport(const OptimizeReport& report, const RunProfile& in_run) {
  std::printf(
      "candidates: %d offered, %d distinct (repeated blocks measured once); %d measured now, "
      "%d from the cost database, %d invalid; %d layout conversions priced\n",
      report.candidates, report.distinct_candidates, report.measured, report.cache_hits,
      report.invalid, report.conversions);
  for (const std::string& line : report.invalid_examples)
    std::printf("  invalid: %s\n", PrintableExcerpt(line, kShownReasonBytes).c_str());
  const std::string exactness =
      report.search_states_cut > 0
          ? ", beam dropped " + std::to_string(report.search_states_cut) + " (not proven optimal)"
          : " (exact)";
  std::printf("search: %lld states%s; measuring %.1f s, searching %.2f s; estimated %s\n",
              static_cast<long long>(report.search_states), exactness.c_str(),
              report.measure_seconds, report.search_seconds,
              FormatMillis(report.estimated_ms).c_str());
  PrintCalibration(report);
  std::printf("cost database: %s\n", report.cost_db_path.c_str());

  // nodes, groups, estimated ms, in-run ms
  std::map<std::string, std::tuple<int, int, double, double>> per_backend;
  double total = 0;
  int whole_plan_regions = 0;
  for (const GroupReport& group : report.groups) {
    whole_plan_regions += group.measured_alone ? 0 : 1;
    const std::string label = group.precision == Precision::kFloat32
                                  ? group.backend
                                  : group.backend + " " + PrecisionName(group.precision);
    auto& [nodes, groups, ms, run_ms] = per_backend[label];
    nodes += static_cast<int>(group.nodes.size());
    groups += 1;
    ms += group.cost_ms;
    run_ms += group.in_run_ms;
    total += group.cost_ms;
  }
  const bool profiled = !in_run.nodes.empty();
  std::printf("%-16s %6s %7s %12s %8s %12s\n", "backend", "nodes", "groups", "estimated", "share",
              "in run");
  for (const auto& [backend, stat] : per_backend) {
    const auto& [nodes, groups, ms, run_ms] = stat;
    std::printf("%-16s %6d %7d %12s %7.1f%% %12s\n", backend.c_str(), nodes, groups,
                FormatMillis(ms).c_str(), total > 0 ? 100.0 * ms / total : 0.0,
                profiled ? FormatMillis(run_ms).c_str() : "-");
  }
  if (profiled) {
    int conversions = 0;
    for (const NodeTiming& step : in_run.nodes) conversions += IsConversion(step) ? 1 : 0;
    std::printf(
        "(estimated: the search's costs, each group measured alone; in run: its time in "
        "profiled runs of the kept placement)\nlayout conversions in the run: %d",
        conversions);
    // With none, a time would only say "0.00 us".
    if (conversions > 0) std::printf(", %s", FormatMillis(ConversionsMs(in_run)).c_str());
    std::printf("\n");
  }
  if (whole_plan_regions > 0) {
    std::printf(
        "(%d regions made by the two-level search were measured only within whole plans: no "
        "estimate of their own)\n",
        whole_plan_regions);
  }
}

void PrintAccuracyCheck(const OptimizeReport& report) {
  const OptimizeReport::AccuracyCheck& a = report.accuracy;
  if (a.input_sets == 0) return;  // float32 asked for: no budget to check
  std::printf(
      "accuracy: %d groups in a reduced precision; outputs within %.3g of the float32 reference "
      "kernels on %d input sets (tolerance %.3g; %d search%s)\n",
      a.reduced_groups, a.error, a.input_sets, a.tolerance, a.searches,
      a.searches == 1 ? "" : "es");
  for (const std::string& line : a.reverted) std::printf("  back to fp32: %s\n", line.c_str());
  if (!a.all_float32_because.empty()) {
    std::printf("  every group is fp32: %s\n", a.all_float32_because.c_str());
  }
}

void PrintTwoLevelSearch(const OptimizeReport& report) {
  std::printf(
      "two-level search: %d generations, %d placements measured end to end, %d cache hits, %d "
      "invalid, %.1f s\n",
      report.generations, report.evaluations, report.genome_cache_hits, report.invalid_genomes,
      report.evolve_seconds);
  for (const std::string& reason : report.invalid_genome_reasons)
    std::printf("  invalid: %s\n", PrintableExcerpt(reason, kShownReasonBytes).c_str());
}

void PrintFinalists(const OptimizeReport& report) {
  const FinalistReport* kept = KeptFinalist(report);
  if (report.finalists.empty() || kept == nullptr) {
    std::printf("estimated %s, not measured end to end (the search's plan is kept)\n",
                FormatMillis(report.estimated_ms).c_str());
    return;
  }
  std::printf("end-to-end decision: %zu finalists, %d rounds side by side (interleaved)\n",
              report.finalists.size(), report.decision_rounds);
  std::printf("%-22s %10s %10s %8s %11s\n", "finalist", "estimated", "median", "vs kept",
              "rounds won");
  for (const FinalistReport& f : report.finalists) {
    const std::string label = PlacementSourceLabel(f.source);
    if (!f.skipped.empty()) {
      std::printf("%-22s skipped: %s\n", label.c_str(), f.skipped.c_str());
      continue;
    }
    std::printf("%-22s %10s %10s %7.2fx %11d%s\n", label.c_str(),
                f.estimated_ms > 0 ? FormatMillis(f.estimated_ms).c_str() : "-",
                FormatMillis(f.median_ms).c_str(), f.ratio_to_kept, f.rounds_won,
                f.kept ? "  <- kept" : "");
  }
  std::printf("(vs kept: median over the rounds of its time / the kept one's in the same round)\n");

  const EstimateAgainstRun check = CompareEstimateWithRun(report);
  if (check.finalist != nullptr) {
    const std::string whose = check.finalist == kept
                                  ? ""
                                  : " for the " + PlacementSourceLabel(check.finalist->source) +
                                        "; the kept one has no estimate";
    std::printf("estimated %s, measured %s end to end (estimate %s)%s\n",
                FormatMillis(check.estimated_ms).c_str(), FormatMillis(check.measured_ms).c_str(),
                EstimateError(check.estimated_ms, check.measured_ms).c_str(), whose.c_str());
  } else {
    std::printf("measured %s end to end (no estimate of the kept one)\n",
                FormatMillis(report.measured_ms).c_str());
  }
  const std::string label =
      PlacementSourceLabel(kept->source) + " (" + PlacementInBrief(report) + ")";
  const FinalistReport* runner_up = RunnerUp(report);
  if (runner_up == nullptr) {
    std::printf("kept: %s (no other finalist ran)\n", label.c_str());
  } else if (runner_up->ratio_to_kept >= 1) {
    std::printf(
        "kept: %s; the runner-up, %s, took %.2fx its time (median per-round ratio); it won %d "
        "of %d rounds\n",
        label.c_str(), PlacementSourceLabel(runner_up->source).c_str(), runner_up->ratio_to_kept,
        kept->rounds_won, report.decision_rounds);
  } else {
    // The decision keeps the earlier finalist of a tie, so the runner-up may be a little faster.
    std::printf(
        "kept: %s, tied with %s (%.1f%% faster, within the noise: the earlier finalist is kept)\n",
        label.c_str(), PlacementSourceLabel(runner_up->source).c_str(),
        100 * (1 - runner_up->ratio_to_kept));
  }
  std::printf("round-to-round spread of the kept one: %.1f%% ((p90 - p10) / median)\n",
              100 * report.round_spread);
}

}  // namespace collage::cli
