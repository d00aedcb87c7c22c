// `collage info MODEL`: what the model takes and gives, what it is made of, what it costs.
// Dims the model leaves dynamic stay so (shown as "?", the nodes as written) unless --shape or
// an --input file fixes them (then the model as it runs at those shapes, folded).
#include <cstdio>
#include <map>

#include "collage/printable_text.h"
#include "commands.h"

namespace collage::cli {

namespace {

struct InfoFlags {
  std::string model;
  std::vector<std::string> shapes;
  std::vector<std::string> inputs;
};

// "1x?x224" for a shape whose dim 1 is dynamic (-1).
std::string DimsText(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string text;
  for (size_t d = 0; d < shape.size(); ++d) {
    text += (d ? "x" : "") + (shape[d] < 0 ? std::string("?") : std::to_string(shape[d]));
  }
  return text;
}

int RunInfo(const InfoFlags& flags) {
  SessionOptions options;
  if (Status s = ParseShapeFlags(flags.shapes, options); !s.ok()) return ReportError(s);
  auto files = ReadInputFiles(flags.inputs);
  if (!files.ok()) return ReportError(files.status());
  FixShapesFromInputFiles(*files, options);
  // Without shapes given, a model of dynamic dims is described as written; with them, as it
  // runs at those shapes (every dim then fixed: commands.h).
  options.shapes_per_run = options.input_shapes.empty();
  auto session = Session::LoadFile(flags.model, options);
  if (!session.ok()) return ReportError(session.status());
  const ModelSummary summary = (*session)->summary();

  std::printf("model: %s (opset %lld)\n", PrintableText(flags.model).c_str(),
              static_cast<long long>(summary.opset));
  std::printf("inputs:\n");
  for (const TensorInfo& t : (*session)->inputs()) {
    std::printf("  %-24s %-8s %s\n", PrintableText(t.name).c_str(), DTypeName(t.dtype),
                DimsText(t.shape).c_str());
  }
  std::printf("outputs:\n");
  for (const TensorInfo& t : (*session)->outputs()) {
    std::printf("  %-24s %-8s %s\n", PrintableText(t.name).c_str(), DTypeName(t.dtype),
                DimsText(t.shape).c_str());
  }
  bool dynamic = false;
  for (const TensorInfo& t : (*session)->inputs()) {
    for (int64_t d : t.shape) dynamic = dynamic || d < 0;
  }
  const std::string nodes_are =
      summary.flops_known ? "after constant folding"
      : dynamic ? "as written: compiled per run, at each run's shapes (? above); --shape or "
                  "--input fixes those dims"
                : "as written: control flow or shapes set by its data, run in segments "
                  "compiled per run";
  std::printf("nodes: %d (%s)\n", summary.num_nodes, nodes_are.c_str());
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
  cmd->add_option("--input", flags->inputs,
                  "An input's data NAME=FILE (.npy/.pb): its shape fixes the input's dynamic dims");
  cmd->callback([flags, &exit_code] { exit_code = RunInfo(*flags); });
}

}  // namespace collage::cli
