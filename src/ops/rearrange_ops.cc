// Ops that rearrange elements or write a fixed pattern: DepthToSpace and SpaceToDepth (moving
// blocks between channels and space), ReverseSequence (reversing a prefix of each sequence)
// and EyeLike (an identity-like matrix). None looks at element values, so every fixed-size
// dtype works.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// ---- DepthToSpace, SpaceToDepth ----

// The required blocksize attribute, at least 1.
StatusOr<int64_t> BlockSize(const Node& node) {
  if (!node.attributes.Has("blocksize")) {
    return OpError(node, StatusCode::kInvalidModel, "the 'blocksize' attribute is missing");
  }
  const int64_t b = node.attributes.GetInt("blocksize", 0);
  if (b < 1 || b > kMaxGeometryValue) {
    return OpError(node, StatusCode::kInvalidModel, "blocksize {} must be in [1, 2^31]", b);
  }
  return b;
}

// DCR ("depth, column, row") reads the channel as (block row, block column, out channel); CRD
// as (out channel, block row, block column). Mode exists since opset 11; before, DCR.
StatusOr<bool> IsCrdMode(const Node& node) {
  const std::string mode = node.attributes.GetString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") {
    return OpError(node, StatusCode::kInvalidModel, "mode '{}' is not one of DCR, CRD", mode);
  }
  return mode == "CRD";
}

// Both block ops take (N, C, H, W) of any fixed-size dtype.
Status RequireImage(const InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, in.dtype, 0));
  if (in.shape.size() == 4) return Status::Ok();
  return OpError(ctx.node, StatusCode::kInvalidModel,
                 "input must have rank 4 (N, C, H, W), has shape {}", ShapeToString(in.shape));
}

Status InferDepthToSpace(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireImage(ctx));
  COLLAGE_ASSIGN_OR_RETURN(int64_t b, BlockSize(ctx.node));
  COLLAGE_RETURN_IF_ERROR(IsCrdMode(ctx.node).status());
  const Shape& in = ctx.input_type(0).shape;
  COLLAGE_ASSIGN_OR_RETURN(int64_t block,
                           CheckedValue(ctx.node, CheckedInt(b) * b, "blocksize {} squared", b));
  if (in[1] % block != 0) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "channels {} are not a multiple of blocksize {} squared", in[1], b);
  }
  Shape out = {in[0], in[1] / block, 0, 0};
  COLLAGE_ASSIGN_OR_RETURN(
      out[2], CheckedValue(ctx.node, CheckedInt(in[2]) * b, "height {} * blocksize {}", in[2], b));
  COLLAGE_ASSIGN_OR_RETURN(
      out[3], CheckedValue(ctx.node, CheckedInt(in[3]) * b, "width {} * blocksize {}", in[3], b));
  ctx.output_types[0] = {ctx.input_type(0).dtype, std::move(out)};
  return Status::Ok();
}

// Both ops are a transpose of 6-D views. The output (N, C', H', W') of DepthToSpace is viewed
// as (N, C', H, b, W, b); each of those dims reads some dim of the input viewed as
// (N, b, b, C', H, W) for DCR or (N, C', b, b, H, W) for CRD.
Status RunDepthToSpace(KernelContext& ctx) {
  const Tensor& in = ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  COLLAGE_ASSIGN_OR_RETURN(int64_t b, BlockSize(ctx.node));
  COLLAGE_ASSIGN_OR_RETURN(bool crd, IsCrdMode(ctx.node));
  const int64_t n = in.dim(0), c = out.dim(1), h = in.dim(2), w = in.dim(3);
  const Shape view = {n, c, h, b, w, b};
  std::vector<int64_t> strides;
  if (crd) {
    const std::vector<int64_t> s = StridesOf({n, c, b, b, h, w});
    strides = {s[0], s[1], s[4], s[2], s[5], s[3]};
  } else {
    const std::vector<int64_t> s = StridesOf({n, b, b, c, h, w});
    strides = {s[0], s[3], s[4], s[1], s[5], s[2]};
  }
  StridedCopy(DTypeSize(in.dtype()), view, in.data(), 0, strides, out.data());
  return Status::Ok();
}

