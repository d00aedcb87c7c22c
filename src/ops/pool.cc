// Pooling: MaxPool (with its optional Indices output), AveragePool, GlobalMaxPool and
// GlobalAveragePool, over 1-D, 2-D and 3-D spatial dims.
//
// Kind: kOutEWiseFusable for all four, TVM's convention (relay registers max_pool*d,
// avg_pool*d and the global pools as OUT_ELEMWISE_FUSABLE): a pool is a windowed reduction
// whose output can take an elementwise epilogue (pool + relu, pool + add), but it is neither
// injective nor a whole-axis reduction that later ops could be fused into.
//
// The windowed kernels view every input as 3-D (a 2-D pool is a 3-D pool over a depth of 1),
// which keeps one loop nest for all ranks.
#include <omp.h>

#include <algorithm>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "collage/sdk/op_params.h"
#include "ops/op_helpers.h"
#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

constexpr size_t kMaxSpatialRank = 3;
// Below this many window reads a pool stays single-threaded.
constexpr int64_t kParallelMinWork = 1 << 16;

struct PoolGeometry {
  int64_t batch = 0;
  int64_t channels = 0;
  // Spatial quantities, left-padded to kMaxSpatialRank dims (size 1, kernel 1, stride 1).
  std::vector<int64_t> in;
  std::vector<int64_t> out;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  Shape out_shape;  // N x C x the real output spatial dims
  bool count_include_pad = false;  // AveragePool
  bool column_major = false;       // MaxPool's Indices (storage_order 1)
};

// The shared reader's geometry, left-padded to kMaxSpatialRank dims for the kernels.
StatusOr<PoolGeometry> ResolvePool(const Node& node, const Shape& x) {
  COLLAGE_ASSIGN_OR_RETURN(const PoolParams p, ReadPoolParams(node, x));
  const size_t nd = p.spatial_rank;
  if (nd > kMaxSpatialRank) {
    return OpError(node, StatusCode::kUnsupported,
                   "{} spatial dims are not supported (1 to {} are)", nd, kMaxSpatialRank);
  }
  PoolGeometry g;
  g.batch = p.batch;
  g.channels = p.channels;
  g.out_shape = p.output_shape();
  g.count_include_pad = p.count_include_pad;
  g.column_major = p.column_major_indices;
  const size_t lead = kMaxSpatialRank - nd;
  g.in.assign(kMaxSpatialRank, 1);
  g.out.assign(kMaxSpatialRank, 1);
  g.kernel.assign(kMaxSpatialRank, 1);
  g.strides.assign(kMaxSpatialRank, 1);
  g.dilations.assign(kMaxSpatialRank, 1);
  g.pads_begin.assign(kMaxSpatialRank, 0);
  g.pads_end.assign(kMaxSpatialRank, 0);
  for (size_t d = 0; d < nd; ++d) {
    const size_t e = lead + d;
    g.in[e] = p.in_spatial[d];
    g.out[e] = p.out_spatial[d];
    g.kernel[e] = p.kernel[d];
    g.strides[e] = p.strides[d];
    g.dilations[e] = p.dilations[d];
    g.pads_begin[e] = p.pads_begin[d];
    g.pads_end[e] = p.pads_end[d];
  }
  return g;
}

// The kernel indices [lo, hi) of one dim whose input coordinate start + k * dilation is inside
// [lower, upper).
std::pair<int64_t, int64_t> KernelRange(int64_t start, int64_t dilation, int64_t kernel,
                                        int64_t lower, int64_t upper) {
  const int64_t lo = std::clamp<int64_t>(CeilDiv(lower - start, dilation), 0, kernel);
  const int64_t hi = std::clamp<int64_t>(FloorDiv(upper - 1 - start, dilation) + 1, lo, kernel);
  return {lo, hi};
}

// One output position's window along one dim: the input coordinate of kernel index 0, the
// kernel indices [lo, hi) that land inside the input, and how many land inside the padded
// input (AveragePool's count_include_pad divisor; ceil_mode can reach past the end padding).
struct Window {
  int64_t start = 0;
  int64_t lo = 0;
  int64_t hi = 0;
  int64_t padded_count = 0;
};

std::vector<Window> WindowsAlong(const PoolGeometry& g, size_t d) {
  std::vector<Window> windows(static_cast<size_t>(g.out[d]));
  for (int64_t o = 0; o < g.out[d]; ++o) {
    Window& w = windows[static_cast<size_t>(o)];
    w.start = o * g.strides[d] - g.pads_begin[d];
    std::tie(w.lo, w.hi) = KernelRange(w.start, g.dilations[d], g.kernel[d], 0, g.in[d]);
    const auto [plo, phi] = KernelRange(w.start, g.dilations[d], g.kernel[d], -g.pads_begin[d],
                                        g.in[d] + g.pads_end[d]);
    w.padded_count = phi - plo;
  }
  return windows;
}

