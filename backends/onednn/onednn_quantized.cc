#include "onednn_quantized.h"

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

bool IntegerProductExact(DType input, const Tensor& weights) {
  if (HasVnni()) return true;
  if (input != DType::kUInt8 || weights.dtype() != DType::kInt8) return false;
  return FitsSevenBits(weights);
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
