// How coarse a value of a quantized model is by construction. Two correct computations of a
// quantized model may round one value differently — one library rounds each op's result half
// to even, another fuses a DequantizeLinear → Conv → QuantizeLinear and rounds once, or sums
// in another order before rounding — and then differ by one quantization step there. Outputs
// of such computations are compared to within that step (the candidates' check against the
// reference kernels, the plans', `collage run --check`).
#pragma once

#include "collage/sdk/graph.h"
#include "collage/sdk/subgraph.h"

namespace collage {

// How many steps a whole model's quantized output may be from another correct run's. Each
// group rounds on its own, and a value rounded one step apart moves what later layers round:
// over the 31 int8 models of the tests, oneDNN's integer kernels land a few outputs of the
// quantized ResNet-50 (53 rounded convolutions deep) two steps from the reference kernels and
// from ONNX Runtime, never more. A single group is held to one step.
inline constexpr double kWholeModelQuantizationSteps = 2;

// One quantization step of `value`, in its own units, or 0 when it has none:
//  - 1 for an 8- or 16-bit integer an op rounded to its output scale (QuantizeLinear,
//    DynamicQuantizeLinear, QLinearConv, QLinearMatMul, the com.microsoft QLinear ops, QGemm);
//  - the largest scale of a DequantizeLinear with a constant scale, for its float output;
// directly, or through ops that move data or whose slope is at most 1 (Reshape, Transpose,
// Relu, Clip, Tanh, Sigmoid, MaxPool, ...), which keep a difference of one step within one
// step. With `scope`, only nodes in it are looked through (a group checked on its own).
double QuantizationStep(const Graph& graph, ValueId value, const SubGraph* scope = nullptr);

}  // namespace collage
