#include "collage/random_tensor.h"

namespace collage {

namespace {
template <typename T>
void FillInts(Tensor& t, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(0, 15);
  T* p = t.data_as<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<T>(dist(rng));
}
}  // namespace

Tensor RandomTensor(DType dtype, const Shape& shape, std::mt19937& rng) {
  Tensor t(dtype, shape);
  const int64_t n = t.num_elements();
  std::normal_distribution<float> normal(0.f, 1.f);
  switch (dtype) {
    case DType::kFloat32:
      for (int64_t i = 0; i < n; ++i) t.data_as<float>()[i] = normal(rng);
      break;
    case DType::kFloat64:
      for (int64_t i = 0; i < n; ++i) t.data_as<double>()[i] = normal(rng);
      break;
    case DType::kBool:
      for (int64_t i = 0; i < n; ++i) t.data_as<bool>()[i] = (rng() & 1) != 0;
      break;
    case DType::kInt64: FillInts<int64_t>(t, rng); break;
    case DType::kInt32: FillInts<int32_t>(t, rng); break;
    case DType::kInt16: FillInts<int16_t>(t, rng); break;
    case DType::kInt8: FillInts<int8_t>(t, rng); break;
    case DType::kUInt8: FillInts<uint8_t>(t, rng); break;
    case DType::kUInt16: FillInts<uint16_t>(t, rng); break;
    case DType::kUInt32: FillInts<uint32_t>(t, rng); break;
    case DType::kUInt64: FillInts<uint64_t>(t, rng); break;
    default: break;  // left zero: no kernel takes these dtypes
  }
  return t;
}

}  // namespace collage
