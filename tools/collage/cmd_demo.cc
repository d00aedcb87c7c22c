// `collage demo`: the main job end to end on a built-in model — build it, export it to ONNX,
// import the file, run it, check the outputs against the in-memory model, time it.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "ir/flops.h"
#include "onnx/onnx_export.h"
#include "util/errors.h"
#include "util/latency_stats.h"
#include "zoo/zoo.h"

namespace collage::cli {

namespace {

struct DemoFlags {
  std::string model = "resnet50";
  std::string keep;
  int threads = 0;
  int iterations = 5;
};

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.ToVector<double>(), y = b.ToVector<double>();
  if (x.size() != y.size()) return INFINITY;
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) d = std::max(d, std::fabs(x[i] - y[i]));
  return d;
}

Status Demo(const DemoFlags& flags) {
  std::printf("[1/4] building the built-in model '%s'\n", flags.model.c_str());
  COLLAGE_ASSIGN_OR_RETURN(Graph graph, BuildZooModel(flags.model));
  std::printf("      %d nodes, %.1f M parameters, %.2f GFLOP\n", graph.num_nodes(),
              static_cast<double>(graph.NumParameters()) / 1e6, GraphFlops(graph) / 1e9);

  std::string path = flags.keep;
  if (path.empty()) {
    path = (std::filesystem::temp_directory_path() / ("collage-demo-" + flags.model + ".onnx")).string();
  }
  COLLAGE_RETURN_IF_ERROR(ExportOnnxFile(graph, path));
  std::printf("[2/4] exported to %s (%.1f MB)\n", path.c_str(),
              static_cast<double>(std::filesystem::file_size(path)) / 1e6);

  SessionOptions options;
  options.num_threads = flags.threads;
  COLLAGE_ASSIGN_OR_RETURN(auto from_file, Session::LoadFile(path, options));
  COLLAGE_ASSIGN_OR_RETURN(auto in_memory, Session::FromGraph(std::move(graph), options));
  std::printf("[3/4] imported the file: %zu input(s), %zu output(s), %d nodes\n",
              from_file->inputs().size(), from_file->outputs().size(), from_file->graph().num_nodes());

  COLLAGE_ASSIGN_OR_RETURN(auto inputs, LoadInputs(*from_file, {}, /*random_rest=*/true, /*seed=*/1));
  std::vector<double> samples;
  std::map<std::string, Tensor> outputs;
  for (int i = 0; i < std::max(1, flags.iterations); ++i) {
    auto start = std::chrono::steady_clock::now();
    COLLAGE_ASSIGN_OR_RETURN(outputs, from_file->Run(inputs));
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  COLLAGE_ASSIGN_OR_RETURN(auto reference, in_memory->Run(inputs));
  LatencyStats stats = ComputeLatencyStats(samples);
  std::printf("[4/4] ran it %d times on the reference kernels: median %s (min %s)\n", stats.count,
              FormatMillis(stats.p50_ms).c_str(), FormatMillis(stats.min_ms).c_str());

  bool all_equal = true;
  for (const auto& [name, tensor] : outputs) {
    double diff = MaxAbsDiff(tensor, reference.at(name));
    all_equal = all_equal && diff == 0.0;
    std::printf("      output %-20s %s %s  max |file - in-memory| = %g\n", name.c_str(),
                DTypeName(tensor.dtype()), ShapeToString(tensor.shape()).c_str(), diff);
  }
  if (!all_equal) return Internal("the imported model's outputs differ from the in-memory model's");
  std::printf("summary: '%s' exported, re-imported and run; outputs identical to the in-memory model\n",
              flags.model.c_str());
  if (flags.keep.empty()) std::filesystem::remove(path);
  return Status::Ok();
}

}  // namespace

void AddDemoCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<DemoFlags>();
  CLI::App* cmd = app.add_subcommand("demo", "Build, export, import and run a built-in model");
  cmd->add_option("--model", flags->model, "Built-in model (see `collage zoo list`)")->capture_default_str();
  cmd->add_option("--keep", flags->keep, "Keep the exported ONNX file at this path");
  cmd->add_option("--threads", flags->threads, "Threads (0 = one per core)");
  cmd->add_option("--iterations", flags->iterations, "Timed runs")->capture_default_str();
  cmd->callback([flags, &exit_code] {
    Status s = Demo(*flags);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace collage::cli
