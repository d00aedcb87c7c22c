// Normalizations: BatchNormalization (inference), InstanceNormalization, GroupNormalization,
// LayerNormalization, MeanVarianceNormalization, LRN. Statistics are accumulated in double with two
// passes (mean, then squared deviations), so the reference is closer to exact than float32 sums and
// variances are never negative.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/data_movement.h"
#include "ops/elementwise.h"
#include "ops/op_helpers.h"
#include "ops/reduce_plan.h"
#include "ops/row_normalize.h"

namespace collage {
namespace {

// Inputs [first, last] must be 1-D of C elements (per-channel parameters), any float dtype.
Status RequireChannelParams(const InferContext& ctx, size_t first, size_t last, int64_t channels) {
  for (size_t i = first; i <= last; ++i) {
    COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, i, DTypeSet::kFloat));
    const Shape& s = ctx.input_type(i).shape;
    if (s.size() != 1 || s[0] != channels) {
      return OpError(ctx.node, StatusCode::kInvalidModel,
                     "input {} has shape {}, expected [{}] (one value per channel)", i,
                     ShapeToString(s), channels);
    }
  }
  return Status::Ok();
}

// ---- BatchNormalization ------------------------------------------------------------------
// At inference Y = (X - mean) / sqrt(var + epsilon) * scale + B per channel (dim 1), with the
// running mean/var given as inputs. That is a per-channel affine map: every output element
// reads one X element plus per-channel constants, which is what kBroadcast means to the
// fusion generators (it fuses into a Conv epilogue like a broadcast Mul+Add), so it is
// registered as kBroadcast rather than kReduction.
// Training (opset >= 14 training_mode = 1, or asking for the running/saved statistics
// outputs) updates statistics from the batch: refused.

Status InferBatchNorm(InferContext& ctx) {
  const Attributes& attrs = ctx.attributes();
  if (attrs.GetInt("training_mode", 0) != 0) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "training_mode = 1 is not supported (inference only)");
  }
  if (ctx.opset < 9 && attrs.GetInt("spatial", 1) == 0) {
    return OpError(ctx.node, StatusCode::kUnsupported, "spatial = 0 is not supported");
  }
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i) {
    if (ctx.node.outputs[i] != kNoValue) {
      return OpError(ctx.node, StatusCode::kUnsupported,
                     "output {} (a training statistic) is not supported (inference only)", i);
    }
  }
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kFloat));
  const Shape& x = ctx.input_type(0).shape;
  if (x.size() < 2) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "X must have rank >= 2, got shape {}",
                   ShapeToString(x));
  }
  COLLAGE_RETURN_IF_ERROR(RequireChannelParams(ctx, 1, 4, x[1]));
  ctx.output_types[0] = ctx.input_type(0);
  return Status::Ok();
}

Status RunBatchNorm(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const double epsilon = ctx.attributes().GetFloat("epsilon", 1e-5f);
  const AxisSplit s = SplitAtAxis(x.shape(), 1);  // [N, C, spatial]
  const std::vector<double> scale = ctx.inputs[1].ToVector<double>();
  const std::vector<double> bias = ctx.inputs[2].ToVector<double>();
  const std::vector<double> mean = ctx.inputs[3].ToVector<double>();
  const std::vector<double> var = ctx.inputs[4].ToVector<double>();
  return DispatchFloat(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    T* py = ctx.outputs[0].data_as<T>();
    ParallelFor(s.outer * s.axis, s.inner, [&](int64_t begin, int64_t end) {
      for (int64_t nc = begin; nc < end; ++nc) {
        const auto c = static_cast<size_t>(nc % s.axis);
        // Subtract first, then scale: x*a + b would cancel badly when x is close to a
        // large mean.
        const T m = static_cast<T>(mean[c]);
        const T a = static_cast<T>(scale[c] / std::sqrt(var[c] + epsilon));
        const T b = static_cast<T>(bias[c]);
        const T* in = px + nc * s.inner;
        T* out = py + nc * s.inner;
        for (int64_t i = 0; i < s.inner; ++i) out[i] = (in[i] - m) * a + b;
      }
    });
  });
}

