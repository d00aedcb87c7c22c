// ONNX MatMul's geometry (numpy matmul semantics, broadcast batch dims) and its loop over the
// shared GEMM kernel, for MatMul and the integer matrix products (MatMulInteger,
// QLinearMatMul), which run it on int32 after removing the zero points.
#pragma once

#include <vector>

#include "collage/sdk/op_registry.h"
#include "ops/kernels/gemm_kernel.h"
#include "ops/op_helpers.h"

namespace collage {

// A [..., m, k] x B [..., k, n] -> Y [batch..., m, n]. A 1-D A is a row vector [1, k] whose m
// dim is dropped from Y; a 1-D B is a column vector [k, 1] whose n dim is dropped.
struct MatMulGeometry {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  Shape batch;    // broadcast batch dims of Y
  Shape a_batch;  // A's batch dims, left-padded with 1s to batch's rank
  Shape b_batch;
  Shape out;
};

// The geometry of A x B, or InvalidModel naming the node.
StatusOr<MatMulGeometry> ResolveMatMul(const Node& node, const Shape& a, const Shape& b);

// Y = A x B over the batch, for any dtype Gemm<T> is instantiated for.
template <typename T>
void MatMulTyped(const MatMulGeometry& g, const T* a, const T* b, T* y) {
  const int64_t batch = NumElements(g.batch);
  const int64_t a_size = g.m * g.k;
  const int64_t b_size = g.k * g.n;
  const int64_t y_size = g.m * g.n;
  if (batch == 0 || y_size == 0) return;
  // B shared by every batch entry and A not broadcast (a Linear layer on [batch, seq, d]):
  // A's batch rows are contiguous, so the whole thing is one taller GEMM.
  if (NumElements(g.b_batch) == 1 && g.a_batch == g.batch) {
    Gemm<T>(false, false, batch * g.m, g.n, g.k, T{1}, a, g.k, b, g.n, T{0}, y, g.n);
    return;
  }
  const std::vector<int64_t> a_strides = BroadcastStrides(g.a_batch, g.batch);
  const std::vector<int64_t> b_strides = BroadcastStrides(g.b_batch, g.batch);
  std::vector<int64_t> index(g.batch.size(), 0);
  for (int64_t bi = 0; bi < batch; ++bi) {
    int64_t a_off = 0;
    int64_t b_off = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      a_off += index[d] * a_strides[d];
      b_off += index[d] * b_strides[d];
    }
    Gemm<T>(false, false, g.m, g.n, g.k, T{1}, a + a_off * a_size, g.k, b + b_off * b_size, g.n,
            T{0}, y + bi * y_size, g.n);
    for (size_t d = index.size(); d-- > 0;) {  // odometer over the batch dims
      if (++index[d] < g.batch[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace collage
