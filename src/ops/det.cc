// Det (opset 11): the determinant of each square matrix of the input's last two dims, by LU
// decomposition with partial pivoting in double precision.
#include <cmath>
#include <utility>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

Status InferDet(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(DispatchFloat(ctx.node, x.dtype, [](auto) {}));
  const size_t rank = x.shape.size();
  if (rank < 2 || x.shape[rank - 1] != x.shape[rank - 2]) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "input must end in a square matrix [..., M, M], is {}", ShapeToString(x.shape));
  }
  ctx.output_types[0] = {x.dtype, Shape(x.shape.begin(), x.shape.end() - 2)};
  return Status::Ok();
}

// The determinant of the n x n matrix `a` (row-major, overwritten).
double Determinant(std::vector<double>& a, int64_t n) {
  double det = 1.0;
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < n; ++r) {
      if (std::abs(a[static_cast<size_t>(r * n + col)]) > std::abs(a[static_cast<size_t>(pivot * n + col)])) pivot = r;
    }
    const double p = a[static_cast<size_t>(pivot * n + col)];
    if (p == 0.0) return 0.0;
    if (pivot != col) {
      for (int64_t c = 0; c < n; ++c) {
        std::swap(a[static_cast<size_t>(pivot * n + c)], a[static_cast<size_t>(col * n + c)]);
      }
      det = -det;
    }
    det *= p;
    for (int64_t r = col + 1; r < n; ++r) {
      const double factor = a[static_cast<size_t>(r * n + col)] / p;
      for (int64_t c = col; c < n; ++c) {
        a[static_cast<size_t>(r * n + c)] -= factor * a[static_cast<size_t>(col * n + c)];
      }
    }
  }
  return det;
}

Status RunDet(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const int64_t n = x.dim(x.rank() - 1);
  const int64_t matrices = n == 0 ? ctx.outputs[0].num_elements() : x.num_elements() / (n * n);
  return DispatchFloat(ctx.node, x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = x.data_as<T>();
    T* out = ctx.outputs[0].data_as<T>();
    std::vector<double> a(static_cast<size_t>(n * n));
    for (int64_t m = 0; m < matrices; ++m) {
      for (int64_t k = 0; k < n * n; ++k) a[static_cast<size_t>(k)] = static_cast<double>(in[m * n * n + k]);
      out[m] = static_cast<T>(Determinant(a, n));  // the empty matrix's determinant is 1
    }
  });
}

}  // namespace

void RegisterDetOps(OpRegistry& registry) {
  registry.Register(MakeOpDef("Det", OpKind::kOpaque, 1, 1, InferDet, RunDet));
}

}  // namespace collage
