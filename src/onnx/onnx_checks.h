// libonnx's own validation: the ONNX checker and ONNX shape inference. libonnx 1.12 knows
// opsets up to 17; newer models skip both and rely on collage's own checks and type
// inference.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "collage/status.h"
#include "collage/tensor.h"
#include "collage/sdk/graph.h"

namespace onnx {
class ModelProto;
class NodeProto;
}

namespace collage {

// Whether libonnx can judge a model of this default-domain opset.
bool OnnxCheckerKnows(int64_t opset);

// Refuses a model holding sparse tensor data anywhere (sparse initializers, attributes of any
// node, in subgraphs and functions too): collage does not run sparse data, and libonnx's
// checker reads a sparse tensor's values past their end when its dims claim more than it has.
Status RefuseSparseTensors(const onnx::ModelProto& model);

// onnx::checker on the whole model; external data is looked up under `base_dir`.
// kInvalidModel with the checker's message on failure.
Status RunOnnxChecker(const onnx::ModelProto& model, const std::string& base_dir);

// Whether default-domain op `op_type` has the same definition (schema version) at opset
// `from` as at opset `to`, by libonnx's schemas; false when either does not define it.
bool OnnxOpUnchanged(const std::string& op_type, int64_t from, int64_t to);

// For models the checker cannot check (opset > 17): refuses an attribute whose type differs
// from the one in the newest schema libonnx knows (a FLOAT `axis` would otherwise be read as
// absent and silently replaced by its default). Attributes the schema does not know pass.
Status CheckAttributeTypes(const onnx::NodeProto& node, const std::string& where);

// Types ONNX shape inference derives, by value name; only fully static ones are kept.
using OnnxInferredTypes = std::unordered_map<std::string, TensorType>;

// ONNX shape inference (lenient mode: per-node failures are not errors) on a light copy of
// the model: weights without data, value_info and declared output shapes dropped,
// `input_shapes` applied, so that stale exporter annotations or user-fixed shapes do not
// cause spurious conflicts. collage's own inference decides every type; these serve as an
// independent cross-check of it. kInvalidModel if libonnx throws anyway.
Status RunOnnxShapeInference(const onnx::ModelProto& model,
                             const std::map<std::string, Shape>& input_shapes,
                             OnnxInferredTypes& types);

}  // namespace collage