Status InferSpaceToDepth(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireImage(ctx));
  COLLAGE_ASSIGN_OR_RETURN(int64_t b, BlockSize(ctx.node));
  const Shape& in = ctx.input_type(0).shape;
  if (in[2] % b != 0 || in[3] % b != 0) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "height {} and width {} are not multiples of blocksize {}", in[2], in[3], b);
  }
  Shape out = {in[0], 0, in[2] / b, in[3] / b};
  COLLAGE_ASSIGN_OR_RETURN(out[1], CheckedValue(ctx.node, CheckedInt(in[1]) * b * b,
                                                "channels {} * blocksize {} squared", in[1], b));
  ctx.output_types[0] = {ctx.input_type(0).dtype, std::move(out)};
  return Status::Ok();
}

// The inverse of DCR DepthToSpace: the output viewed as (N, b, b, C, H', W') reads the input
// viewed as (N, C, H', b, W', b).
Status RunSpaceToDepth(KernelContext& ctx) {
  const Tensor& in = ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  COLLAGE_ASSIGN_OR_RETURN(int64_t b, BlockSize(ctx.node));
  const int64_t n = in.dim(0), c = in.dim(1), h = out.dim(2), w = out.dim(3);
  const std::vector<int64_t> s = StridesOf({n, c, h, b, w, b});
  StridedCopy(DTypeSize(in.dtype()), {n, b, b, c, h, w}, in.data(), 0,
              {s[0], s[3], s[5], s[1], s[2], s[4]}, out.data());
  return Status::Ok();
}

// ---- ReverseSequence ----

struct SequenceAxes {
  int64_t batch, time;
};

// batch_axis and time_axis: 0 and 1 in either order (default batch 1, time 0).
StatusOr<SequenceAxes> ReadSequenceAxes(const Node& node) {
  SequenceAxes a{node.attributes.GetInt("batch_axis", 1), node.attributes.GetInt("time_axis", 0)};
  const bool ok = (a.batch == 0 && a.time == 1) || (a.batch == 1 && a.time == 0);
  if (!ok) {
    return OpError(node, StatusCode::kInvalidModel,
                   "batch_axis {} and time_axis {} must be 0 and 1 in some order", a.batch, a.time);
  }
  return a;
}

Status InferReverseSequence(InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, in.dtype, 0));
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 1, {DType::kInt64}));
  COLLAGE_ASSIGN_OR_RETURN(SequenceAxes axes, ReadSequenceAxes(ctx.node));
  if (in.shape.size() < 2) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "input must have rank >= 2, has shape {}",
                   ShapeToString(in.shape));
  }
  const Shape& lens = ctx.input_type(1).shape;
  const int64_t batch = in.shape[static_cast<size_t>(axes.batch)];
  if (lens.size() != 1 || lens[0] != batch) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "sequence_lens of shape {} does not match the batch size {}",
                   ShapeToString(lens), batch);
  }
  ctx.output_types[0] = in;
  return Status::Ok();
}

// The input is (dim0, dim1, inner...) with dims 0 and 1 the batch and time axes in some
// order: each (i0, i1) block of `inner` elements moves whole.
Status RunReverseSequence(KernelContext& ctx) {
  const Tensor& in = ctx.inputs[0];
  Tensor& out = ctx.outputs[0];
  COLLAGE_ASSIGN_OR_RETURN(SequenceAxes axes, ReadSequenceAxes(ctx.node));
  const std::vector<int64_t> lens = ctx.inputs[1].ToVector<int64_t>();
  const int64_t time = in.dim(axes.time);
  for (size_t b = 0; b < lens.size(); ++b) {
    if (lens[b] < 0 || lens[b] > time) {
      return OpError(ctx.node, StatusCode::kInvalidArgument,
                     "sequence_lens[{}] = {} is out of range [0, {}]", b, lens[b], time);
    }
  }
  const size_t block =
      static_cast<size_t>(DimProduct(in.shape(), 2, in.rank())) * DTypeSize(in.dtype());
  if (block == 0) return Status::Ok();
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out.data());
  for (int64_t i0 = 0; i0 < in.dim(0); ++i0) {
    for (int64_t i1 = 0; i1 < in.dim(1); ++i1) {
      const int64_t b = axes.batch == 0 ? i0 : i1;
      const int64_t t = axes.batch == 0 ? i1 : i0;
      const int64_t len = lens[static_cast<size_t>(b)];
      const int64_t from = t < len ? len - 1 - t : t;  // the prefix reverses, the rest stays
      const int64_t source = axes.batch == 0 ? b * in.dim(1) + from : from * in.dim(1) + b;
      std::memcpy(dst + static_cast<size_t>(i0 * in.dim(1) + i1) * block,
                  src + static_cast<size_t>(source) * block, block);
    }
  }
  return Status::Ok();
}

