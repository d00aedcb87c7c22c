// Tensor: a typed, shaped, dense row-major buffer. Copies share the buffer (a handle, like a
// shared_ptr); Clone() copies the data. A Tensor either owns its buffer or views memory it
// does not own (Tensor::View), which is how kernels see arena memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace collage {

// Element types. The numbering is ONNX's TensorProto.DataType, so conversion is a cast.
enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
};

// Bytes per element; 0 for kUndefined and kString (strings are not supported as tensors).
size_t DTypeSize(DType dtype);
// "float32", "int64", ...
const char* DTypeName(DType dtype);

// C++ type → DType, for the types kernels are written for.
template <typename T> constexpr DType DTypeOf();
template <> constexpr DType DTypeOf<float>() { return DType::kFloat32; }
template <> constexpr DType DTypeOf<double>() { return DType::kFloat64; }
template <> constexpr DType DTypeOf<int64_t>() { return DType::kInt64; }
template <> constexpr DType DTypeOf<int32_t>() { return DType::kInt32; }
template <> constexpr DType DTypeOf<int16_t>() { return DType::kInt16; }
template <> constexpr DType DTypeOf<int8_t>() { return DType::kInt8; }
template <> constexpr DType DTypeOf<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType DTypeOf<uint16_t>() { return DType::kUInt16; }
template <> constexpr DType DTypeOf<uint32_t>() { return DType::kUInt32; }
template <> constexpr DType DTypeOf<uint64_t>() { return DType::kUInt64; }
template <> constexpr DType DTypeOf<bool>() { return DType::kBool; }

using Shape = std::vector<int64_t>;

// Product of the dims (1 for a scalar, 0 if any dim is 0). Dims must be non-negative.
int64_t NumElements(const Shape& shape);
// "1x3x224x224"; "scalar" for rank 0; dynamic dims (< 0) print as "?".
std::string ShapeToString(const Shape& shape);

class Tensor {
 public:
  // An empty handle: no dtype, no data. Stands for a missing optional input.
  Tensor() = default;
  // Owns a new zero-filled, 64-byte aligned buffer.
  Tensor(DType dtype, Shape shape);
  // Views `data` (not owned; must outlive every copy of this handle).
  static Tensor View(DType dtype, Shape shape, void* data);
  // Owns a copy of `values`.
  template <typename T>
  static Tensor FromVector(Shape shape, const std::vector<T>& values);
  template <typename T>
  static Tensor Scalar(T value) { return FromVector<T>({}, std::vector<T>{value}); }

  bool empty() const { return dtype_ == DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t num_elements() const { return NumElements(shape_); }
  size_t nbytes() const { return static_cast<size_t>(num_elements()) * DTypeSize(dtype_); }

  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T> T* data_as() { return static_cast<T*>(data_); }
  template <typename T> const T* data_as() const { return static_cast<const T*>(data_); }

  // Copies the elements into a vector (any supported dtype converts to T).
  template <typename T> std::vector<T> ToVector() const;

  // A deep copy that owns its buffer.
  Tensor Clone() const;
  // Same buffer, other shape; the element count must match.
  Tensor Reshaped(Shape shape) const;

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::shared_ptr<void> storage_;  // null for views
  void* data_ = nullptr;
};

template <typename T>
Tensor Tensor::FromVector(Shape shape, const std::vector<T>& values) {
  Tensor t(DTypeOf<T>(), std::move(shape));
  T* out = t.data_as<T>();
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.num_elements(); ++i) {
    out[i] = values[i];
  }
  return t;
}

namespace detail {
template <typename T, typename S>
void ConvertElements(const void* src, int64_t n, T* dst) {
  const S* s = static_cast<const S*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(s[i]);
}
}  // namespace detail

template <typename T>
std::vector<T> Tensor::ToVector() const {
  const int64_t n = empty() ? 0 : num_elements();
  std::vector<T> out(static_cast<size_t>(n));
  switch (dtype_) {
    case DType::kFloat32: detail::ConvertElements<T, float>(data_, n, out.data()); break;
    case DType::kFloat64: detail::ConvertElements<T, double>(data_, n, out.data()); break;
    case DType::kInt64: detail::ConvertElements<T, int64_t>(data_, n, out.data()); break;
    case DType::kInt32: detail::ConvertElements<T, int32_t>(data_, n, out.data()); break;
    case DType::kInt16: detail::ConvertElements<T, int16_t>(data_, n, out.data()); break;
    case DType::kInt8: detail::ConvertElements<T, int8_t>(data_, n, out.data()); break;
    case DType::kUInt8: detail::ConvertElements<T, uint8_t>(data_, n, out.data()); break;
    case DType::kUInt16: detail::ConvertElements<T, uint16_t>(data_, n, out.data()); break;
    case DType::kUInt32: detail::ConvertElements<T, uint32_t>(data_, n, out.data()); break;
    case DType::kUInt64: detail::ConvertElements<T, uint64_t>(data_, n, out.data()); break;
    case DType::kBool: detail::ConvertElements<T, bool>(data_, n, out.data()); break;
    default: out.clear(); break;
  }
  return out;
}

}  // namespace collage
