// Constraint helpers the float32 library backends (openblas, mkl, eigen) share: what their
// GEMM-shaped kernels take, checked the same way everywhere.
#pragma once

#include "collage/sdk/graph.h"
#include "collage/sdk/pattern.h"

namespace collage {

// A static float32 tensor.
bool IsStaticFloat32(const TensorType& type);
// Every capture of the match (the group's inputs and weights) and its output are.
bool AllStaticFloat32(const Match& match);
// Before opset 7, Add and Gemm broadcast only with a `broadcast` attribute; the backends do
// not implement those semantics.
bool BroadcastsAsOpset7(const Match& match);
// A bias a MatMul kernel applies row by row: one value, or n values along the last dim only
// ([n], [1, n], [1, 1, n], ...), not extending the MatMul's output `out`.
bool IsRowBias(const TensorType& bias, const Shape& out);

}  // namespace collage