// ---- InstanceNormalization ---------------------------------------------------------------
// Y = (X - mean) / sqrt(var + epsilon) * scale[c] + B[c], statistics per (n, c) over the
// spatial dims.

Status InferInstanceNorm(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kFloat));
  const Shape& x = ctx.input_type(0).shape;
  if (x.size() < 3) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "X must have rank >= 3, got shape {}",
                   ShapeToString(x));
  }
  COLLAGE_RETURN_IF_ERROR(RequireChannelParams(ctx, 1, 2, x[1]));
  ctx.output_types[0] = ctx.input_type(0);
  return Status::Ok();
}

Status RunInstanceNorm(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const double epsilon = ctx.attributes().GetFloat("epsilon", 1e-5f);
  const AxisSplit s = SplitAtAxis(x.shape(), 1);
  const std::vector<double> scale = ctx.inputs[1].ToVector<double>();
  const std::vector<double> bias = ctx.inputs[2].ToVector<double>();
  return DispatchFloat(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    T* py = ctx.outputs[0].data_as<T>();
    ParallelFor(s.outer * s.axis, 4 * s.inner, [&](int64_t begin, int64_t end) {
      for (int64_t nc = begin; nc < end; ++nc) {
        const auto c = static_cast<size_t>(nc % s.axis);
        const T* in = px + nc * s.inner;
        T* out = py + nc * s.inner;
        double mean, var;
        MeanAndVariance(in, s.inner, mean, var);
        const T m = static_cast<T>(mean);
        const T a = static_cast<T>(scale[c] / std::sqrt(var + epsilon));
        const T b = static_cast<T>(bias[c]);
        for (int64_t i = 0; i < s.inner; ++i) out[i] = (in[i] - m) * a + b;
      }
    });
  });
}

// ---- GroupNormalization (opsets 18, 21) --------------------------------------------------
// The C channels form num_groups groups of C / num_groups consecutive channels; each (n,
// group) is normalised over its channels and spatial dims: Y = (X - mean) / sqrt(var +
// epsilon) * scale + bias. Opset 18 gives scale and bias per group ([num_groups]), opset 21
// per channel ([C]). Statistics in double (opset 21's stash_type asks for at least float).

StatusOr<int64_t> GroupCount(const Node& node, int64_t channels) {
  if (!node.attributes.Has("num_groups")) {
    return OpError(node, StatusCode::kInvalidModel, "the num_groups attribute is missing");
  }
  const int64_t groups = node.attributes.GetInt("num_groups", 0);
  if (groups < 1 || channels % groups != 0) {
    return OpError(node, StatusCode::kInvalidModel,
                   "num_groups {} must be positive and divide the {} channels", groups, channels);
  }
  return groups;
}

Status InferGroupNorm(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kFloat));
  const Shape& x = ctx.input_type(0).shape;
  if (x.size() < 2) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "X must have rank >= 2, got shape {}",
                   ShapeToString(x));
  }
  COLLAGE_ASSIGN_OR_RETURN(const int64_t groups, GroupCount(ctx.node, x[1]));
  COLLAGE_RETURN_IF_ERROR(RequireChannelParams(ctx, 1, 2, ctx.opset >= 21 ? x[1] : groups));
  ctx.output_types[0] = ctx.input_type(0);
  return Status::Ok();
}

Status RunGroupNorm(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const int64_t channels = x.dim(1);
  COLLAGE_ASSIGN_OR_RETURN(const int64_t groups, GroupCount(ctx.node, channels));
  const double epsilon = ctx.attributes().GetFloat("epsilon", 1e-5f);
  const int64_t spatial = DimProduct(x.shape(), 2, x.rank());
  const int64_t per_group = channels / groups;
  const bool per_channel = ctx.opset >= 21;
  const std::vector<double> scale = ctx.inputs[1].ToVector<double>();
  const std::vector<double> bias = ctx.inputs[2].ToVector<double>();
  return DispatchFloat(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    T* py = ctx.outputs[0].data_as<T>();
    const int64_t block = per_group * spatial;  // the elements of one (n, group)
    ParallelFor(x.dim(0) * groups, 4 * block, [&](int64_t begin, int64_t end) {
      for (int64_t ng = begin; ng < end; ++ng) {
        const int64_t g = ng % groups;
        const T* in = px + ng * block;
        T* out = py + ng * block;
        double mean, var;
        MeanAndVariance(in, block, mean, var);
        const double inv = 1.0 / std::sqrt(var + epsilon);
        for (int64_t c = 0; c < per_group; ++c) {
          const auto p = static_cast<size_t>(per_channel ? g * per_group + c : g);
          const T a = static_cast<T>(scale[p] * inv);
          const T b = static_cast<T>(bias[p] - mean * scale[p] * inv);
          const T* ci = in + c * spatial;
          T* co = out + c * spatial;
          for (int64_t i = 0; i < spatial; ++i) co[i] = ci[i] * a + b;
        }
      }
    });
  });
}

