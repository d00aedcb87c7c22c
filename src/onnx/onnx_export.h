// Graph IR → ONNX ModelProto (opset of the graph, constants as initializers), so the
// built-in models can be run by other runtimes and the placement can be shown in viewers.
#pragma once

#include <string>

#include "collage/status.h"
#include "collage/sdk/graph.h"

namespace onnx {
class ModelProto;
}

namespace collage {

// Fills `model`. Node metadata (e.g. the placement) can be attached later by the caller.
Status ExportOnnxModel(const Graph& graph, onnx::ModelProto& model);
StatusOr<std::string> ExportOnnxBytes(const Graph& graph);
Status ExportOnnxFile(const Graph& graph, const std::string& path);

}  // namespace collage
