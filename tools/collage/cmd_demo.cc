// `collage demo`: the main job end to end on a built-in model — build it, export it to ONNX,
// import the file, run it, check the outputs against the in-memory model; then place it by
// measurement across every backend, and show the library's end-to-end decision between the
// search's plan and each backend alone (checked against the reference kernels, timed side by
// side) with the search's estimate against the run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "collage/file_io.h"
#include "collage/cancellation.h"
#include "collage/latency_stats.h"
#include "collage/report.h"
#include "collage/zoo.h"
#include "commands.h"
#include "optimize_summary.h"

namespace collage::cli {

namespace {

struct DemoFlags {
  std::string model = "resnet50";
  std::string keep;
  int threads = 0;
  int iterations = 5;
  int rounds = OptimizeOptions().final_rounds;
  bool strict_nan = false;
};

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.ToVector<double>(), y = b.ToVector<double>();
  if (x.size() != y.size()) return INFINITY;
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) d = std::max(d, std::fabs(x[i] - y[i]));
  return d;
}

// Median latency of `iterations` runs; the outputs of the last run.
StatusOr<double> TimeRuns(Session& session, const std::map<std::string, Tensor>& inputs,
                          int iterations, std::map<std::string, Tensor>& outputs) {
  std::vector<double> samples;
  for (int i = 0; i < std::max(1, iterations); ++i) {
    auto start = std::chrono::steady_clock::now();
    COLLAGE_ASSIGN_OR_RETURN(outputs, session.Run(inputs));
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return ComputeLatencyStats(samples).p50_ms;
}

// The placement search on every backend, ending with the library's end-to-end decision
// between its plan and each backend alone; then what it estimated against the run.
Status OptimizeAndCompare(const std::string& path, const SessionOptions& options, int rounds) {
  COLLAGE_ASSIGN_OR_RETURN(auto session, Session::LoadFile(path, options));
  std::printf(
      "[5/6] the placement search: every backend's candidates measured on this machine "
      "(cached in the cost database), the op-level search, then its plan and each backend "
      "alone (native where the backend has no rule) checked and timed side by side\n");
  OptimizeOptions optimize;
  CancelOnSignals(optimize.cancel);  // Ctrl-C stops measuring at the next candidate
  optimize.final_rounds = rounds;
  optimize.max_final_rounds = std::max(optimize.max_final_rounds, rounds);
  OptimizeReport report;
  COLLAGE_RETURN_IF_ERROR(OptimizeWithProgress(*session, optimize, &report));
  std::printf("%s\n", PlacementSummary(*session).c_str());
  PrintOptimizeReport(report, report.in_run);
  std::printf("[6/6] the end-to-end decision:\n");
  PrintFinalists(report);
  return Status::Ok();
}

Status Demo(const DemoFlags& flags) {
  if (flags.rounds < 0) return InvalidArgument("--rounds must be >= 0 (0: no end-to-end decision)");
  std::printf("[1/6] building the built-in model '%s'\n", flags.model.c_str());
  ModelSummary summary;
  COLLAGE_ASSIGN_OR_RETURN(std::string onnx, ExportZooModel(flags.model, &summary));
  std::printf("      %d nodes, %.1f M parameters, %.2f GFLOP\n", summary.num_nodes,
              static_cast<double>(summary.num_parameters) / 1e6, summary.flops / 1e9);

  std::string path = flags.keep;
  if (path.empty()) {
    path = (std::filesystem::temp_directory_path() / ("collage-demo-" + flags.model + ".onnx")).string();
  }
  COLLAGE_RETURN_IF_ERROR(WriteFileAtomically(path, onnx));
  onnx = std::string();  // the file holds it now
  std::printf("[2/6] exported to %s (%.1f MB)\n", path.c_str(),
              static_cast<double>(std::filesystem::file_size(path)) / 1e6);

  SessionOptions options;
  options.shapes_per_run = false;  // the command line fixes every shape (commands.h)
  options.num_threads = flags.threads;
  options.strict_non_finite = flags.strict_nan;
  COLLAGE_ASSIGN_OR_RETURN(auto from_file, Session::LoadFile(path, options));
  COLLAGE_ASSIGN_OR_RETURN(auto in_memory, LoadZooModel(flags.model, options));
  std::printf("[3/6] imported the file: %zu input(s), %zu output(s), %d nodes\n",
              from_file->inputs().size(), from_file->outputs().size(),
              from_file->summary().num_nodes);

  COLLAGE_ASSIGN_OR_RETURN(auto inputs, LoadInputs(*from_file, {}, /*random_rest=*/true, /*seed=*/1));
  std::map<std::string, Tensor> outputs;
  COLLAGE_ASSIGN_OR_RETURN(double median, TimeRuns(*from_file, inputs, flags.iterations, outputs));
  COLLAGE_ASSIGN_OR_RETURN(auto reference, in_memory->Run(inputs));
  std::printf("[4/6] ran it %d times on the native backend: median %s\n", std::max(1, flags.iterations),
              FormatMillis(median).c_str());

  bool all_equal = true;
  for (const auto& [name, tensor] : outputs) {
    double diff = MaxAbsDiff(tensor, reference.at(name));
    all_equal = all_equal && diff == 0.0;
    std::printf("      output %-20s %s %s  max |file - in-memory| = %g\n", name.c_str(),
                DTypeName(tensor.dtype()), ShapeToString(tensor.shape()).c_str(), diff);
  }
  if (!all_equal) {
    return Status(StatusCode::kInternal,
                  "the imported model's outputs differ from the in-memory model's");
  }
  Status searched = OptimizeAndCompare(path, options, flags.rounds);
  if (flags.keep.empty()) std::filesystem::remove(path);
  COLLAGE_RETURN_IF_ERROR(searched);
  std::printf(
      "summary: '%s' exported, re-imported, placed by measurement across every backend and run;\n"
      "         outputs identical to the in-memory model; every finalist not skipped agreed\n"
      "         with the reference kernels before it was timed\n",
      flags.model.c_str());
  return Status::Ok();
}

}  // namespace

void AddDemoCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<DemoFlags>();
  CLI::App* cmd = app.add_subcommand("demo", "Build, export, import and run a built-in model");
  cmd->add_option("--model", flags->model, "Built-in model (see `collage zoo list`)")->capture_default_str();
  cmd->add_option("--keep", flags->keep, "Keep the exported ONNX file at this path");
  cmd->add_option("--threads", flags->threads, "Threads (0 = one per core)")
      ->check(NonEmptyValue());
  cmd->add_option("--iterations", flags->iterations, "Timed runs on the native backend")->capture_default_str();
  cmd->add_option("--rounds", flags->rounds,
                  "Least interleaved rounds of the end-to-end decision between the search's plan "
                  "and each backend alone")
      ->capture_default_str();
  AddStrictNanOption(cmd, flags->strict_nan);
  cmd->callback([flags, &exit_code] {
    Status s = Demo(*flags);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace collage::cli