// ---- LayerNormalization (opset 17) -------------------------------------------------------
// Normalises over dims [axis, rank). The statistics and the normalisation happen in the
// stash type U (float32 or float64); Normalized is cast back to T, then multiplied by Scale
// and shifted by B, which broadcast (numpy rules) to X. Outputs 1 and 2 (Mean, InvStdDev)
// have X's shape with dims [axis, rank) set to 1, and dtype U.

DType StashDType(const Attributes& attrs) {
  return static_cast<DType>(attrs.GetInt("stash_type", 1));
}

// The shape without its leading 1s (how a parameter lines up with trailing dims).
Shape WithoutLeadingOnes(const Shape& shape) {
  size_t i = 0;
  while (i < shape.size() && shape[i] == 1) ++i;
  return Shape(shape.begin() + static_cast<std::ptrdiff_t>(i), shape.end());
}

Status InferLayerNorm(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kFloat));
  const DType stash = StashDType(ctx.attributes());
  if (stash != DType::kFloat32 && stash != DType::kFloat64) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "stash_type {} is not supported (float32 = 1 and float64 = 11 are)",
                   static_cast<int>(stash));
  }
  const Shape& x = ctx.input_type(0).shape;
  const auto rank = static_cast<int64_t>(x.size());
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.node, ctx.attributes().GetInt("axis", -1), rank));
  std::vector<Shape> shapes{x};
  for (size_t i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, i));
    shapes.push_back(ctx.input_type(i).shape);
  }
  COLLAGE_ASSIGN_OR_RETURN(Shape broadcast, BroadcastShapes(ctx.node, shapes));
  if (broadcast != x) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "Scale/B do not broadcast to X's shape {}",
                   ShapeToString(x));
  }
  ctx.output_types[0] = ctx.input_type(0);
  Shape stat_shape = x;
  for (int64_t d = axis; d < rank; ++d) stat_shape[static_cast<size_t>(d)] = 1;
  for (size_t i = 1; i < ctx.output_types.size(); ++i) {
    ctx.output_types[i] = TensorType{stash, stat_shape};
  }
  return Status::Ok();
}

template <typename T, typename U>
void LayerNormKernel(KernelContext& ctx, int64_t axis) {
  const Tensor& x = ctx.inputs[0];
  Tensor& y = ctx.outputs[0];
  const U epsilon = static_cast<U>(ctx.attributes().GetFloat("epsilon", 1e-5f));
  const AxisSplit s = SplitAsMatrix(x.shape(), axis);  // [rows, normalised elements]
  const Shape trailing = WithoutLeadingOnes(
      Shape(x.shape().begin() + static_cast<std::ptrdiff_t>(axis), x.shape().end()));
  const bool has_bias = ctx.has_input(2);
  // Parameters shaped like the normalised dims (the usual case) are applied row by row;
  // any other broadcast is applied afterwards over the whole output.
  const bool scale_per_row = WithoutLeadingOnes(ctx.inputs[1].shape()) == trailing;
  const bool bias_per_row =
      has_bias && scale_per_row && WithoutLeadingOnes(ctx.inputs[2].shape()) == trailing;
  const T* scale = ctx.inputs[1].data_as<T>();
  const T* bias = has_bias ? ctx.inputs[2].data_as<T>() : nullptr;
  U* mean_out =
      ctx.outputs.size() > 1 && !ctx.outputs[1].empty() ? ctx.outputs[1].data_as<U>() : nullptr;
  U* inv_out =
      ctx.outputs.size() > 2 && !ctx.outputs[2].empty() ? ctx.outputs[2].data_as<U>() : nullptr;
  const T* px = x.data_as<T>();
  T* py = y.data_as<T>();
  ParallelFor(s.outer, 6 * s.axis, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* in = px + r * s.axis;
      T* out = py + r * s.axis;
      double mean_d, var_d;
      MeanAndVariance(in, s.axis, mean_d, var_d);
      const U mean = static_cast<U>(mean_d);
      const U inv_std = U(1) / std::sqrt(static_cast<U>(var_d) + epsilon);
      for (int64_t j = 0; j < s.axis; ++j) {
        T v = static_cast<T>((static_cast<U>(in[j]) - mean) * inv_std);
        if (scale_per_row) v *= scale[j];
        if (bias_per_row) v += bias[j];
        out[j] = v;
      }
      if (mean_out != nullptr) mean_out[r] = mean;
      if (inv_out != nullptr) inv_out[r] = inv_std;
    }
  });
  if (!scale_per_row) {
    BroadcastBinary<T, T, T>(y, ctx.inputs[1], y, 1, [](T a, T b) { return a * b; });
  }
  if (has_bias && !bias_per_row) {
    BroadcastBinary<T, T, T>(y, ctx.inputs[2], y, 1, [](T a, T b) { return a + b; });
  }
}

