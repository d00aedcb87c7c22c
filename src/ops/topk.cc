// TopK (opsets 1, 10, 11): the k largest (or, from opset 11, smallest) elements along an
// axis, as values and their int64 indices along that axis. k is attribute k before opset 10
// and input K from opset 10; it is an output dim, so K must be a constant at load.
//
// Order: best first (largest or smallest), equal values by lower index first (the spec's
// tie-break rule). sorted=0 leaves the order to the implementation; this one sorts anyway.
// NaN: the spec is silent. Here NaN ranks above every number and NaNs equal each other, as
// in ONNX Runtime and the ONNX reference implementation: with largest=1 NaNs come first,
// with largest=0 they come last (picked only when k exceeds the count of numbers).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

struct TopKParams {
  int64_t axis;
  int64_t k;
  bool largest;
};

// k from the attribute (before opset 10) or from input K (one int value, constant at load).
StatusOr<int64_t> ReadK(const Node& node, int64_t opset, const IntInputs& inputs) {
  if (opset < 10) {
    if (inputs.has(1)) {
      return OpError(node, StatusCode::kInvalidModel,
                     "before opset 10 k is an attribute, not input 1 (the model has opset {})",
                     opset);
    }
    if (!node.attributes.Has("k")) {
      return OpError(node, StatusCode::kInvalidModel, "attribute k is missing");
    }
    return node.attributes.GetInt("k", 0);
  }
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> k, inputs.Get(1, "K"));
  if (k.size() != 1) {
    return OpError(node, StatusCode::kInvalidModel, "K must have one value, has {}", k.size());
  }
  return k[0];
}

// The parameters of a TopK node over input shape `shape`, shared by type inference and the
// kernel so that both read them the same way.
StatusOr<TopKParams> ReadTopKParams(const Node& node, int64_t opset, const Shape& shape,
                                    const IntInputs& inputs) {
  const Attributes& a = node.attributes;
  TopKParams p;
  const int64_t rank = static_cast<int64_t>(shape.size());
  COLLAGE_ASSIGN_OR_RETURN(p.axis, NormalizeAxis(node, a.GetInt("axis", -1), rank));
  COLLAGE_ASSIGN_OR_RETURN(p.k, ReadK(node, opset, inputs));
  const int64_t dim = shape[static_cast<size_t>(p.axis)];
  if (p.k < 0 || p.k > dim) {
    return OpError(node, StatusCode::kInvalidModel,
                   "k is {}, must be in [0, {}] (the size of axis {} of input shape {})", p.k, dim,
                   p.axis, ShapeToString(shape));
  }
  // largest came with opset 11; before, TopK always picked the largest. A model that asks
  // otherwise at an older opset is malformed, not something to run differently.
  p.largest = a.GetInt("largest", 1) != 0;
  if (!p.largest && opset < 11) {
    return OpError(node, StatusCode::kInvalidModel,
                   "largest=0 needs opset 11 (the model has opset {})", opset);
  }
  return p;
}

Status InferTopK(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(DispatchNumeric(ctx.node, x.dtype, [](auto) {}));
  COLLAGE_ASSIGN_OR_RETURN(TopKParams p,
                           ReadTopKParams(ctx.node, ctx.opset, x.shape, IntInputs(ctx)));
  Shape out = x.shape;
  out[static_cast<size_t>(p.axis)] = p.k;
  ctx.output_types[0] = {x.dtype, out};
  ctx.output_types[1] = {DType::kInt64, std::move(out)};
  return Status::Ok();
}

// x viewed as [outer, dim, inner] with the axis in the middle; outputs as [outer, k, inner].
template <typename T>
void TopKTyped(const T* x, T* values, int64_t* indices, int64_t outer, int64_t dim, int64_t inner,
               int64_t k, bool largest) {
  std::vector<T> row(static_cast<size_t>(dim));
  std::vector<int64_t> order(static_cast<size_t>(dim));
  // Whether position i goes before position j: the better value first, ties by lower index.
  auto before = [&](int64_t i, int64_t j) {
    const T a = row[static_cast<size_t>(i)];
    const T b = row[static_cast<size_t>(j)];
    if (largest ? RanksBelow(b, a) : RanksBelow(a, b)) return true;
    if (largest ? RanksBelow(a, b) : RanksBelow(b, a)) return false;
    return i < j;
  };
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const T* src = x + o * dim * inner + in;
      for (int64_t j = 0; j < dim; ++j) row[static_cast<size_t>(j)] = src[j * inner];
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      T* v = values + o * k * inner + in;
      int64_t* idx = indices + o * k * inner + in;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t pick = order[static_cast<size_t>(j)];
        v[j * inner] = row[static_cast<size_t>(pick)];
        idx[j * inner] = pick;
      }
    }
  }
}

Status RunTopK(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(TopKParams p,
                           ReadTopKParams(ctx.node, ctx.opset, x.shape(), IntInputs(ctx)));
  const int64_t outer = DimProduct(x.shape(), 0, p.axis);
  const int64_t inner = DimProduct(x.shape(), p.axis + 1, x.rank());
  return DispatchNumeric(ctx.node, x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    TopKTyped(x.data_as<T>(), ctx.outputs[0].data_as<T>(), ctx.outputs[1].data_as<int64_t>(), outer,
              x.dim(p.axis), inner, p.k, p.largest);
  });
}

}  // namespace

void RegisterTopKOps(OpRegistry& registry) {
  // Values and Indices are both required outputs.
  OpDef def = MakeOpDef("TopK", OpKind::kOpaque, 1, 2, InferTopK, RunTopK);
  def.min_outputs = 2;
  def.max_outputs = 2;
  registry.Register(std::move(def));
}

}  // namespace collage
