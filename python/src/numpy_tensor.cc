#include "numpy_tensor.h"

#include <vector>

#include "status_error.h"
#include "collage/sdk/errors.h"

namespace nb = nanobind;

namespace collage::python {

namespace {

using nb::dlpack::dtype_code;

DType FromDlpack(nb::dlpack::dtype dtype) {
  if (dtype.lanes != 1) return DType::kUndefined;
  const auto code = static_cast<dtype_code>(dtype.code);
  switch (dtype.bits) {
    case 8:
      if (code == dtype_code::Int) return DType::kInt8;
      if (code == dtype_code::UInt) return DType::kUInt8;
      if (code == dtype_code::Bool) return DType::kBool;
      break;
    case 16:
      if (code == dtype_code::Int) return DType::kInt16;
      if (code == dtype_code::UInt) return DType::kUInt16;
      if (code == dtype_code::Float) return DType::kFloat16;
      if (code == dtype_code::Bfloat) return DType::kBFloat16;
      break;
    case 32:
      if (code == dtype_code::Int) return DType::kInt32;
      if (code == dtype_code::UInt) return DType::kUInt32;
      if (code == dtype_code::Float) return DType::kFloat32;
      break;
    case 64:
      if (code == dtype_code::Int) return DType::kInt64;
      if (code == dtype_code::UInt) return DType::kUInt64;
      if (code == dtype_code::Float) return DType::kFloat64;
      break;
    default:
      break;
  }
  return DType::kUndefined;
}

// false for a type numpy has no dtype for (bfloat16) or collage none at all.
bool ToDlpack(DType dtype, nb::dlpack::dtype* out) {
  auto make = [out](dtype_code code, int bits) {
    *out = nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
    return true;
  };
  switch (dtype) {
    case DType::kFloat32: return make(dtype_code::Float, 32);
    case DType::kFloat64: return make(dtype_code::Float, 64);
    case DType::kFloat16: return make(dtype_code::Float, 16);
    case DType::kInt8: return make(dtype_code::Int, 8);
    case DType::kInt16: return make(dtype_code::Int, 16);
    case DType::kInt32: return make(dtype_code::Int, 32);
    case DType::kInt64: return make(dtype_code::Int, 64);
    case DType::kUInt8: return make(dtype_code::UInt, 8);
    case DType::kUInt16: return make(dtype_code::UInt, 16);
    case DType::kUInt32: return make(dtype_code::UInt, 32);
    case DType::kUInt64: return make(dtype_code::UInt, 64);
    case DType::kBool: return make(dtype_code::Bool, 8);
    default: return false;
  }
}

}  // namespace

Tensor BorrowArray(const std::string& input_name, const InputArray& array) {
  const DType dtype = FromDlpack(array.dtype());
  if (dtype == DType::kUndefined) {
    throw StatusError(InvalidArgument(
        "input '{}': its element type (DLPack code {}, {} bits) has no collage dtype", input_name,
        array.dtype().code, array.dtype().bits));
  }
  Shape shape(array.ndim());
  for (size_t d = 0; d < array.ndim(); ++d) shape[d] = array.shape(d);
  // Session::Run only reads its inputs (it copies them into the run's arena): the const_cast
  // lets a read-only array be viewed too.
  return Tensor::View(dtype, std::move(shape), const_cast<void*>(array.data()));
}

nb::object TensorToNumpy(const std::string& output_name, Tensor tensor) {
  nb::dlpack::dtype dtype;
  if (!ToDlpack(tensor.dtype(), &dtype)) {
    throw StatusError(Unsupported("output '{}' is {}, which numpy has no dtype for", output_name,
                                  DTypeName(tensor.dtype())));
  }
  std::vector<size_t> shape(tensor.shape().begin(), tensor.shape().end());
  // The capsule holds a handle to the tensor's buffer (Tensor copies share it), so the array
  // reads collage's memory directly and frees it when numpy drops the array.
  void* data = tensor.data();
  auto* handle = new Tensor(std::move(tensor));
  nb::capsule owner(handle, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  return nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner, nullptr, dtype).cast();
}

}  // namespace collage::python
