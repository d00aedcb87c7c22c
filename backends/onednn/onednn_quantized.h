// What the oneDNN backend's integer kernels (onednn_int8_conv.cc, onednn_int8_matmul.cc)
// share beyond the SDK's readers of quantization parameters (backend/shared/quantized_params.h):
// whether oneDNN computes a product exactly on this CPU, and the zero points oneDNN takes at
// run time.
#pragma once

#include <optional>

#include "backend/shared/quantized_params.h"
#include "onednn_epilogue.h"
#include "onednn_rules.h"

namespace collage::onednn {

// Whether oneDNN computes an 8-bit product of `input` (uint8 or int8) by these int8 weights
// exactly on this CPU. With VNNI or AMX it multiplies 8-bit integers into 32-bit sums
// directly. Without, its kernels add pairs of uint8 x int8 products in int16 (vpmaddubsw),
// which saturates unless the weights fit in 7 bits (255 * 64 * 2 < 32768: quantizers'
// reduce_range), and they run int8 inputs with the weights halved (oneDNN's scale adjustment),
// which rounds odd weights — measured on the AVX2 EPYC: int8 inputs up to 3 steps off the
// reference on random convolutions, a QDQ DenseNet-121 14 steps off at its output.
bool IntegerProductExact(DType input, const Tensor& weights);

// Asks for the input's and the output's zero points at run time where they are not 0
// (oneDNN's integer primitives take them as run-time arguments), and binds their values.
void SetZeroPoints(dnnl::primitive_attr& attr, int32_t input_zero_point, int32_t output_zero_point);
void BindZeroPoints(KernelBuilder& builder, int32_t input_zero_point, int32_t output_zero_point);

}  // namespace collage::onednn
