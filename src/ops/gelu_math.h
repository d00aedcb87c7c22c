// The GELU formulas, shared by ONNX's Gelu (opset 20, unary.cc) and the com.microsoft GELUs
// ONNX Runtime's transformer optimizer fuses (gelu_contrib.cc):
//   exact    0.5 x (1 + erf(x / sqrt 2))
//   tanh     0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
#pragma once

#include <cmath>
#include <numbers>

namespace collage {

template <typename T>
T GeluExact(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * static_cast<T>(std::numbers::sqrt2 / 2)));
}

template <typename T>
T GeluTanh(T x) {
  const T k = static_cast<T>(std::sqrt(2.0 / std::numbers::pi));
  return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
}

}  // namespace collage
