#include "onnx/onnx_types.h"

#include <limits>

#include "onnx/onnx_pb.h"
#include "collage/sdk/errors.h"

namespace collage {

std::string OnnxElemTypeName(int32_t elem_type) {
  switch (elem_type) {
    case 0: return "undefined";
    case 1: return "float32";
    case 2: return "uint8";
    case 3: return "int8";
    case 4: return "uint16";
    case 5: return "int16";
    case 6: return "int32";
    case 7: return "int64";
    case 8: return "string";
    case 9: return "bool";
    case 10: return "float16";
    case 11: return "float64";
    case 12: return "uint32";
    case 13: return "uint64";
    case 14: return "complex64";
    case 15: return "complex128";
    case 16: return "bfloat16";
    // Newer than libonnx 1.12, but the field is a plain int32 so models may carry them.
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    default: return "type " + std::to_string(elem_type);
  }
}

StatusOr<DType> DTypeFromOnnx(int32_t elem_type) {
  constexpr int32_t kNewestOnnxType = 22;  // int4
  if (elem_type == 0) return InvalidModel("element type is undefined");
  if (elem_type < 0 || elem_type > kNewestOnnxType) {
    return InvalidModel("element type {} is not an ONNX data type", elem_type);
  }
  // DType shares ONNX's numbering and has a size for exactly the types collage can hold
  // (the enum has a fixed underlying type, so any number converts).
  const DType dtype = static_cast<DType>(elem_type);
  if (DTypeSize(dtype) == 0) {
    return Unsupported("element type {} is not supported", OnnxElemTypeName(elem_type));
  }
  return dtype;
}

std::optional<int64_t> CheckedNumElements(const Shape& shape) {
  // 2^56 elements of at most 8 bytes still fit in int64 bytes, with room for rounding.
  constexpr int64_t kMaxElements = int64_t{1} << 56;
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d == 0) {
      zero = true;
      continue;
    }
    if (n > kMaxElements / d) return std::nullopt;
    n *= d;
  }
  return zero ? 0 : n;
}

std::optional<int64_t> CheckedNumBytes(const TensorType& type) {
  std::optional<int64_t> n = CheckedNumElements(type.shape);
  if (!n) return std::nullopt;
  return *n * static_cast<int64_t>(DTypeSize(type.dtype));
}

std::string OnnxShapeToString(const onnx::TensorShapeProto& shape) {
  if (shape.dim_size() == 0) return "scalar";
  std::string s;
  for (int i = 0; i < shape.dim_size(); ++i) {
    if (i) s += " x ";
    const auto& dim = shape.dim(i);
    if (dim.has_dim_value()) {
      s += std::to_string(dim.dim_value());
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      s += dim.dim_param();
    } else {
      s += "?";
    }
  }
  return s;
}

void FillTypeProto(const TensorType& type, onnx::TypeProto& proto) {
  auto* tensor = proto.mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(type.dtype));
  auto* shape = tensor->mutable_shape();
  shape->clear_dim();
  for (int64_t d : type.shape) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

}  // namespace collage
