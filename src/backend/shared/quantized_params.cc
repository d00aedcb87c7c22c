#include "backend/shared/quantized_params.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace collage {

bool IsEightBit(DType dtype) { return dtype == DType::kUInt8 || dtype == DType::kInt8; }

std::optional<float> SingleValue(const Graph& graph, ValueId value) {
  if (value == kNoValue) return std::nullopt;
  const Value& v = graph.value(value);
  if (!v.is_constant() || v.type.num_elements() != 1) return std::nullopt;
  return v.constant->ToVector<float>()[0];
}

bool AllZero(const Graph& graph, ValueId value) {
  if (value == kNoValue) return true;
  const Value& v = graph.value(value);
  if (!v.is_constant()) return false;
  const std::vector<float> z = v.constant->ToVector<float>();
  return std::all_of(z.begin(), z.end(), [](float x) { return x == 0; });
}

bool ReadTensorParams(const Graph& graph, const Node& node, float* scale, int32_t* zero_point) {
  const std::optional<float> s = SingleValue(graph, node.inputs[1]);
  if (!s.has_value() || !(*s > 0) || !std::isfinite(*s)) return false;
  const ValueId zp = node.inputs.size() > 2 ? node.inputs[2] : kNoValue;
  const std::optional<float> z =
      zp == kNoValue ? std::optional<float>(0.0f) : SingleValue(graph, zp);
  if (!z.has_value()) return false;
  *scale = *s;
  *zero_point = static_cast<int32_t>(*z);
  return true;
}

bool FitsSevenBits(const Tensor& int8_weights) {
  const int8_t* w = int8_weights.data_as<int8_t>();
  return std::all_of(w, w + int8_weights.num_elements(),
                     [](int8_t v) { return v >= -64 && v <= 64; });
}

Pattern DequantizedConstant() {
  return Op("DequantizeLinear")(Const(), Const(), Optional(Const()));
}

}  // namespace collage
