// The one measure by which outputs are compared with the reference kernels (tests, the
// differential harness, `collage run --check`): an error relative to the output's scale, so
// that large-magnitude outputs and near-zero elements are judged alike.
#pragma once

#include <string>

#include "collage/tensor.h"

namespace collage {

// max|actual - reference| / max(1, max|reference|), over the elements compared as doubles.
// - A dtype or shape mismatch is infinite error.
// - NaN: NaN in both at the same place counts as equal; NaN in one only is infinite error.
// - Infinities: equal infinities (same sign, same place) count as equal; an infinity in one
//   only, or of the other sign, is infinite error. Equal infinities do not enter the scale.
// When the error is infinite and `problem` is not null, it says why (the first mismatch).
double NormalizedError(const Tensor& actual, const Tensor& reference,
                       std::string* problem = nullptr);

}  // namespace collage
