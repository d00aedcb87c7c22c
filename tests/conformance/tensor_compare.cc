#include "tensor_compare.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace collage::conformance {
namespace {

// IEEE half → float, exact (every half is a float).
float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1F;
  const uint32_t mantissa = h & 0x3FF;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal
  } else if (exponent == 31) {
    magnitude = mantissa ? std::nanf("") : INFINITY;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), static_cast<int>(exponent) - 25);
  }
  float out = magnitude;
  if (sign) out = -out;
  return out;
}

float BFloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Every element as double (exact for all four float types).
std::vector<double> FloatsAsDouble(const Tensor& t) {
  const size_t n = static_cast<size_t>(t.num_elements());
  std::vector<double> out(n);
  switch (t.dtype()) {
    case DType::kFloat32:
      for (size_t i = 0; i < n; ++i) out[i] = t.data_as<float>()[i];
      break;
    case DType::kFloat64:
      for (size_t i = 0; i < n; ++i) out[i] = t.data_as<double>()[i];
      break;
    case DType::kFloat16:
      for (size_t i = 0; i < n; ++i) out[i] = HalfToFloat(t.data_as<uint16_t>()[i]);
      break;
    case DType::kBFloat16:
      for (size_t i = 0; i < n; ++i) out[i] = BFloat16ToFloat(t.data_as<uint16_t>()[i]);
      break;
    default:
      break;
  }
  return out;
}

// "[1, 0, 2]" for the flat index `flat` of `shape`.
std::string IndexString(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

// One element of an integer or bool tensor, printed by value.
std::string IntegerElementString(const Tensor& t, int64_t i) {
  const void* p = static_cast<const char*>(t.data()) + static_cast<size_t>(i) * DTypeSize(t.dtype());
  switch (t.dtype()) {
    case DType::kInt8: return std::to_string(*static_cast<const int8_t*>(p));
    case DType::kInt16: return std::to_string(*static_cast<const int16_t*>(p));
    case DType::kInt32: return std::to_string(*static_cast<const int32_t*>(p));
    case DType::kInt64: return std::to_string(*static_cast<const int64_t*>(p));
    case DType::kUInt8: return std::to_string(*static_cast<const uint8_t*>(p));
    case DType::kUInt16: return std::to_string(*static_cast<const uint16_t*>(p));
    case DType::kUInt32: return std::to_string(*static_cast<const uint32_t*>(p));
    case DType::kUInt64: return std::to_string(*static_cast<const uint64_t*>(p));
    case DType::kBool: {
      const uint8_t b = *static_cast<const uint8_t*>(p);
      return b == 0 ? "false" : b == 1 ? "true" : fmt::format("invalid bool byte {}", b);
    }
    default: return "?";
  }
}

CompareResult CompareFloats(const Tensor& actual, const Tensor& expected, const Tolerance& tol) {
  const std::vector<double> a = FloatsAsDouble(actual);
  const std::vector<double> e = FloatsAsDouble(expected);
  double max_abs_expected = 0;
  for (double v : e) {
    if (std::isfinite(v)) max_abs_expected = std::max(max_abs_expected, std::fabs(v));
  }
  int64_t mismatches = 0, first = -1, worst = -1;
  double worst_excess = -1;  // diff / allowed, to point at the worst element too
  for (size_t i = 0; i < e.size(); ++i) {
    bool ok;
    double allowed = tol.atol + tol.rtol * (tol.rel_to_max ? max_abs_expected : std::fabs(e[i]));
    if (std::isnan(e[i])) {
      ok = std::isnan(a[i]);
    } else if (a[i] == e[i]) {
      ok = true;
    } else if (std::isinf(e[i]) || std::isinf(a[i])) {
      ok = false;  // an infinity matches only itself (inf - x <= atol + rtol * inf otherwise)
    } else {
      // Also false when a[i] is NaN.
      ok = std::fabs(a[i] - e[i]) <= allowed;
    }
    if (ok) continue;
    ++mismatches;
    if (first < 0) first = static_cast<int64_t>(i);
    const double excess = std::isnan(a[i]) || std::isinf(a[i]) || std::isinf(e[i])
                              ? INFINITY
                              : std::fabs(a[i] - e[i]) / std::max(allowed, 1e-300);
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = static_cast<int64_t>(i);
    }
  }
  if (mismatches == 0) return {};
  auto describe = [&](int64_t i) {
    const size_t k = static_cast<size_t>(i);
    const double allowed =
        tol.atol + tol.rtol * (tol.rel_to_max ? max_abs_expected : std::fabs(e[k]));
    return fmt::format("element {} (flat {}): got {:.9g}, expected {:.9g} (|diff| {:.3g} > "
                       "allowed {:.3g})",
                       IndexString(expected.shape(), i), i, a[k], e[k], std::fabs(a[k] - e[k]),
                       allowed);
  };
  std::string message = "first mismatch at " + describe(first);
  message += fmt::format("; {} of {} elements differ", mismatches, e.size());
  if (worst != first) message += "; worst at " + describe(worst);
  if (tol.rel_to_max) message += fmt::format("; max |expected| {:.6g}", max_abs_expected);
  return {false, message};
}

// Integers and bools: bit-identical, or (int_steps > 0) within int_steps of each other.
CompareResult CompareIntegers(const Tensor& actual, const Tensor& expected, int64_t int_steps) {
  const size_t width = DTypeSize(expected.dtype());
  const char* a = static_cast<const char*>(actual.data());
  const char* e = static_cast<const char*>(expected.data());
  std::vector<int64_t> av, ev;
  if (int_steps > 0) {
    av = actual.ToVector<int64_t>();
    ev = expected.ToVector<int64_t>();
  }
  int64_t mismatches = 0, first = -1;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const bool differs =
        int_steps > 0
            ? std::llabs(av[static_cast<size_t>(i)] - ev[static_cast<size_t>(i)]) > int_steps
            : std::memcmp(a + i * width, e + i * width, width) != 0;
    if (differs) {
      ++mismatches;
      if (first < 0) first = i;
    }
  }
  if (mismatches == 0) return {};
  return {false, fmt::format("first mismatch at element {} (flat {}): got {}, expected {}; {} of "
                             "{} elements differ",
                             IndexString(expected.shape(), first), first,
                             IntegerElementString(actual, first),
                             IntegerElementString(expected, first), mismatches,
                             expected.num_elements())};
}

}  // namespace

bool IsFloating(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

CompareResult CompareTensors(const Tensor& actual, const Tensor& expected,
                             const Tolerance& tolerance) {
  if (actual.empty()) return {false, "no tensor was produced"};
  if (actual.dtype() != expected.dtype()) {
    return {false, fmt::format("dtype {} but expected {}", DTypeName(actual.dtype()),
                               DTypeName(expected.dtype()))};
  }
  if (actual.shape() != expected.shape()) {
    return {false, fmt::format("shape {} but expected {}", ShapeToString(actual.shape()),
                               ShapeToString(expected.shape()))};
  }
  if (DTypeSize(expected.dtype()) == 0) {
    return {false, fmt::format("cannot compare {} tensors", DTypeName(expected.dtype()))};
  }
  if (IsFloating(expected.dtype())) return CompareFloats(actual, expected, tolerance);
  return CompareIntegers(actual, expected, tolerance.int_steps);
}

}  // namespace collage::conformance
