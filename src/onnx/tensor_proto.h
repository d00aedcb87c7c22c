// Tensor ↔ onnx::TensorProto, and .pb files holding one TensorProto (the format of the ONNX
// conformance test data and of `collage run --input x=FILE.pb`).
#pragma once

#include <string>

#include "collage/status.h"
#include "collage/tensor.h"

namespace onnx {
class TensorProto;
}

namespace collage {

// Converts raw_data or the typed fields; external data is read relative to `base_dir`.
StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir = "");
void TensorToProto(const Tensor& tensor, const std::string& name, onnx::TensorProto& proto);

// Reads a file holding one serialized TensorProto; `name` (if non-null) receives its name.
StatusOr<Tensor> ReadTensorProtoFile(const std::string& path, std::string* name = nullptr);
Status WriteTensorProtoFile(const Tensor& tensor, const std::string& name, const std::string& path);

}  // namespace collage