// Calls window(plane, out_index, wd, wh, ww) for every output element, with its windows along
// the three dims, in parallel over the N x C planes. The windows are computed once per call,
// so the per-element work is only the loads of the window itself.
template <typename F>
void ForEachWindow(const PoolGeometry& g, F&& window) {
  const std::vector<Window> wins[3] = {WindowsAlong(g, 0), WindowsAlong(g, 1), WindowsAlong(g, 2)};
  const int64_t planes = g.batch * g.channels;
  const int64_t out_size = g.out[0] * g.out[1] * g.out[2];
  const int64_t work = planes * out_size * g.kernel[0] * g.kernel[1] * g.kernel[2];
  const bool parallel = !omp_in_parallel() && work >= kParallelMinWork;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t plane = 0; plane < planes; ++plane) {
    int64_t o = plane * out_size;
    for (const Window& wd : wins[0]) {
      for (const Window& wh : wins[1]) {
        for (const Window& ww : wins[2]) window(plane, o++, wd, wh, ww);
      }
    }
  }
}

// The output columns [lo, hi) of a row for which kernel column kw lands inside the input:
// input column = ow * stride + offset.
struct ColumnRun {
  int64_t offset = 0;
  int64_t lo = 0;
  int64_t hi = 0;
};

// Pools one output row (all spatial dims but the last fixed) at a time: every kernel position
// inside the input folds its shifted input row into the whole output row with
// y = combine(y, x), a plain strided loop that GCC vectorises, instead of visiting each
// window separately. finish(row, wd, wh, windows along w) then completes the row (the
// average's division). Used by AveragePool and by MaxPool when Indices are not wanted.
template <typename T, typename Combine, typename Finish>
void PoolByRows(const PoolGeometry& g, const T* x, T* y, T init, Combine combine, Finish finish) {
  const std::vector<Window> wins[3] = {WindowsAlong(g, 0), WindowsAlong(g, 1), WindowsAlong(g, 2)};
  const int64_t out_w = g.out[2];
  const int64_t stride = g.strides[2];
  std::vector<ColumnRun> runs(static_cast<size_t>(g.kernel[2]));
  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
    ColumnRun& r = runs[static_cast<size_t>(kw)];
    r.offset = kw * g.dilations[2] - g.pads_begin[2];
    r.lo = std::clamp<int64_t>(CeilDiv(-r.offset, stride), 0, out_w);
    r.hi = std::clamp<int64_t>(FloorDiv(g.in[2] - 1 - r.offset, stride) + 1, r.lo, out_w);
  }
  const int64_t planes = g.batch * g.channels;
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_size = g.out[0] * g.out[1] * out_w;
  const int64_t work = planes * out_size * g.kernel[0] * g.kernel[1] * g.kernel[2];
  const bool parallel = !omp_in_parallel() && work >= kParallelMinWork;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* xp = x + plane * in_size;
    T* yrow = y + plane * out_size;
    for (const Window& wd : wins[0]) {
      for (const Window& wh : wins[1]) {
        std::fill(yrow, yrow + out_w, init);
        for (int64_t kd = wd.lo; kd < wd.hi; ++kd) {
          const int64_t id = wd.start + kd * g.dilations[0];
          for (int64_t kh = wh.lo; kh < wh.hi; ++kh) {
            const int64_t ih = wh.start + kh * g.dilations[1];
            const T* xrow = xp + (id * g.in[1] + ih) * g.in[2];
            for (const ColumnRun& r : runs) {
              if (stride == 1) {
                for (int64_t ow = r.lo; ow < r.hi; ++ow) {
                  yrow[ow] = combine(yrow[ow], xrow[ow + r.offset]);
                }
              } else {
                for (int64_t ow = r.lo; ow < r.hi; ++ow) {
                  yrow[ow] = combine(yrow[ow], xrow[ow * stride + r.offset]);
                }
              }
            }
          }
        }
        finish(yrow, wd, wh, wins[2]);
        yrow += out_w;
      }
    }
  }
}

