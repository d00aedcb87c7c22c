// Compares a computed tensor with the expected one, the way the conformance runner judges.
//
// dtype and shape must match exactly. Integers and bools must be bit-identical (integers:
// or within int_steps of each other, for quantized outputs). Floating
// point (float16, bfloat16, float32, float64) element i passes when
//   |actual_i - expected_i| <= atol + rtol * scale_i
// where scale_i is |expected_i| (the ONNX backend tests' rule, numpy.testing.assert_allclose)
// or, with rel_to_max, max_j |expected_j| over the whole output: "within rtol relative
// error of the output's magnitude", the bar for whole models, whose outputs hold values near
// zero that accumulate rounding from thousands of operations. NaN matches only NaN; an
// infinity only the same infinity.
#pragma once

#include <string>

#include "collage/tensor.h"

namespace collage::conformance {

// float32, float64, float16 or bfloat16.
bool IsFloating(DType dtype);

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
  bool rel_to_max = false;
  int64_t int_steps = 0;
};

struct CompareResult {
  bool ok = true;
  // Empty when ok; otherwise the first mismatching element and a summary of all of them.
  std::string message;
};

CompareResult CompareTensors(const Tensor& actual, const Tensor& expected,
                             const Tolerance& tolerance);

}  // namespace collage::conformance
