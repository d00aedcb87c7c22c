// Seeded random tensors for demos, benchmarks and tests: floats ~ N(0, 1), integers in
// [0, 16) (small, so that index inputs such as token ids stay valid for most tables),
// bools 50/50.
#pragma once

#include <random>

#include "collage/tensor.h"

namespace collage {

Tensor RandomTensor(DType dtype, const Shape& shape, std::mt19937& rng);

}  // namespace collage
