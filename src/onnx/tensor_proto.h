// Tensor ↔ onnx::TensorProto, and .pb files holding one TensorProto (the format of the ONNX
// conformance test data and of `collage run --input x=FILE.pb`).
#pragma once

#include <string>

#include "collage/status.h"
#include "collage/tensor.h"

namespace onnx {
class NodeProto;
class TensorProto;
}  // namespace onnx

namespace collage {

// Converts raw_data or the typed fields; external data is read relative to `base_dir`.
StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir = "");
void TensorToProto(const Tensor& tensor, const std::string& name, onnx::TensorProto& proto);

// The value a Constant node holds in its one attribute (value, value_float(s), value_int(s));
// string and sparse constants are Unsupported. `where` names the node in messages
// ("Constant node 'c1'"); the node's outputs are the caller's to check.
StatusOr<Tensor> ConstantNodeValue(const onnx::NodeProto& node, const std::string& where,
                                   const std::string& base_dir);

// Reads a file holding one serialized TensorProto; `name` (if non-null) receives its name.
StatusOr<Tensor> ReadTensorProtoFile(const std::string& path, std::string* name = nullptr);
Status WriteTensorProtoFile(const Tensor& tensor, const std::string& name, const std::string& path);

}  // namespace collage