// ---- EyeLike ----

// The output dtype: the dtype attribute (an ONNX TensorProto.DataType), else the input's.
StatusOr<DType> EyeLikeDType(const Node& node, DType input) {
  if (!node.attributes.Has("dtype")) return input;
  const int64_t code = node.attributes.GetInt("dtype", 0);
  if (code <= 0) {
    return OpError(node, StatusCode::kInvalidModel, "dtype {} is not a data type", code);
  }
  // DTypeSize is 0 for string and for codes collage has no dtype for (complex, float8...).
  if (code > static_cast<int64_t>(DType::kBFloat16) || DTypeSize(static_cast<DType>(code)) == 0) {
    return OpError(node, StatusCode::kUnsupported, "dtype {} is not supported", code);
  }
  return static_cast<DType>(code);
}

Status InferEyeLike(InferContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  COLLAGE_ASSIGN_OR_RETURN(DType dtype, EyeLikeDType(ctx.node, in.dtype));
  COLLAGE_RETURN_IF_ERROR(RequireFixedSizeDType(ctx.node, dtype, 0));
  if (in.shape.size() != 2) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "input must have rank 2, has shape {}",
                   ShapeToString(in.shape));
  }
  ctx.output_types[0] = {dtype, in.shape};
  return Status::Ok();
}

// The bytes of the value 1 in `dtype`.
StatusOr<uint64_t> OneBits(const Node& node, DType dtype) {
  // The half types have no C++ type here: their 1.0 bit patterns.
  if (dtype == DType::kFloat16) return uint64_t{0x3C00};
  if (dtype == DType::kBFloat16) return uint64_t{0x3F80};
  uint64_t bits = 0;
  COLLAGE_RETURN_IF_ERROR(DispatchAny(node, dtype, [&](auto zero) {
    const decltype(zero) one = 1;
    std::memcpy(&bits, &one, sizeof(one));
  }));
  return bits;
}

Status RunEyeLike(KernelContext& ctx) {
  Tensor& out = ctx.outputs[0];
  COLLAGE_ASSIGN_OR_RETURN(uint64_t one_bits, OneBits(ctx.node, out.dtype()));
  const int64_t rows = out.dim(0), cols = out.dim(1);
  // Beyond ±(rows + cols) every k means an all-zero matrix; clamping keeps i + k in range.
  const int64_t k =
      std::clamp<int64_t>(ctx.attributes().GetInt("k", 0), -(rows + cols + 1), rows + cols + 1);
  return DispatchBySize(ctx.node, out.dtype(), [&](auto zero) {
    using U = decltype(zero);
    U one;
    std::memcpy(&one, &one_bits, sizeof(U));
    U* o = out.data_as<U>();
    std::fill(o, o + out.num_elements(), U{0});  // all-zero bytes are zero in every dtype
    for (int64_t i = 0; i < rows; ++i) {
      if (i + k >= 0 && i + k < cols) o[i * cols + i + k] = one;
    }
  });
}

}  // namespace

void RegisterRearrangeOps(OpRegistry& registry) {
  // Each output element is one input element: injective.
  registry.Register(
      MakeOpDef("DepthToSpace", OpKind::kInjective, 1, 1, InferDepthToSpace, RunDepthToSpace));
  registry.Register(
      MakeOpDef("SpaceToDepth", OpKind::kInjective, 1, 1, InferSpaceToDepth, RunSpaceToDepth));
  // Which element moves where depends on sequence_lens, as Gather's on its indices.
  registry.Register(MakeOpDef("ReverseSequence", OpKind::kInjective, 2, 2, InferReverseSequence,
                              RunReverseSequence));
  // Writes a pattern from the input's shape alone, like ConstantOfShape.
  registry.Register(MakeOpDef("EyeLike", OpKind::kOpaque, 1, 1, InferEyeLike, RunEyeLike));
}

}  // namespace collage
