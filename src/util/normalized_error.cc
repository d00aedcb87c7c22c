#include "collage/normalized_error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace collage {

namespace {

// max|actual - reference| / max(scale_floor, max|reference|), with NormalizedError's NaN and
// infinity rules.
double ErrorOverScale(const Tensor& actual, const Tensor& reference, double scale_floor,
                      std::string* problem) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (actual.dtype() != reference.dtype() || actual.shape() != reference.shape()) {
    if (problem != nullptr) {
      *problem = fmt::format("output is {}[{}], expected {}[{}]", DTypeName(actual.dtype()),
                             ShapeToString(actual.shape()), DTypeName(reference.dtype()),
                             ShapeToString(reference.shape()));
    }
    return kInf;
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
      return kInf;
    }
    max_diff = std::max(max_diff, std::fabs(a[i] - b[i]));
    max_ref = std::max(max_ref, std::fabs(b[i]));
  }
  return max_diff / std::max(scale_floor, max_ref);
}

}  // namespace

double NormalizedError(const Tensor& actual, const Tensor& reference, std::string* problem) {
  return ErrorOverScale(actual, reference, 1.0, problem);
}

double MagnitudeRelativeError(const Tensor& actual, const Tensor& reference, std::string* problem) {
  return ErrorOverScale(actual, reference, kMagnitudeFloor, problem);
}

}  // namespace collage
