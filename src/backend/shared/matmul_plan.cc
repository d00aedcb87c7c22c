#include "backend/shared/matmul_plan.h"

#include <algorithm>

#include "collage/sdk/errors.h"

namespace collage {

StatusOr<MatMulPlan> PlanMatMul(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return InvalidArgument("MatMul operands must have rank >= 1");
  const bool a_vector = a.size() == 1;
  const bool b_vector = b.size() == 1;
  MatMulPlan plan;
  plan.m = a_vector ? 1 : a[a.size() - 2];
  plan.k = a.back();
  plan.n = b_vector ? 1 : b.back();
  const int64_t kb = b_vector ? b[0] : b[b.size() - 2];
  if (kb != plan.k) {
    return InvalidArgument("MatMul inner dims differ: {} x {}", ShapeToString(a), ShapeToString(b));
  }
  const Shape a_batch(a.begin(), a.end() - (a_vector ? 1 : 2));
  const Shape b_batch(b.begin(), b.end() - (b_vector ? 1 : 2));
  const size_t rank = std::max(a_batch.size(), b_batch.size());
  // Left-pad both batch shapes to one rank and broadcast them.
  Shape pa(rank - a_batch.size(), 1);
  pa.insert(pa.end(), a_batch.begin(), a_batch.end());
  Shape pb(rank - b_batch.size(), 1);
  pb.insert(pb.end(), b_batch.begin(), b_batch.end());
  Shape batch(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (pa[d] != pb[d] && pa[d] != 1 && pb[d] != 1) {
      return InvalidArgument("MatMul batch dims do not broadcast: {} x {}", ShapeToString(a),
                             ShapeToString(b));
    }
    batch[d] = pa[d] == 1 ? pb[d] : pa[d];
  }
  const int64_t count = NumElements(batch);
  if (NumElements(pb) == 1 && pa == batch) {
    plan.m *= count;
    plan.a_offsets = {0};
    plan.b_offsets = {0};
    return plan;
  }
  // Offsets of each batch entry in A and B, walking the broadcast batch index like an
  // odometer; a broadcast (size-1) dim does not advance its operand.
  std::vector<int64_t> index(rank, 0);
  plan.a_offsets.reserve(static_cast<size_t>(count));
  plan.b_offsets.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t ai = 0;
    int64_t bi = 0;
    for (size_t d = 0; d < rank; ++d) {
      ai = ai * pa[d] + (pa[d] == 1 ? 0 : index[d]);
      bi = bi * pb[d] + (pb[d] == 1 ? 0 : index[d]);
    }
    plan.a_offsets.push_back(ai * plan.m * plan.k);
    plan.b_offsets.push_back(bi * plan.k * plan.n);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < batch[d]) break;
      index[d] = 0;
    }
  }
  return plan;
}

}  // namespace collage