// Where a max starts: -inf for floats (a window of -inf values gives -inf), the lowest value
// for integers.
template <typename T>
constexpr T MaxIdentity() {
  if constexpr (std::numeric_limits<T>::has_infinity) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

// ---------------------------------------------------------------------------------------------
// MaxPool

Status InferMaxPool(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(
      RequireDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kUInt8}));
  COLLAGE_ASSIGN_OR_RETURN(PoolGeometry g, ResolvePool(ctx.node, ctx.input_type(0).shape));
  ctx.output_types[0] = TensorType{ctx.input_type(0).dtype, g.out_shape};
  if (ctx.output_types.size() > 1) ctx.output_types[1] = TensorType{DType::kInt64, g.out_shape};
  return Status::Ok();
}

// The running max of a window, NaN propagating as ONNX (numpy's max) wants: a NaN replaces
// the max and then sticks, since no v > NaN. Branch-free (compare, or, blend), so the row
// loop still vectorises; v != v is false for integers and folds away.
template <typename T>
T MaxPropagatingNaN(T acc, T v) {
  return (v > acc || v != v) ? v : acc;
}

// The max of the window's values inside the input (NaN when one of them is NaN; -inf when the
// window has no value, which only exotic pads allow). Indices are flat positions in X: plane *
// spatial size + the spatial position, row-major (storage_order 0) or column-major (1) over
// the spatial dims, of the first maximum (or first NaN, as numpy's argmax) in row-major
// window order; -1 for a window wholly in the padding.
template <typename T>
void MaxPoolTyped(const PoolGeometry& g, bool column_major, const T* x, T* y, int64_t* indices) {
  if (indices == nullptr) {
    // A lambda, not the function's address: the combine must inline into the row loop.
    PoolByRows<T>(
        g, x, y, MaxIdentity<T>(), [](T acc, T v) { return MaxPropagatingNaN(acc, v); },
        [](T*, const Window&, const Window&, const std::vector<Window>&) {});
    return;
  }
  const int64_t in_size = g.in[0] * g.in[1] * g.in[2];
  ForEachWindow(
      g, [&](int64_t plane, int64_t o, const Window& wd, const Window& wh, const Window& ww) {
        const T* xp = x + plane * in_size;
        T best = MaxIdentity<T>();
        int64_t best_pos[3] = {-1, 0, 0};
        for (int64_t kd = wd.lo; kd < wd.hi; ++kd) {
          const int64_t id = wd.start + kd * g.dilations[0];
          for (int64_t kh = wh.lo; kh < wh.hi; ++kh) {
            const int64_t ih = wh.start + kh * g.dilations[1];
            const T* row = xp + (id * g.in[1] + ih) * g.in[2];
            for (int64_t kw = ww.lo; kw < ww.hi; ++kw) {
              const int64_t iw = ww.start + kw * g.dilations[2];
              const T v = row[iw];
              // The first value taken as it is (NaN or -inf included); then a larger one, or
              // the first NaN, which nothing replaces.
              if (best_pos[0] < 0 || v > best || (v != v && best == best)) {
                best = v;
                best_pos[0] = id;
                best_pos[1] = ih;
                best_pos[2] = iw;
              }
            }
          }
        }
        y[o] = best;
        if (best_pos[0] < 0) {
          indices[o] = -1;
          return;
        }
        const int64_t pos = column_major
                                ? best_pos[0] + g.in[0] * (best_pos[1] + g.in[1] * best_pos[2])
                                : (best_pos[0] * g.in[1] + best_pos[1]) * g.in[2] + best_pos[2];
        indices[o] = plane * in_size + pos;
      });
}

Status RunMaxPool(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(PoolGeometry g, ResolvePool(ctx.node, x.shape()));
  const bool column_major = g.column_major;
  int64_t* indices = nullptr;
  if (ctx.outputs.size() > 1 && !ctx.outputs[1].empty()) {
    indices = ctx.outputs[1].data_as<int64_t>();
  }
  Tensor& y = ctx.outputs[0];
  switch (x.dtype()) {
    case DType::kFloat32:
      MaxPoolTyped(g, column_major, x.data_as<float>(), y.data_as<float>(), indices);
      return Status::Ok();
    case DType::kFloat64:
      MaxPoolTyped(g, column_major, x.data_as<double>(), y.data_as<double>(), indices);
      return Status::Ok();
    case DType::kInt8:
      MaxPoolTyped(g, column_major, x.data_as<int8_t>(), y.data_as<int8_t>(), indices);
      return Status::Ok();
    case DType::kUInt8:
      MaxPoolTyped(g, column_major, x.data_as<uint8_t>(), y.data_as<uint8_t>(), indices);
      return Status::Ok();
    default:
      return OpError(ctx.node, StatusCode::kUnsupported, "dtype {} is not supported",
                     DTypeName(x.dtype()));
  }
}

