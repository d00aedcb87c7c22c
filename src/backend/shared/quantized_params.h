// Reading the quantization parameters of the forms ONNX Runtime's quantizer writes (QDQ and
// the QLinear ops), for the rules of backends with integer kernels: scales and zero points
// that are constants of one value, symmetric weights, and the DequantizeLinear of a constant.
#pragma once

#include <cstdint>
#include <optional>

#include "collage/sdk/graph.h"
#include "collage/sdk/pattern.h"

namespace collage {

// uint8 or int8: what the integer kernels of the libraries read and write.
bool IsEightBit(DType dtype);

// The one value of a constant scalar (or one-element tensor), as float; none for an absent
// value, an input, or a constant of several values.
std::optional<float> SingleValue(const Graph& graph, ValueId value);

// Whether `value` is absent or a constant of zeros (a zero point that is none).
bool AllZero(const Graph& graph, ValueId value);

// A QuantizeLinear's or DequantizeLinear's per-tensor scale (finite, > 0) and zero point
// (inputs 1 and 2; 0 when absent); false when either is not a constant of one value.
bool ReadTensorParams(const Graph& graph, const Node& node, float* scale, int32_t* zero_point);

// Whether int8 weights fit in 7 bits (-64..64), as quantizers' reduce_range makes them: the
// only weights a uint8 x int8 product is exact for on x86 without VNNI, whose kernels add
// pairs of products in int16 (vpmaddubsw) and saturate there (255 x 64 x 2 < 32768).
bool FitsSevenBits(const Tensor& int8_weights);

// A constant tensor dequantized: DequantizeLinear(Const, Const, Const?).
Pattern DequantizedConstant();

}  // namespace collage
