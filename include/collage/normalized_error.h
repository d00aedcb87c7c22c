// How outputs are compared with the reference kernels: NormalizedError (tests, the
// differential harness), an error relative to the output's scale with a floor of 1, so that
// large-magnitude outputs and near-zero elements are judged alike; MagnitudeRelativeError
// (`collage run --check`), relative to the output's own magnitude however small.
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

// The scale below which MagnitudeRelativeError stops shrinking: an output whose every element
// is smaller than this in magnitude (all zeros, say) is judged by its absolute error over it.
inline constexpr double kMagnitudeFloor = 1e-12;

// max|actual - reference| / max(kMagnitudeFloor, max|reference|): relative to the output's own
// magnitude, however small, so that an output of magnitude 1e-9 must be right to its own
// digits (NormalizedError's floor of 1 would pass it whatever it is). `collage run --check`
// uses it. NaN and infinities as NormalizedError.
double MagnitudeRelativeError(const Tensor& actual, const Tensor& reference,
                              std::string* problem = nullptr);

// Whether every element of `actual` is within `tolerance` of `reference` (false for a
// tolerance <= 0, a dtype or shape mismatch, or NaN or an infinity in one only): how a value
// of a quantized model is judged, which two correct computations may round a step or two
// apart (TensorInfo::quantization_tolerance). Checks accept an output when either this or
// their relative error holds.
bool WithinQuantizationTolerance(const Tensor& actual, const Tensor& reference, double tolerance);

}  // namespace collage
