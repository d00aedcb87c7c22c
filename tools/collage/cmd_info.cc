// `collage info MODEL`: what the model takes and gives, what it is made of, what it costs.
#include <cstdio>
#include <map>

#include "commands.h"
#include "ir/flops.h"
#include "collage/sdk/graph.h"

namespace collage::cli {

namespace {

struct InfoFlags {
  std::string model;
  std::vector<std::string> shapes;
};

int RunInfo(const InfoFlags& flags) {
  SessionOptions options;
  if (Status s = ParseShapeFlags(flags.shapes, options); !s.ok()) return ReportError(s);
  auto session = Session::LoadFile(flags.model, options);
  if (!session.ok()) return ReportError(session.status());
  const Graph& graph = (*session)->graph();

  std::printf("model: %s (opset %lld)\n", flags.model.c_str(), static_cast<long long>(graph.opset()));
  std::printf("inputs:\n");
  for (const TensorInfo& t : (*session)->inputs()) {
    std::printf("  %-24s %-8s %s\n", t.name.c_str(), DTypeName(t.dtype), ShapeToString(t.shape).c_str());
  }
  std::printf("outputs:\n");
  for (const TensorInfo& t : (*session)->outputs()) {
    std::printf("  %-24s %-8s %s\n", t.name.c_str(), DTypeName(t.dtype), ShapeToString(t.shape).c_str());
  }
  std::map<std::string, int> histogram;
  for (const Node& node : graph.nodes()) {
    histogram[node.domain.empty() ? node.op_type : node.domain + "::" + node.op_type]++;
  }
  std::printf("nodes: %d (after constant folding)\n", graph.num_nodes());
  for (const auto& [op, count] : histogram) std::printf("  %-24s %d\n", op.c_str(), count);
  std::printf("parameters: %lld (%.1f M)\n", static_cast<long long>(graph.NumParameters()),
              static_cast<double>(graph.NumParameters()) / 1e6);
  std::printf("compute: %.3f GFLOP per run (a multiply-add counts 2)\n", GraphFlops(graph) / 1e9);
  return 0;
}

}  // namespace

void AddInfoCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<InfoFlags>();
  CLI::App* cmd = app.add_subcommand("info", "Show a model's inputs, outputs, ops, parameters and GFLOPs");
  cmd->add_option("model", flags->model, "ONNX model file")->required();
  cmd->add_option("--shape", flags->shapes, "Fix an input's shape: NAME=1x3x224x224 (repeatable)");
  cmd->callback([flags, &exit_code] { exit_code = RunInfo(*flags); });
}

}  // namespace collage::cli
