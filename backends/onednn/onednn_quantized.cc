#include "onednn_quantized.h"

#include <algorithm>
#include <cmath>

namespace collage::onednn {
namespace {

bool HasVnni() {
  using dnnl::cpu_isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case cpu_isa::avx2_vnni:
    case cpu_isa::avx512_core_vnni:
    case cpu_isa::avx512_core_bf16:
    case cpu_isa::avx512_core_amx: return true;
    default: return false;
  }
}

dnnl::memory ZeroPointMemory(int32_t value) {
  dnnl::memory m(dnnl::memory::desc({1}, dnnl::memory::data_type::s32, dnnl::memory::format_tag::x),
                 Engine());
  *static_cast<int32_t*>(m.get_data_handle()) = value;
  return m;
}

}  // namespace

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

Pattern DequantizedConstant() {
  return Op("DequantizeLinear")(Const(), Const(), Optional(Const()));
}

bool IntegerProductExact(DType input, const Tensor& weights) {
  if (HasVnni()) return true;
  if (input != DType::kUInt8 || weights.dtype() != DType::kInt8) return false;
  const int8_t* w = weights.data_as<int8_t>();
  return std::all_of(w, w + weights.num_elements(), [](int8_t v) { return v >= -64 && v <= 64; });
}

void SetZeroPoints(dnnl::primitive_attr& attr, int32_t input_zero_point,
                   int32_t output_zero_point) {
  if (input_zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (output_zero_point != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
}

void BindZeroPoints(KernelBuilder& builder, int32_t input_zero_point, int32_t output_zero_point) {
  if (input_zero_point != 0) {
    builder.BindConstant(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC,
                         ZeroPointMemory(input_zero_point));
  }
  if (output_zero_point != 0) {
    builder.BindConstant(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST,
                         ZeroPointMemory(output_zero_point));
  }
}

}  // namespace collage::onednn
