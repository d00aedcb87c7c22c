// ONNX → Graph IR. Parses with libonnx's protobuf classes, runs the ONNX checker and shape
// inference where libonnx knows the opset (≤ 17), applies user-fixed input shapes, infers
// every type with the ops' own inference, folds constant subgraphs with the reference
// kernels, and refuses what collage cannot run with one error listing every problem.
#pragma once

#include <map>
#include <string>

#include "collage/status.h"
#include "collage/sdk/graph.h"

namespace onnx {
class ModelProto;
}

namespace collage {

struct ImportOptions {
  // Fixes the dynamic dims of graph inputs: name → full shape. A shape that contradicts a
  // static dim is refused.
  std::map<std::string, Shape> input_shapes;
  // Where an input_shapes entry came from, as errors name it ("--input x=x.npy"); an entry
  // without one is named "--shape NAME=DIMS".
  std::map<std::string, std::string> input_shape_origins;
  // Evaluate nodes whose inputs are all constant at import time.
  bool fold_constants = true;
};

// Reads and imports a model file. Errors name the file.
StatusOr<Graph> ImportOnnxFile(const std::string& path, const ImportOptions& options = {});
// Imports serialized ModelProto bytes; `source_name` is used in error messages.
StatusOr<Graph> ImportOnnxBytes(const std::string& bytes, const ImportOptions& options = {},
                                const std::string& source_name = "<memory>");
// Imports a parsed model. `base_dir` resolves external tensor data ("" = current dir).
StatusOr<Graph> ImportOnnxModel(const onnx::ModelProto& model, const ImportOptions& options = {},
                                const std::string& source_name = "<memory>",
                                const std::string& base_dir = "");

}  // namespace collage
