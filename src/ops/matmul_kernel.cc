#include "ops/matmul_kernel.h"

namespace collage {

StatusOr<MatMulGeometry> ResolveMatMul(const Node& node, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) {
    return OpError(node, StatusCode::kInvalidModel, "inputs must have rank >= 1, got {} and {}",
                   ShapeToString(a), ShapeToString(b));
  }
  MatMulGeometry g;
  const bool a_vector = a.size() == 1;
  const bool b_vector = b.size() == 1;
  g.m = a_vector ? 1 : a[a.size() - 2];
  g.k = a.back();
  const int64_t kb = b_vector ? b[0] : b[b.size() - 2];
  g.n = b_vector ? 1 : b.back();
  if (g.k != kb) {
    return OpError(node, StatusCode::kInvalidModel, "inner dimensions differ: A is {}, B is {}",
                   ShapeToString(a), ShapeToString(b));
  }
  Shape a_batch(a.begin(), a.end() - (a_vector ? 1 : 2));
  Shape b_batch(b.begin(), b.end() - (b_vector ? 1 : 2));
  COLLAGE_ASSIGN_OR_RETURN(g.batch, BroadcastShapes(node, {a_batch, b_batch}));
  g.a_batch = Shape(g.batch.size() - a_batch.size(), 1);
  g.a_batch.insert(g.a_batch.end(), a_batch.begin(), a_batch.end());
  g.b_batch = Shape(g.batch.size() - b_batch.size(), 1);
  g.b_batch.insert(g.b_batch.end(), b_batch.begin(), b_batch.end());
  g.out = g.batch;
  if (!a_vector) g.out.push_back(g.m);
  if (!b_vector) g.out.push_back(g.n);
  return g;
}

}  // namespace collage