Status RunLayerNorm(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(int64_t axis,
                           NormalizeAxis(ctx.node, ctx.attributes().GetInt("axis", -1), x.rank()));
  const bool stash_double = StashDType(ctx.attributes()) == DType::kFloat64;
  return DispatchFloat(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (stash_double)
      LayerNormKernel<T, double>(ctx, axis);
    else
      LayerNormKernel<T, float>(ctx, axis);
  });
}

// ---- MeanVarianceNormalization (opset >= 9) ----------------------------------------------
// Y = (X - mean) / (sqrt(var) + 1e-9) with the statistics over `axes` (default [0, 2, 3]);
// the 1e-9 is added to the standard deviation, as in the op's ONNX function body.

constexpr double kMvnEpsilon = 1e-9;

StatusOr<std::vector<bool>> MvnAxes(const Node& node, int64_t rank) {
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t axis : node.attributes.GetInts("axes", {0, 2, 3})) {
    COLLAGE_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(node, axis, rank));
    reduced[static_cast<size_t>(a)] = true;
  }
  return reduced;
}

Status InferMvn(InferContext& ctx) {
  if (ctx.opset < 9) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "the opset {} form (across_channels, normalize_variance) is not supported",
                   ctx.opset);
  }
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kFloat));
  COLLAGE_RETURN_IF_ERROR(
      MvnAxes(ctx.node, static_cast<int64_t>(ctx.input_type(0).shape.size())).status());
  ctx.output_types[0] = ctx.input_type(0);
  return Status::Ok();
}

Status RunMvn(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(std::vector<bool> reduced, MvnAxes(ctx.node, x.rank()));
  const ReducePlan plan(x.shape(), reduced);
  return DispatchFloat(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    T* py = ctx.outputs[0].data_as<T>();
    const auto n = static_cast<size_t>(plan.num_outputs());
    const auto count = static_cast<double>(plan.reduce_count());
    // Pass 1: sums → means. Pass 2: squared deviations → 1 / (std + eps). Pass 3: Y.
    std::vector<double> mean(n, 0.0), scale(n, 0.0);
    plan.ForEachRun(1, [&](int64_t in, int64_t out, int64_t len, bool inner_reduced) {
      for (int64_t i = 0; i < len; ++i)
        mean[static_cast<size_t>(inner_reduced ? out : out + i)] += px[in + i];
    });
    for (double& m : mean) m /= count;
    plan.ForEachRun(2, [&](int64_t in, int64_t out, int64_t len, bool inner_reduced) {
      for (int64_t i = 0; i < len; ++i) {
        const auto o = static_cast<size_t>(inner_reduced ? out : out + i);
        const double d = px[in + i] - mean[o];
        scale[o] += d * d;
      }
    });
    for (double& v : scale) v = 1.0 / (std::sqrt(v / count) + kMvnEpsilon);
    plan.ForEachRun(2, [&](int64_t in, int64_t out, int64_t len, bool inner_reduced) {
      for (int64_t i = 0; i < len; ++i) {
        const auto o = static_cast<size_t>(inner_reduced ? out : out + i);
        py[in + i] = static_cast<T>((px[in + i] - mean[o]) * scale[o]);
      }
    });
  });
}

