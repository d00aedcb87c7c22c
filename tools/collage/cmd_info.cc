// `collage info MODEL`: what the model takes and gives, what it is made of, what it costs.
#include <cstdio>
#include <map>

#include "collage/printable_text.h"
#include "commands.h"

namespace collage::cli {

namespace {

struct InfoFlags {
  std::string model;
  std::vector<std::string> shapes;
};

int RunInfo(const InfoFlags& flags) {
  SessionOptions options;
  options.shapes_per_run = false;  // the command line fixes every shape (commands.h)
  if (Status s = ParseShapeFlags(flags.shapes, options); !s.ok()) return ReportError(s);
  auto session = Session::LoadFile(flags.model, options);
  if (!session.ok()) return ReportError(session.status());
  const ModelSummary summary = (*session)->summary();

  std::printf("model: %s (opset %lld)\n", PrintableText(flags.model).c_str(),
              static_cast<long long>(summary.opset));
  std::printf("inputs:\n");
  for (const TensorInfo& t : (*session)->inputs()) {
    std::printf("  %-24s %-8s %s\n", PrintableText(t.name).c_str(), DTypeName(t.dtype),
                ShapeToString(t.shape).c_str());
  }
  std::printf("outputs:\n");
  for (const TensorInfo& t : (*session)->outputs()) {
    std::printf("  %-24s %-8s %s\n", PrintableText(t.name).c_str(), DTypeName(t.dtype),
                ShapeToString(t.shape).c_str());
  }
  std::printf("nodes: %d (%s)\n", summary.num_nodes,
              summary.flops_known ? "after constant folding"
                                  : "as written: control flow or shapes set by its data, run "
                                    "in segments compiled per run");
  for (const auto& [op, count] : summary.op_counts)
    std::printf("  %-24s %d\n", PrintableText(op).c_str(), count);
  std::printf("parameters: %lld (%.1f M)\n", static_cast<long long>(summary.num_parameters),
              static_cast<double>(summary.num_parameters) / 1e6);
  if (summary.flops_known) {
    std::printf("compute: %.3f GFLOP per run (a multiply-add counts 2)\n", summary.flops / 1e9);
  } else {
    std::printf("compute: set by each run's data\n");
  }
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