// ---------------------------------------------------------------------------------------------
// AveragePool

Status InferAveragePool(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  COLLAGE_ASSIGN_OR_RETURN(PoolGeometry g, ResolvePool(ctx.node, ctx.input_type(0).shape));
  ctx.output_types[0] = TensorType{ctx.input_type(0).dtype, g.out_shape};
  return Status::Ok();
}

// The divisor is the number of window positions inside the input (count_include_pad = 0), or
// inside the padded input (count_include_pad = 1): positions past the end padding, which
// ceil_mode can create, never count. A window wholly in the padding gives 0 / 0 = NaN.
template <typename T>
void AveragePoolTyped(const PoolGeometry& g, bool count_include_pad, const T* x, T* y) {
  PoolByRows<T>(
      g, x, y, T{0}, [](T acc, T v) { return acc + v; },
      [&](T* row, const Window& wd, const Window& wh, const std::vector<Window>& ws) {
        const int64_t outer = count_include_pad ? wd.padded_count * wh.padded_count
                                                : (wd.hi - wd.lo) * (wh.hi - wh.lo);
        for (size_t ow = 0; ow < ws.size(); ++ow) {
          const int64_t inner = count_include_pad ? ws[ow].padded_count : ws[ow].hi - ws[ow].lo;
          row[ow] /= static_cast<T>(outer * inner);
        }
      });
}

Status RunAveragePool(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(PoolGeometry g, ResolvePool(ctx.node, x.shape()));
  return DispatchFloat(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    AveragePoolTyped<T>(g, g.count_include_pad, x.data_as<T>(), ctx.outputs[0].data_as<T>());
  });
}

// ---------------------------------------------------------------------------------------------
// GlobalMaxPool, GlobalAveragePool: one value per N x C plane, any spatial rank.

Status InferGlobalPool(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  COLLAGE_ASSIGN_OR_RETURN(const PoolParams p, ReadPoolParams(ctx.node, ctx.input_type(0).shape));
  ctx.output_types[0] = TensorType{ctx.input_type(0).dtype, p.output_shape()};
  return Status::Ok();
}

template <typename T>
void GlobalPoolTyped(bool is_max, int64_t planes, int64_t plane_size, const T* x, T* y) {
  const bool parallel = !omp_in_parallel() && planes * plane_size >= kParallelMinWork;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t p = 0; p < planes; ++p) {
    const T* xp = x + p * plane_size;
    if (is_max) {
      // NaN anywhere in the plane gives NaN, wherever it sits (as MaxPool).
      T best = plane_size > 0 ? xp[0] : std::numeric_limits<T>::lowest();
      for (int64_t i = 1; i < plane_size; ++i) best = MaxPropagatingNaN(best, xp[i]);
      y[p] = best;
    } else {
      T sum = 0;
      for (int64_t i = 0; i < plane_size; ++i) sum += xp[i];
      y[p] = sum / static_cast<T>(plane_size);
    }
  }
}

Status RunGlobalPool(KernelContext& ctx, bool is_max) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_RETURN_IF_ERROR(ReadPoolParams(ctx.node, x.shape()).status());
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t plane_size = planes == 0 ? 0 : x.num_elements() / planes;
  return DispatchFloat(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    GlobalPoolTyped<T>(is_max, planes, plane_size, x.data_as<T>(), ctx.outputs[0].data_as<T>());
  });
}

OpDef PoolDef(std::string op_type, InferFn infer, KernelFn run, int max_outputs = 1) {
  return OpDef{.op_type = std::move(op_type),
               .domain = "",
               .kind = OpKind::kOutEWiseFusable,
               .min_inputs = 1,
               .max_inputs = 1,
               .min_outputs = 1,
               .max_outputs = max_outputs,
               .infer = std::move(infer),
               .run = std::move(run)};
}

}  // namespace

void RegisterPoolOps(OpRegistry& registry) {
  registry.Register(PoolDef("MaxPool", InferMaxPool, RunMaxPool, /*max_outputs=*/2));
  registry.Register(PoolDef("AveragePool", InferAveragePool, RunAveragePool));
  registry.Register(PoolDef("GlobalMaxPool", InferGlobalPool,
                            [](KernelContext& ctx) { return RunGlobalPool(ctx, true); }));
  registry.Register(PoolDef("GlobalAveragePool", InferGlobalPool,
                            [](KernelContext& ctx) { return RunGlobalPool(ctx, false); }));
}

}  // namespace collage
