// How coarse a value of a quantized model is by construction, and how far apart two correct
// computations of it may land. Two correct computations of a quantized model may round one
// value differently — one library rounds each op's result half to even, another fuses a
// DequantizeLinear → Conv → QuantizeLinear and rounds once, or sums in another order before
// rounding — and then differ by one quantization step there; a value computed through several
// such roundings carries the differences of each (the candidates' check against the reference
// kernels, the plans', `collage run --check`).
#pragma once

#include "collage/sdk/graph.h"
#include "collage/sdk/subgraph.h"

namespace collage {

// One quantization step of `value`, in its own units, or 0 when it has none:
//  - 1 for an 8- or 16-bit integer an op rounded to its output scale (QuantizeLinear,
//    DynamicQuantizeLinear, QLinearConv, QLinearMatMul, the com.microsoft QLinear ops, QGemm);
//  - the largest scale of a DequantizeLinear with a constant scale, for its float output;
// directly, or through ops that move data or whose slope is at most 1 (Reshape, Transpose,
// Relu, Clip, Tanh, Sigmoid, MaxPool, ...), which keep a difference of one step within one
// step. With `scope`, only nodes in it are looked through (a group checked on its own).
double QuantizationStep(const Graph& graph, ValueId value, const SubGraph* scope = nullptr);

// How far two correct computations of `value` may be apart, in its own units (0 when it has
// no step): its step times the square root of its rounding depth — the most roundings to an
// output scale on any path to it (within `scope`) — and never less than one step. A group
// that rounds once is held to one step; differences of independent roundings add up like a
// random walk, so a value rounded D times deep may be about sqrt(D) steps off (the whole
// models measured against it: docs/architecture.md, "Quantized models"). A kernel that
// computes a layer wrongly is caught where it is measured, as a group, at one step.
double QuantizationTolerance(const Graph& graph, ValueId value, const SubGraph* scope = nullptr);

// DynamicQuantizeLinear's step, relative to its input's magnitude, at most: range / 255, and
// the range (which spans 0) is at most twice the largest magnitude.
inline constexpr double kDynamicQuantizationStep = 2.0 / 255.0;

// How far apart two correct computations of `value` may be, relative to its magnitude
// (max |a - b| / max |reference|), because activations on its way were quantized at run time
// (DynamicQuantizeLinear, whose step depends on the data), or 0 when none were. A float
// difference too small to matter elsewhere can move such a rounding by a step; a linear layer
// passes that step on as about the same fraction of its output, and D such roundings on the
// way add up like a random walk: kDynamicQuantizationStep x ceil(sqrt(D)) (docs/precision.md,
// "How outputs are judged", has BERT-base measured against it).
double DynamicQuantizationTolerance(const Graph& graph, ValueId value,
                                    const SubGraph* scope = nullptr);

}  // namespace collage
