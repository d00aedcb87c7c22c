#include "collage/normalized_error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace collage {

namespace {

struct Difference {
  double max_diff = 0;  // infinite when the tensors cannot be compared element by element
  double max_ref = 0;
};

// max|actual - reference| and max|reference|, with NormalizedError's NaN and infinity rules.
Difference Differ(const Tensor& actual, const Tensor& reference, std::string* problem) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (actual.dtype() != reference.dtype() || actual.shape() != reference.shape()) {
    if (problem != nullptr) {
      *problem = fmt::format("output is {}[{}], expected {}[{}]", DTypeName(actual.dtype()),
                             ShapeToString(actual.shape()), DTypeName(reference.dtype()),
                             ShapeToString(reference.shape()));
    }
    return {kInf, 0};
  }
  const std::vector<double> a = actual.ToVector<double>();
  const std::vector<double> b = reference.ToVector<double>();
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool nan_a = std::isnan(a[i]), nan_b = std::isnan(b[i]);
    const bool inf_a = std::isinf(a[i]), inf_b = std::isinf(b[i]);
    if (nan_a || nan_b || inf_a || inf_b) {
      // Equal NaNs (or equal infinities) agree; any other mix has no finite error.
      if ((nan_a && nan_b) || (!nan_a && !nan_b && a[i] == b[i])) continue;
      if (problem != nullptr) {
        *problem = fmt::format("element {} is {}, expected {}", i, a[i], b[i]);
      }
      return {kInf, 0};
    }
    max_diff = std::max(max_diff, std::fabs(a[i] - b[i]));
    max_ref = std::max(max_ref, std::fabs(b[i]));
  }
  return {max_diff, max_ref};
}

// max|actual - reference| / max(scale_floor, max|reference|).
double ErrorOverScale(const Tensor& actual, const Tensor& reference, double scale_floor,
                      std::string* problem) {
  const Difference d = Differ(actual, reference, problem);
  return d.max_diff / std::max(scale_floor, d.max_ref);
}

}  // namespace

double NormalizedError(const Tensor& actual, const Tensor& reference, std::string* problem) {
  return ErrorOverScale(actual, reference, 1.0, problem);
}

double MagnitudeRelativeError(const Tensor& actual, const Tensor& reference, std::string* problem) {
  return ErrorOverScale(actual, reference, kMagnitudeFloor, problem);
}

bool WithinQuantizationTolerance(const Tensor& actual, const Tensor& reference, double tolerance) {
  if (!(tolerance > 0)) return false;
  // The steps' own float rounding: a dequantized value is q * scale, computed in float.
  return Differ(actual, reference, nullptr).max_diff <= tolerance * (1 + 1e-5);
}

}  // namespace collage
