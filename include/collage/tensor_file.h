// Tensors in files, chosen by extension: ".npy" (NumPy) or ".pb" (one ONNX TensorProto).
#pragma once

#include <string>

#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

StatusOr<Tensor> ReadTensorFile(const std::string& path);
// Writes `<path_without_extension>.npy` and `.pb` both; `name` goes into the TensorProto.
Status WriteTensorFiles(const Tensor& tensor, const std::string& name, const std::string& path_stem);

}  // namespace collage
