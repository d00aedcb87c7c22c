// The built-in models for applications (collage/zoo.h): src/zoo builds them, src/onnx
// exports them.
#include "collage/zoo.h"

#include "ops/flops.h"
#include "onnx/onnx_export.h"
#include "zoo/zoo.h"
#include "session/session_access.h"

namespace collage {

std::vector<ZooModelInfo> ListZooModels() {
  std::vector<ZooModelInfo> list;
  for (const ZooModel& model : ZooModels()) list.push_back({model.name, model.description});
  return list;
}

StatusOr<std::string> ExportZooModel(const std::string& name, ModelSummary* summary) {
  COLLAGE_ASSIGN_OR_RETURN(Graph graph, BuildZooModel(name));
  if (summary != nullptr) *summary = SummarizeGraph(graph);
  return ExportOnnxBytes(graph);
}

StatusOr<std::unique_ptr<Session>> LoadZooModel(const std::string& name,
                                                const SessionOptions& options) {
  COLLAGE_ASSIGN_OR_RETURN(Graph graph, BuildZooModel(name));
  return SessionAccess::FromGraph(std::move(graph), options);
}

}  // namespace collage
