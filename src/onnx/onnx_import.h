// ONNX → Graph IR. Parses with libonnx's protobuf classes, runs the ONNX checker and shape
// inference where libonnx knows the opset (≤ 17), applies user-fixed input shapes, infers
// every type with the ops' own inference, folds constant subgraphs with the reference
// kernels, and refuses what collage cannot run with one error listing every problem.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collage/model_summary.h"
#include "collage/sdk/graph.h"
#include "collage/status.h"
#include "collage/tensor.h"

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
  // Graph inputs bound to these values for this import: they become constants and leave the
  // graph's inputs, so that shapes computed from them are known (a session whose shapes
  // depend on input values imports once per set of values).
  std::map<std::string, Tensor> input_values;
  // Where set, a failed import says here what it would have needed (see ImportNeeds).
  struct ImportNeeds* needs = nullptr;
  // Whether libonnx's checker runs on the model. Off only for a part of a model whose whole
  // was checked when it loaded (a segment of a staged model, src/session/staged_graph.h):
  // such a part declares its outputs without types, which the checker refuses.
  bool run_onnx_checker = true;
  // Where set: the model's initializers as an earlier import of the same parsed model decoded
  // them, reused (and filled) here. A model imported at several input shapes decodes its
  // weights once, and its compiled shapes share them.
  std::map<std::string, Tensor>* decoded_initializers = nullptr;
};

// What a failed import lacked that a run could give it.
struct ImportNeeds {
  // Graph inputs left with dynamic dims (no input_shapes entry fixes them).
  std::vector<std::string> dynamic_inputs;
  // Graph inputs of at most kMaxBindableElements elements whose values flow into the node
  // whose type inference failed (through any nodes but Shape and Size): binding them may let
  // it know its output shape.
  std::vector<std::string> value_inputs;
};
inline constexpr int64_t kMaxBindableElements = 64;

// A model parsed once and imported as often as needed (at other input shapes or values).
struct ParsedModel {
  std::shared_ptr<const onnx::ModelProto> proto;
  std::string source_name;  // for messages
  std::string base_dir;     // resolves external tensor data
};
// The model's own description of itself, from its ModelProto.
ModelMetadata MetadataOf(const onnx::ModelProto& model);
StatusOr<ParsedModel> ParseOnnxFile(const std::string& path);
StatusOr<ParsedModel> ParseOnnxBytes(const std::string& bytes, const std::string& source_name);
StatusOr<Graph> ImportParsed(const ParsedModel& model, const ImportOptions& options);

// A graph input or output as the model declares it: dims < 0 are dynamic; kUndefined where
// the model declares no element type. Initializers listed as inputs are left out.
struct DeclaredTensor {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
};
std::vector<DeclaredTensor> DeclaredInputs(const onnx::ModelProto& model);
std::vector<DeclaredTensor> DeclaredOutputs(const onnx::ModelProto& model);

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
