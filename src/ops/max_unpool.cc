// MaxUnpool (opsets 9, 11): the partial inverse of MaxPool. Each input value goes to the place
// its index names (MaxPool's Indices output: a flat index into the tensor MaxPool read, whose
// shape is (in - 1) * stride + kernel - pads per spatial dim); every other output element is
// zero. The output has that shape, or output_shape (input 2) when given: then each index is
// still read as a place in the computed shape, and the value lands at the same coordinates of
// the larger output (as the ONNX node cases expect).
#include <cstring>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// The shape MaxPool read (from the attributes), or output_shape when `output_shape` is given.
StatusOr<Shape> UnpooledShape(const Node& node, const Shape& x, const Tensor* output_shape) {
  const size_t spatial = x.size() < 2 ? 0 : x.size() - 2;
  if (x.size() < 3) {
    return OpError(node, StatusCode::kInvalidModel, "input must be [N, C, D1, ...], is {}",
                   ShapeToString(x));
  }
  if (output_shape != nullptr) {
    COLLAGE_RETURN_IF_ERROR(UnpooledShape(node, x, nullptr).status());
    std::vector<int64_t> dims = output_shape->ToVector<int64_t>();
    if (dims.size() != x.size() || dims[0] != x[0] || dims[1] != x[1]) {
      return OpError(node, StatusCode::kInvalidModel,
                     "output_shape {} must keep the input's rank, batch and channels ({})",
                     ShapeToString(dims), ShapeToString(x));
    }
    for (int64_t d : dims) {
      if (d < 0) return OpError(node, StatusCode::kInvalidModel, "output_shape has a negative dim");
    }
    return Shape(dims.begin(), dims.end());
  }
  if (!node.attributes.Has("kernel_shape")) {
    return OpError(node, StatusCode::kInvalidModel, "attribute kernel_shape is required");
  }
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> kernel,
                           SpatialInts(node, "kernel_shape", spatial, 0, 1));
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> strides, SpatialInts(node, "strides", spatial, 1, 1));
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> pads, SpatialInts(node, "pads", 2 * spatial, 0, 0));
  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t dim = (x[i + 2] - 1) * strides[i] + kernel[i] - pads[i] - pads[i + spatial];
    if (dim < 0) return OpError(node, StatusCode::kInvalidModel, "the pads exceed the output");
    out.push_back(dim);
  }
  return out;
}

Status InferMaxUnpool(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(DispatchNumeric(ctx.node, x.dtype, [](auto) {}));
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 1, {DType::kInt64}));
  if (ctx.input_type(1).shape != x.shape) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "the indices ({}) must have X's shape ({})",
                   ShapeToString(ctx.input_type(1).shape), ShapeToString(x.shape));
  }
  const Tensor* output_shape = nullptr;
  if (ctx.has_input(2)) {
    COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 2, {DType::kInt64}));
    output_shape = ctx.input_value(2);
    if (output_shape == nullptr) {
      return OpError(ctx.node, StatusCode::kUnsupported,
                     "input 2 (output_shape) is not constant; collage needs its value to know the "
                     "output shape");
    }
  }
  COLLAGE_ASSIGN_OR_RETURN(Shape out, UnpooledShape(ctx.node, x.shape, output_shape));
  ctx.output_types[0] = {x.dtype, out};
  return Status::Ok();
}

Status RunMaxUnpool(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const int64_t* indices = ctx.inputs[1].data_as<int64_t>();
  Tensor& out = ctx.outputs[0];
  COLLAGE_ASSIGN_OR_RETURN(Shape pooled, UnpooledShape(ctx.node, x.shape(), nullptr));
  const std::vector<int64_t> pooled_strides = StridesOf(pooled);
  const std::vector<int64_t> out_strides = StridesOf(out.shape());
  const int64_t pooled_size = NumElements(pooled);
  // Where each value goes in the output: its index's coordinates in the pooled shape.
  std::vector<int64_t> places(static_cast<size_t>(x.num_elements()));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    int64_t rest = indices[i];
    if (rest < 0 || rest >= pooled_size) {
      return OpError(ctx.node, StatusCode::kInvalidArgument,
                     "index {} (at position {}) is outside the {} elements MaxPool read ({})",
                     indices[i], i, pooled_size, ShapeToString(pooled));
    }
    int64_t place = 0;
    for (size_t d = 0; d < pooled.size(); ++d) {
      const int64_t coordinate = rest / pooled_strides[d];
      rest %= pooled_strides[d];
      if (coordinate >= out.dim(static_cast<int64_t>(d))) {
        return OpError(ctx.node, StatusCode::kInvalidArgument,
                       "index {} (at position {}) falls outside output_shape {}", indices[i], i,
                       ShapeToString(out.shape()));
      }
      place += coordinate * out_strides[d];
    }
    places[static_cast<size_t>(i)] = place;
  }
  std::memset(out.data(), 0, out.nbytes());
  return DispatchNumeric(ctx.node, x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = x.data_as<T>();
    T* y = out.data_as<T>();
    for (int64_t i = 0; i < x.num_elements(); ++i) y[places[static_cast<size_t>(i)]] = in[i];
  });
}

}  // namespace

void RegisterMaxUnpoolOps(OpRegistry& registry) {
  registry.Register(MakeOpDef("MaxUnpool", OpKind::kOpaque, 2, 3, InferMaxUnpool, RunMaxUnpool));
}

}  // namespace collage
