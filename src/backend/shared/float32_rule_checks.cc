#include "backend/shared/float32_rule_checks.h"

#include <algorithm>

namespace collage {

bool IsStaticFloat32(const TensorType& type) {
  return type.dtype == DType::kFloat32 && type.is_static();
}

bool AllStaticFloat32(const Match& match) {
  for (size_t i = 0; i < match.captures.size(); ++i) {
    if (match.has_capture(i) && !IsStaticFloat32(match.capture_type(i))) return false;
  }
  return IsStaticFloat32(match.output_type());
}

bool BroadcastsAsOpset7(const Match& match) { return match.graph->opset() >= 7; }

bool IsRowBias(const TensorType& bias, const Shape& out) {
  if (bias.shape.size() > out.size()) return false;
  const int64_t n = out.empty() ? 1 : out.back();
  const int64_t count = bias.num_elements();
  if (count == 1) return true;
  if (count != n || bias.shape.empty() || bias.shape.back() != n) return false;
  return std::all_of(bias.shape.begin(), bias.shape.end() - 1, [](int64_t d) { return d == 1; });
}

}  // namespace collage
