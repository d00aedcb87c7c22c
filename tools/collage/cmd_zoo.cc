// `collage zoo list` and `collage zoo export NAME -o FILE`: the built-in models.
#include <cstdio>

#include "collage/file_io.h"
#include "collage/zoo.h"
#include "commands.h"

namespace collage::cli {

namespace {

int ListZoo() {
  for (const ZooModelInfo& m : ListZooModels()) std::printf("%-14s %s\n", m.name.c_str(), m.description.c_str());
  return 0;
}

int ExportZoo(const std::string& name, const std::string& path) {
  ModelSummary summary;
  auto onnx = ExportZooModel(name, &summary);
  if (!onnx.ok()) return ReportError(onnx.status());
  if (Status s = WriteFileAtomically(path, *onnx); !s.ok()) return ReportError(s);
  std::printf("wrote %s: %s, %d nodes, %.1f M parameters, %.2f GFLOP\n", path.c_str(), name.c_str(),
              summary.num_nodes, static_cast<double>(summary.num_parameters) / 1e6,
              summary.flops / 1e9);
  return 0;
}

}  // namespace

void AddZooCommand(CLI::App& app, int& exit_code) {
  CLI::App* zoo = app.add_subcommand("zoo", "The built-in models");
  zoo->require_subcommand(1);
  CLI::App* list = zoo->add_subcommand("list", "List the built-in models");
  list->callback([&exit_code] { exit_code = ListZoo(); });
  auto name = std::make_shared<std::string>();
  auto path = std::make_shared<std::string>();
  CLI::App* exp = zoo->add_subcommand("export", "Write a built-in model as an ONNX file");
  exp->add_option("name", *name, "Model name (see `collage zoo list`)")->required();
  exp->add_option("-o,--output", *path, "Output .onnx file")->required();
  exp->callback([name, path, &exit_code] { exit_code = ExportZoo(*name, *path); });
}

}  // namespace collage::cli
