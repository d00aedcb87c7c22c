// `collage bench MODEL`: latency percentiles over repeated runs (after warm-up).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "commands.h"
#include "run_profile_summary.h"
#include "search/finalist_summary.h"
#include "util/file_io.h"
#include "util/chrome_trace.h"
#include "util/latency_stats.h"

namespace collage::cli {

namespace {

struct BenchFlags {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  int warmup = 3;
  int iterations = 20;
  int threads = 0;
  std::string backend = "native";
  std::string plan;
  std::vector<std::string> plugin_dirs;
  bool strict_nan = false;
  bool profile = false;
  std::string export_profile;
};

// Per op type: total time over the timed runs divided by their number, share of the run.
void PrintProfile(const std::vector<RunProfile>& runs) {
  // "backend op+op" → (total ms, steps per run)
  std::map<std::string, std::pair<double, int>> by_op;
  auto key = [](const NodeTiming& t) { return t.backend + " " + t.op_type; };
  double total = 0;
  for (const RunProfile& run : runs) {
    for (const NodeTiming& t : run.nodes) {
      by_op[key(t)].first += t.milliseconds;
      total += t.milliseconds;
    }
  }
  for (const NodeTiming& t : runs.front().nodes) by_op[key(t)].second++;
  std::vector<std::pair<std::string, std::pair<double, int>>> rows(by_op.begin(), by_op.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  const double n = static_cast<double>(runs.size());
  std::printf("time per backend and kernel (mean per run):\n");
  for (const auto& [op, stat] : rows) {
    std::printf("  %-34s %4d steps  %10s  %5.1f%%\n", op.c_str(), stat.second,
                FormatMillis(stat.first / n).c_str(), total > 0 ? 100.0 * stat.first / total : 0.0);
  }
}

// Per step of the mean run: each group's time beside the cost the plan's search estimated for
// it (measured alone), the conversions' times, and the plan's estimate against the mean run.
// Shows where the search's additive cost model is wrong for this plan on this machine.
void PrintStepsAgainstEstimate(const RunProfile& mean, const PlacementEstimate& estimate,
                               double mean_run_ms, int runs) {
  std::printf("per step against the plan's estimate (mean of %d runs):\n", runs);
  std::printf("  %4s  %-14s %-24s %-28s %10s %10s %7s\n", "step", "backend", "rule", "ops",
              "estimated", "in run", "ratio");
  size_t group = 0;
  for (size_t s = 0; s < mean.nodes.size(); ++s) {
    const NodeTiming& step = mean.nodes[s];
    if (IsConversion(step)) {
      std::printf("  %4zu  %-14s %-24s %-28s %10s %10s %7s\n", s, step.backend.c_str(),
                  step.rule.c_str(), ("conversion of " + step.node_name).substr(0, 28).c_str(), "-",
                  FormatMillis(step.milliseconds).c_str(), "-");
      continue;
    }
    // 0: not estimated (a single backend, a region measured only within whole plans).
    const double estimated = group < estimate.group_ms.size() ? estimate.group_ms[group] : 0;
    ++group;
    const std::string ops =
        step.op_type.size() > 28 ? step.op_type.substr(0, 25) + "..." : step.op_type;
    const std::string ratio =
        estimated > 0 ? fmt::format("{:.2f}x", step.milliseconds / estimated) : "-";
    std::printf("  %4zu  %-14s %-24s %-28s %10s %10s %7s\n", s, step.backend.c_str(),
                step.rule.substr(0, 24).c_str(), ops.c_str(),
                estimated > 0 ? FormatMillis(estimated).c_str() : "-",
                FormatMillis(step.milliseconds).c_str(), ratio.c_str());
  }
  double steps_ms = 0;
  for (const NodeTiming& step : mean.nodes) steps_ms += step.milliseconds;
  const std::string versus =
      estimate.total_ms > 0
          ? fmt::format("estimated {}, measured {} (mean run; estimate {})",
                        FormatMillis(estimate.total_ms), FormatMillis(mean_run_ms),
                        EstimateError(estimate.total_ms, mean_run_ms))
          : fmt::format("estimated -, measured {} (mean run)", FormatMillis(mean_run_ms));
  std::printf("  total: %s; the steps %s of it, layout conversions %s\n", versus.c_str(),
              FormatMillis(steps_ms).c_str(), FormatMillis(ConversionsMs(mean)).c_str());
}

int RunBench(const BenchFlags& flags) {
  if (flags.warmup < 0 || flags.iterations < 1) {
    return ReportError(Status(StatusCode::kInvalidArgument,
                              "--warmup must be >= 0 and --iterations >= 1"));
  }
  if (Status s = LoadPlugins(flags.plugin_dirs); !s.ok()) return ReportError(s);
  SessionOptions options;
  options.num_threads = flags.threads;
  options.backend = flags.backend;
  options.plan_path = flags.plan;
  options.strict_non_finite = flags.strict_nan;
  if (Status s = ParseShapeFlags(flags.shapes, options); !s.ok()) return ReportError(s);
  auto session = Session::LoadFile(flags.model, options);
  if (!session.ok()) return ReportError(session.status());
  PrintWarnings(**session);
  auto inputs = LoadInputs(**session, flags.inputs, /*random_rest=*/true, /*seed=*/0);
  if (!inputs.ok()) return ReportError(inputs.status());

  const bool profiling = flags.profile || !flags.export_profile.empty();
  std::vector<double> samples;
  std::vector<RunProfile> profiles;
  std::vector<TracedRun> traced;
  std::chrono::steady_clock::time_point first_timed;
  for (int i = 0; i < flags.warmup + flags.iterations; ++i) {
    RunProfile profile;
    auto start = std::chrono::steady_clock::now();
    auto outputs = (*session)->Run(*inputs, profiling ? &profile : nullptr);
    auto end = std::chrono::steady_clock::now();
    if (!outputs.ok()) return ReportError(outputs.status());
    if (i < flags.warmup) continue;
    if (i == flags.warmup) first_timed = start;
    samples.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    if (!flags.export_profile.empty()) {
      traced.push_back({std::chrono::duration<double, std::milli>(start - first_timed).count(), profile});
    }
    if (profiling) profiles.push_back(std::move(profile));
  }
  LatencyStats s = ComputeLatencyStats(samples);
  std::printf("model: %s  threads: %d  iterations: %d (after %d warm-up)\n", flags.model.c_str(),
              flags.threads, s.count, flags.warmup);
  std::printf("%s\n", PlacementSummary(**session).c_str());
  std::printf("latency: p50 %s  p90 %s  p99 %s  min %s  mean %s\n", FormatMillis(s.p50_ms).c_str(),
              FormatMillis(s.p90_ms).c_str(), FormatMillis(s.p99_ms).c_str(),
              FormatMillis(s.min_ms).c_str(), FormatMillis(s.mean_ms).c_str());
  if (flags.profile) {
    PrintProfile(profiles);
    PrintStepsAgainstEstimate(MeanProfile(profiles), (*session)->placement_estimate(), s.mean_ms,
                              s.count);
  }
  if (!flags.export_profile.empty()) {
    if (Status st = WriteFileAtomically(flags.export_profile, ChromeTraceJson(traced)); !st.ok()) return ReportError(st);
    std::printf("trace of %zu runs written to %s (chrome://tracing or ui.perfetto.dev)\n", traced.size(),
                flags.export_profile.c_str());
  }
  return 0;
}

}  // namespace

void AddBenchCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand("bench", "Measure a model's latency (p50/p90/p99)");
  cmd->add_option("model", flags->model, "ONNX model file")->required();
  cmd->add_option("--input", flags->inputs, "Input tensor NAME=FILE (others are random)");
  cmd->add_option("--shape", flags->shapes, "Fix an input's shape: NAME=1x3x224x224 (repeatable)");
  cmd->add_option("--warmup", flags->warmup, "Untimed runs first")->capture_default_str();
  cmd->add_option("--iterations", flags->iterations, "Timed runs")->capture_default_str();
  cmd->add_option("--threads", flags->threads, "Threads (0 = one per core)")
      ->check(NonEmptyValue());
  cmd->add_option("--backend", flags->backend,
                  "Run every node this backend has a rule for on it, the rest on native")
      ->capture_default_str();
  cmd->add_option("--plan", flags->plan, "Run the placement saved by `collage optimize --save-plan`")
      ->excludes(cmd->get_option("--backend"));
  AddStrictNanOption(cmd, flags->strict_nan);
  AddPluginOption(cmd, flags->plugin_dirs);
  cmd->add_flag("--profile", flags->profile,
                "Also print the time spent per backend and kernel, and per step beside the plan's "
                "estimate");
  cmd->add_option("--export-profile", flags->export_profile,
                  "Write a Chrome trace (JSON) with one event per kernel, naming backend and rule");
  cmd->callback([flags, &exit_code] { exit_code = RunBench(*flags); });
}

}  // namespace collage::cli
