// The built-in models (`collage zoo`): well-known networks built in code with random weights
// from a fixed seed, so that every build, export and run gives the very same model. For trying
// collage without a model file, and for benchmarks that need one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/model_summary.h"
#include "collage/session.h"
#include "collage/status.h"

namespace collage {

struct ZooModelInfo {
  std::string name;         // "resnet50"
  std::string description;  // one line: what it is, its input shape
};
std::vector<ZooModelInfo> ListZooModels();

// The model as the bytes of an ONNX file (Session::LoadBytes takes them; written to a .onnx
// file, any ONNX runtime does). With `summary`, also what the model is made of. NotFound,
// listing the known names, for an unknown name.
StatusOr<std::string> ExportZooModel(const std::string& name, ModelSummary* summary = nullptr);

// A session on the model as built in memory, without the trip through ONNX.
StatusOr<std::unique_ptr<Session>> LoadZooModel(const std::string& name,
                                                const SessionOptions& options = {});

}  // namespace collage
