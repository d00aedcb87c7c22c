// `collage bench MODEL`: load and compile times, the first inference, then latency percentiles
// and throughput over repeated runs from one or several concurrent streams (after warm-up),
// optionally the time per kernel and a Chrome trace; --json writes every figure.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "bench_json.h"
#include "bench_runner.h"
#include "collage/duration_text.h"
#include "collage/file_io.h"
#include "collage/latency_stats.h"
#include "collage/native_backend.h"
#include "collage/printable_text.h"
#include "collage/report.h"
#include "commands.h"

namespace collage::cli {

namespace {

struct BenchFlags {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  int warmup = 3;
  int iterations = 0;
  bool iterations_given = false;
  std::string duration;  // empty: not given
  int streams = 1;
  std::string json;
  int threads = 0;
  std::string backend = kNativeBackend;
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
  // Groups that ran no kernel (views, Concats written in place) get a row of their own.
  auto key = [](const NodeTiming& t) {
    return t.backend + " " + t.op_type + (t.elided.empty() ? "" : " (" + t.elided + ")");
  };
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
    std::printf("  %-34s %4d steps  %10s  %5.1f%%\n", PrintableText(op).c_str(), stat.second,
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
                  step.rule.c_str(),
                  PrintableText("conversion of " + step.node_name).substr(0, 28).c_str(), "-",
                  FormatMillis(step.milliseconds).c_str(), "-");
      continue;
    }
    // 0: not estimated (a single backend, a region measured only within whole plans).
    const double estimated = group < estimate.group_ms.size() ? estimate.group_ms[group] : 0;
    ++group;
    const std::string op_types = PrintableText(step.op_type);  // a model's domain may hold anything
    const std::string ops = op_types.size() > 28 ? op_types.substr(0, 25) + "..." : op_types;
    const std::string ratio =
        estimated > 0 ? fmt::format("{:.2f}x", step.milliseconds / estimated) : "-";
    std::printf("  %4zu  %-14s %-24s %-28s %10s %10s %7s\n", s, step.backend.c_str(),
                RuleInPrecision(step.rule, step.precision).substr(0, 24).c_str(), ops.c_str(),
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

// Without --iterations or --duration: enough runs that p99 is not simply the slowest one,
// unless that would take long.
constexpr int kDefaultRuns = 200;
constexpr double kDefaultSeconds = 20;

// The limits the flags ask for.
StatusOr<BenchLimits> LimitsOf(const BenchFlags& flags) {
  if (flags.warmup < 0) return InvalidArgument("--warmup must be >= 0");
  if (flags.streams < 1) return InvalidArgument("--streams must be >= 1");
  // Each stream is a thread running the whole model: beyond a few per core they only queue.
  const int most_streams = 16 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (flags.streams > most_streams) {
    return InvalidArgument(fmt::format(
        "--streams {} is more than this machine can run at once (at most {}, 16 per core)",
        flags.streams, most_streams));
  }
  if (flags.iterations_given && flags.iterations < 1) return InvalidArgument("--iterations must be >= 1");
  BenchLimits limits;
  limits.streams = flags.streams;
  limits.profile = flags.profile || !flags.export_profile.empty();
  if (!flags.iterations_given && flags.duration.empty()) {
    limits.max_runs = kDefaultRuns;
    limits.max_seconds = kDefaultSeconds;
    return limits;
  }
  limits.max_runs = flags.iterations_given ? flags.iterations : 0;
  if (!flags.duration.empty()) {
    COLLAGE_ASSIGN_OR_RETURN(limits.max_seconds, ParseSeconds(flags.duration, "--duration"));
  }
  return limits;
}

std::string LimitsText(const BenchLimits& limits) {
  if (limits.max_runs > 0 && limits.max_seconds > 0) {
    return fmt::format("{} runs or {:g} s, whichever first", limits.max_runs, limits.max_seconds);
  }
  if (limits.max_runs > 0) return fmt::format("{} runs", limits.max_runs);
  return fmt::format("{:g} s", limits.max_seconds);
}

StatusOr<double> TimeOneRun(Session& session, const std::map<std::string, Tensor>& inputs) {
  const auto start = std::chrono::steady_clock::now();
  auto outputs = session.Run(inputs);
  const auto end = std::chrono::steady_clock::now();
  if (!outputs.ok()) return outputs.status();
  return std::chrono::duration<double, std::milli>(end - start).count();
}

void PrintSummary(const BenchSummary& s, const BenchLimits& limits, const Session& session) {
  const LatencyStats& l = s.latency;
  std::printf("model: %s  threads: %d  streams: %d\n", s.model.c_str(), s.threads, s.streams);
  std::printf("%s\n", PlacementSummary(session).c_str());
  std::printf("load: %s (import %s, compile %s)  first inference: %s\n",
              FormatMillis(s.load.import_ms + s.load.compile_ms).c_str(),
              FormatMillis(s.load.import_ms).c_str(), FormatMillis(s.load.compile_ms).c_str(),
              FormatMillis(s.first_inference_ms).c_str());
  std::printf("runs: %d in %.2f s (limit: %s; after %d warm-up)  throughput: %.2f inferences/s\n",
              l.count, s.wall_seconds, LimitsText(limits).c_str(), s.warmup_runs, s.throughput());
  std::printf("latency: p50 %s  p90 %s  p95 %s  p99 %s  min %s  max %s  mean %s  stddev %s\n",
              FormatMillis(l.p50_ms).c_str(), FormatMillis(l.p90_ms).c_str(),
              FormatMillis(l.p95_ms).c_str(), FormatMillis(l.p99_ms).c_str(),
              FormatMillis(l.min_ms).c_str(), FormatMillis(l.max_ms).c_str(),
              FormatMillis(l.mean_ms).c_str(), FormatMillis(l.stddev_ms).c_str());
  if (l.p99_is_max()) {
    std::printf("note: with %d runs p99 is the slowest run; 100 or more give a real p99\n", l.count);
  }
}

// The run's arithmetic rate against this CPU's float32 peak (measured now, after the timed
// runs, at the threads they could use): near the peak, no placement gains much; far below it,
// memory, small ops or overheads bound the model. One stream's rate is taken at p50; several
// streams' from the throughput.
void MeasureCompute(const Session& session, BenchSummary& summary) {
  const ModelSummary model = session.summary();
  if (!model.flops_known || model.flops <= 0 || summary.latency.p50_ms <= 0) return;
  summary.gflop_per_run = model.flops / 1e9;
  summary.gflops = summary.streams == 1 ? summary.gflop_per_run / (summary.latency.p50_ms / 1e3)
                                        : summary.gflop_per_run * summary.throughput();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  summary.peak = MeasureFmaPeak(std::min(cores, summary.threads * summary.streams));
}

// "8.194 GFLOP", "3.2 MFLOP", "8 FLOP".
std::string FlopText(double gflop) {
  if (gflop >= 1) return fmt::format("{:.3f} GFLOP", gflop);
  if (gflop >= 1e-3) return fmt::format("{:.1f} MFLOP", gflop * 1e3);
  return fmt::format("{:.0f} FLOP", gflop * 1e9);
}

void PrintCompute(const BenchSummary& s) {
  if (s.gflop_per_run <= 0) return;
  std::printf("compute: %s per run, %.3g GFLOP/s", FlopText(s.gflop_per_run).c_str(), s.gflops);
  if (s.peak.gflops > 0) {
    std::printf(
        " = %.0f%% of this CPU's float32 peak at %d thread%s (%.1f GFLOP/s, %s, measured now)",
        100 * s.gflops / s.peak.gflops, s.peak.threads, s.peak.threads == 1 ? "" : "s",
        s.peak.gflops, s.peak.isa.c_str());
  }
  std::printf("\n");
}

Status RunBench(const BenchFlags& flags) {
  COLLAGE_ASSIGN_OR_RETURN(BenchLimits limits, LimitsOf(flags));
  COLLAGE_RETURN_IF_ERROR(LoadPlugins(flags.plugin_dirs));
  SessionOptions options;
  options.shapes_per_run = false;  // the command line fixes every shape (commands.h)
  options.num_threads = flags.threads;
  options.backend = flags.backend;
  options.plan_path = flags.plan;
  options.strict_non_finite = flags.strict_nan;
  COLLAGE_RETURN_IF_ERROR(ParseShapeFlags(flags.shapes, options));
  COLLAGE_ASSIGN_OR_RETURN(InputFiles files, ReadInputFiles(flags.inputs));
  FixShapesFromInputFiles(files, options);
  COLLAGE_ASSIGN_OR_RETURN(auto session, Session::LoadFile(flags.model, options));
  PrintWarnings(*session);
  COLLAGE_ASSIGN_OR_RETURN(auto inputs,
                           LoadInputs(*session, std::move(files), /*random_rest=*/true, /*seed=*/0));

  BenchSummary summary;
  summary.model = flags.model;
  summary.placement = PlacementSourceName(session->placement_source());
  summary.plan = flags.plan;
  summary.threads = session->num_threads();
  summary.streams = limits.streams;
  summary.warmup_runs = flags.warmup;
  summary.max_runs = limits.max_runs;
  summary.max_seconds = limits.max_seconds;
  summary.load = session->load_times();
  // The first run pays what later runs do not (first touches of the arena and the weights,
  // libraries' lazy set-up): reported on its own, then the warm-up.
  COLLAGE_ASSIGN_OR_RETURN(summary.first_inference_ms, TimeOneRun(*session, inputs));
  // The warm-up keeps within the time limit as well (--duration, or the default's).
  const auto warmup_start = std::chrono::steady_clock::now();
  int warmup_runs = 0;
  for (; warmup_runs < flags.warmup; ++warmup_runs) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - warmup_start).count();
    if (limits.max_seconds > 0 && elapsed >= limits.max_seconds) break;
    COLLAGE_RETURN_IF_ERROR(TimeOneRun(*session, inputs).status());
  }
  summary.warmup_runs = warmup_runs;
  COLLAGE_ASSIGN_OR_RETURN(BenchRuns runs, RunBenchStreams(*session, inputs, limits));
  summary.wall_seconds = runs.wall_seconds;
  summary.latency = ComputeLatencyStats(runs.latencies_ms);
  MeasureCompute(*session, summary);

