// Taking a tensor apart along one axis and putting it back together: what Scan does with its
// scan inputs and outputs, and Loop with its scan outputs. Byte copies: any dtype.
#pragma once

#include <cstdint>
#include <vector>

#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

// The slice at `index` of `tensor` along `axis` (in [0, rank)), that axis removed.
Tensor SliceAlong(const Tensor& tensor, int64_t axis, int64_t index);

// The tensors (each of one dtype and shape) stacked along a new axis `axis` of the result (in
// [0, rank + 1)), in order. InvalidArgument, naming `what`, when their dtypes or shapes differ.
StatusOr<Tensor> StackAlong(const std::vector<Tensor>& parts, int64_t axis, const char* what);

}  // namespace collage