// ---- LRN -------------------------------------------------------------------------------------
// Y[n,c,...] = X[n,c,...] / (bias + alpha / size * sum of X[n,i,...]^2)^beta over the channel
// window i in [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C). A sliding
// window across channels: neither elementwise nor a reduction of whole axes, so kOpaque.

Status InferLrn(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kFloat));
  if (ctx.attributes().GetInt("size", 0) <= 0) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "size must be a positive integer");
  }
  if (ctx.input_type(0).shape.size() < 3) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "X must have rank >= 3, got shape {}",
                   ShapeToString(ctx.input_type(0).shape));
  }
  ctx.output_types[0] = ctx.input_type(0);
  return Status::Ok();
}

Status RunLrn(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const Attributes& attrs = ctx.attributes();
  const int64_t size = attrs.GetInt("size", 1);
  const double alpha_over_size = static_cast<double>(attrs.GetFloat("alpha", 1e-4f)) / size;
  const double beta = attrs.GetFloat("beta", 0.75f);
  const double bias = attrs.GetFloat("bias", 1.0f);
  const int64_t before = (size - 1) / 2;
  const int64_t after = size - 1 - before;        // ceil((size - 1) / 2)
  const AxisSplit s = SplitAtAxis(x.shape(), 1);  // [N, C, spatial]
  return DispatchFloat(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    T* py = ctx.outputs[0].data_as<T>();
    // The work per channel: a window clipped to the channels (size itself is an unbounded
    // attribute, and size * inner overflowed for a huge one).
    const int64_t window = std::min(size, s.axis);
    ParallelFor(s.outer * s.axis, (window + 20) * s.inner, [&](int64_t begin, int64_t end) {
      std::vector<double> square_sum(static_cast<size_t>(s.inner));
      for (int64_t nc = begin; nc < end; ++nc) {
        const int64_t n = nc / s.axis, c = nc % s.axis;
        std::fill(square_sum.begin(), square_sum.end(), 0.0);
        const int64_t lo = std::max<int64_t>(0, c - before);
        const int64_t hi = std::min<int64_t>(s.axis - 1, c + after);
        for (int64_t i = lo; i <= hi; ++i) {
          const T* in = px + (n * s.axis + i) * s.inner;
          for (int64_t k = 0; k < s.inner; ++k) {
            square_sum[static_cast<size_t>(k)] += static_cast<double>(in[k]) * in[k];
          }
        }
        const T* in = px + nc * s.inner;
        T* out = py + nc * s.inner;
        for (int64_t k = 0; k < s.inner; ++k) {
          out[k] = static_cast<T>(
              in[k] / std::pow(bias + alpha_over_size * square_sum[static_cast<size_t>(k)], beta));
        }
      }
    });
  });
}

}  // namespace

void RegisterNormalizationOps(OpRegistry& registry) {
  registry.Register(OpDef{"BatchNormalization", "", OpKind::kBroadcast, 5, 5, 1, 5, InferBatchNorm,
                          RunBatchNorm});
  registry.Register(OpDef{"InstanceNormalization", "", OpKind::kReduction, 3, 3, 1, 1,
                          InferInstanceNorm, RunInstanceNorm});
  registry.Register(OpDef{"LayerNormalization", "", OpKind::kReduction, 2, 3, 1, 3, InferLayerNorm,
                          RunLayerNorm});
  registry.Register(OpDef{"GroupNormalization", "", OpKind::kReduction, 3, 3, 1, 1, InferGroupNorm,
                          RunGroupNorm});
  registry.Register(
      OpDef{"MeanVarianceNormalization", "", OpKind::kReduction, 1, 1, 1, 1, InferMvn, RunMvn});
  registry.Register(OpDef{"LRN", "", OpKind::kOpaque, 1, 1, 1, 1, InferLrn, RunLrn});
}

}  // namespace collage
