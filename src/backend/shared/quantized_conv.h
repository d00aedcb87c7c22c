// A quantized convolution as ONNX Runtime's quantizer writes it, read for a library's integer
// convolution, in either form:
//  - QLinearConv;
//  - QDQ: DequantizeLinear of the input and of the weights (and of an int32 bias, or a float
//    bias), Conv (then Relu), QuantizeLinear (QdqConvPattern).
// Per-tensor activations, int8 weights with zero points 0 (symmetric, as the quantizer makes
// them) and scales per tensor or per output channel. A library computes it as int32 sums of
// the integers, plus the bias in the sums' units, scaled by x_scale * w_scale / y_scale per
// output channel, rounded half to even and saturated; the reference kernels round each op of
// the QDQ form on its own, so the outputs may differ by one quantization step
// (ir/quantization_step.h), which the checks allow.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "collage/sdk/graph.h"
#include "collage/sdk/pattern.h"

namespace collage {

struct QuantizedConv {
  NodeId conv = -1;  // the Conv or QLinearConv (its geometry)
  ValueId x = kNoValue;
  ValueId y = kNoValue;
  float x_scale = 0, y_scale = 0;
  int32_t x_zero_point = 0, y_zero_point = 0;
  const Tensor* weights = nullptr;  // int8 [M, C/group, k...]
  std::vector<float> w_scale;       // one per tensor or per output channel
  std::vector<float> bias;          // float, already in the sums' units (empty: none)
  bool relu = false;

  float WeightScale(size_t output_channel) const {
    return w_scale.size() == 1 ? w_scale[0] : w_scale[output_channel];
  }
};

// QuantizeLinear(Conv(DequantizeLinear(x), DequantizedConstant(w), bias?)), with a Relu
// before the QuantizeLinear when `relu`; the bias a DequantizedConstant or a float constant.
Pattern QdqConvPattern(bool relu);

// The convolution a match of QdqConvPattern or of Op("QLinearConv") names; none when its
// parameters are not constants of the forms above.
std::optional<QuantizedConv> ReadQuantizedConv(const Match& match);

}  // namespace collage
