#include "ops/data_movement.h"

#include <cstring>

namespace collage {

Status RequireFixedSizeDType(const Node& node, DType dtype, size_t input) {
  if (DTypeSize(dtype) != 0) return Status::Ok();
  return OpError(node, StatusCode::kUnsupported, "input {} has dtype {}, which is not supported",
                 input, DTypeName(dtype));
}

namespace {

template <typename U>
void StridedCopyTyped(const Shape& shape, const U* in, int64_t offset,
                      const std::vector<int64_t>& strides, U* out) {
  const int64_t n = NumElements(shape);
  if (n == 0) return;
  const size_t rank = shape.size();
  if (rank == 0) {
    out[0] = in[offset];
    return;
  }
  // Walk the output row by row: the innermost dim is a tight loop (a memcpy when
  // contiguous), the outer dims advance an odometer that keeps the input offset current.
  const int64_t inner = shape[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  std::vector<int64_t> index(rank, 0);
  int64_t base = offset;
  for (int64_t done = 0; done < n; done += inner) {
    const U* src = in + base;
    if (inner_stride == 1) {
      std::memcpy(out, src, static_cast<size_t>(inner) * sizeof(U));
    } else {
      for (int64_t j = 0; j < inner; ++j) out[j] = src[j * inner_stride];
    }
    out += inner;
    for (size_t d = rank - 1; d-- > 0;) {
      base += strides[d];
      if (++index[d] < shape[d]) break;
      base -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace

void StridedCopy(size_t elem_size, const Shape& out_shape, const void* in, int64_t offset,
                 const std::vector<int64_t>& strides, void* out) {
  switch (elem_size) {
    case 1:
      StridedCopyTyped(out_shape, static_cast<const uint8_t*>(in), offset, strides,
                       static_cast<uint8_t*>(out));
      break;
    case 2:
      StridedCopyTyped(out_shape, static_cast<const uint16_t*>(in), offset, strides,
                       static_cast<uint16_t*>(out));
      break;
    case 4:
      StridedCopyTyped(out_shape, static_cast<const uint32_t*>(in), offset, strides,
                       static_cast<uint32_t*>(out));
      break;
    case 8:
      StridedCopyTyped(out_shape, static_cast<const uint64_t*>(in), offset, strides,
                       static_cast<uint64_t*>(out));
      break;
    default: break;  // callers check the dtype during type inference
  }
}

StatusOr<int64_t> NormalizeIndex(const Node& node, int64_t i, int64_t dim, int64_t axis) {
  const int64_t j = i < 0 ? i + dim : i;
  if (j < 0 || j >= dim) {
    return OpError(node, StatusCode::kInvalidArgument,
                   "index {} is out of range for axis {} of size {}", i, axis, dim);
  }
  return j;
}

int64_t DimProduct(const Shape& shape, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t i = begin; i < end; ++i) p *= shape[static_cast<size_t>(i)];
  return p;
}

IntInputs::IntInputs(const InferContext& ctx) : node_(ctx.node) {
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    present_.push_back(ctx.has_input(i));
    values_.push_back(ctx.input_value(i));
  }
}

IntInputs::IntInputs(const KernelContext& ctx) : node_(ctx.node) {
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    present_.push_back(ctx.has_input(i));
    values_.push_back(ctx.has_input(i) ? &ctx.inputs[i] : nullptr);
  }
}

StatusOr<std::vector<int64_t>> IntInputs::Get(size_t i, const char* what) const {
  if (!has(i)) {
    return OpError(node_, StatusCode::kInvalidModel, "input {} ({}) is missing", i, what);
  }
  const Tensor* t = values_[i];
  if (t == nullptr) {
    return OpError(node_, StatusCode::kUnsupported,
                   "input {} ({}) is not constant; collage needs its values to know the output "
                   "shape",
                   i, what);
  }
  switch (t->dtype()) {
    case DType::kInt64:
    case DType::kInt32:
    case DType::kInt16:
    case DType::kInt8:
    case DType::kUInt64:
    case DType::kUInt32:
    case DType::kUInt16:
    case DType::kUInt8: return t->ToVector<int64_t>();
    default:
      return OpError(node_, StatusCode::kInvalidModel, "input {} ({}) has dtype {}, expected int64",
                     i, what, DTypeName(t->dtype()));
  }
}

StatusOr<std::optional<std::vector<int64_t>>> IntInputs::GetOptional(size_t i,
                                                                     const char* what) const {
  if (!has(i)) return std::optional<std::vector<int64_t>>();
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> values, Get(i, what));
  return std::optional<std::vector<int64_t>>(std::move(values));
}

StatusOr<std::vector<int64_t>> NormalizeAxes(const Node& node, const std::vector<int64_t>& axes,
                                             int64_t rank, const char* what) {
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t axis : axes) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
      return OpError(node, StatusCode::kInvalidModel, "{} value {} is out of range for rank {}",
                     what, axis, rank);
    }
    if (seen[static_cast<size_t>(a)]) {
      return OpError(node, StatusCode::kInvalidModel, "{} repeats axis {}", what, axis);
    }
    seen[static_cast<size_t>(a)] = true;
    out.push_back(a);
  }
  return out;
}

OpDef MakeOpDef(std::string op_type, OpKind kind, int min_inputs, int max_inputs, InferFn infer,
                KernelFn run) {
  OpDef def;
  def.op_type = std::move(op_type);
  def.kind = kind;
  def.min_inputs = min_inputs;
  def.max_inputs = max_inputs;
  def.infer = std::move(infer);
  def.run = std::move(run);
  return def;
}

}  // namespace collage
