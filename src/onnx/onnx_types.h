// ONNX element types and type protos ↔ collage DTypes and TensorTypes, with the size checks
// every shape read from a model needs before anything is allocated for it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "collage/status.h"
#include "collage/tensor.h"
#include "collage/sdk/graph.h"

namespace onnx {
class TypeProto;
class TensorShapeProto;
}  // namespace onnx

namespace collage {

// ONNX spelling of an element type for messages ("complex64", "float8e4m3fn", "type 99").
std::string OnnxElemTypeName(int32_t elem_type);

// The DType of an ONNX element type. kUnsupported for types collage has no DType for
// (string, complex, float8, int4), kInvalidModel for undefined or unknown numbers. The
// message names only the type: callers say which tensor it belongs to.
StatusOr<DType> DTypeFromOnnx(int32_t elem_type);

// Number of elements of `shape`, or nullopt when a dim is negative or the byte size of the
// tensor would not fit in int64 (shapes in a model are untrusted input).
std::optional<int64_t> CheckedNumElements(const Shape& shape);
// Bytes of a tensor of `type`, or nullopt as above.
std::optional<int64_t> CheckedNumBytes(const TensorType& type);

// "batch x 3 x 224 x 224" ("?" for a dim with neither value nor name); "scalar" for rank 0.
std::string OnnxShapeToString(const onnx::TensorShapeProto& shape);

// Writes a tensor TypeProto (elem type and dims; a dim < 0 is left without value).
void FillTypeProto(const TensorType& type, onnx::TypeProto& proto);

}  // namespace collage