  PrintSummary(summary, limits, *session);
  PrintCompute(summary);
  if (flags.profile) {
    PrintProfile(runs.profiles);
    PrintStepsAgainstEstimate(MeanProfile(runs.profiles), session->placement_estimate(),
                              summary.latency.mean_ms, summary.latency.count);
  }
  if (!flags.export_profile.empty()) {
    COLLAGE_RETURN_IF_ERROR(WriteFileAtomically(flags.export_profile, ChromeTraceJson(runs.traced)));
    std::printf("trace of %zu runs written to %s (chrome://tracing or ui.perfetto.dev)\n",
                runs.traced.size(), flags.export_profile.c_str());
  }
  if (!flags.json.empty()) {
    COLLAGE_RETURN_IF_ERROR(WriteFileAtomically(flags.json, BenchJson(summary, *session)));
    std::printf("results written to %s\n", flags.json.c_str());
  }
  if (flags.plan.empty() && !session->compiles_per_run()) PrintHowToPlace(flags.model, flags.backend);
  return Status();
}

}  // namespace

void AddBenchCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Measure a model's load time, first inference, latency percentiles and throughput");
  cmd->add_option("model", flags->model, "ONNX model file")->required();
  cmd->add_option("--input", flags->inputs, "Input tensor NAME=FILE (others are random)");
  cmd->add_option("--shape", flags->shapes, "Fix an input's shape: NAME=1x3x224x224 (repeatable)");
  cmd->add_option("--warmup", flags->warmup, "Untimed runs after the first inference")
      ->capture_default_str();
  CLI::Option* iterations = cmd->add_option(
      "--iterations", flags->iterations,
      "Timed runs, every stream's together (default: 200, or 20 s if that comes first)");
  cmd->add_option("--duration", flags->duration,
                  "Run for this long (10s, 2m, 500ms); with --iterations, whichever comes first");
  cmd->add_option("--streams", flags->streams,
                  "Concurrent requests on the one session (threads each sending its next run when "
                  "the last returns); throughput counts them all")
      ->capture_default_str();
  cmd->add_option("--json", flags->json,
                  "Write every figure, the settings, the machine and the library versions (JSON)");
  cmd->add_option("--threads", flags->threads,
                  "Threads per run (0 = the count --plan was measured with, else one per core)")
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
  cmd->callback([flags, iterations, &exit_code] {
    flags->iterations_given = iterations->count() > 0;
    Status s = RunBench(*flags);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace collage::cli
