// Ops that sample an image at computed, fractional positions: GridSample (4-D, the positions
// come from a grid input) and RoiAlign (the positions are a regular grid inside each region of
// interest). Both interpolate bilinearly between pixels; GridSample also does nearest and
// bicubic. Coordinates and weights are computed in double; results are stored in the input
// dtype (float32 or float64).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

Status RequireRank(const InferContext& ctx, size_t input, const char* what, size_t rank) {
  const Shape& shape = ctx.input_type(input).shape;
  if (shape.size() == rank) return Status::Ok();
  return OpError(ctx.node, StatusCode::kInvalidModel, "{} must have rank {}, has shape {}", what,
                 rank, ShapeToString(shape));
}

// Interpolation reads pixels of a plane; one with no pixel cannot give a value.
Status RequireNonEmptyPlane(const InferContext& ctx, const TensorType& out) {
  const Shape& x = ctx.input_type(0).shape;
  if (out.num_elements() == 0 || (x[2] > 0 && x[3] > 0)) return Status::Ok();
  return OpError(ctx.node, StatusCode::kInvalidModel,
                 "input X of shape {} has an empty image plane to sample from", ShapeToString(x));
}

// ---- GridSample ----

enum class GridMode { kBilinear, kNearest, kBicubic };
enum class GridPadding { kZeros, kBorder, kReflection };

struct GridSampleParams {
  GridMode mode = GridMode::kBilinear;
  GridPadding padding = GridPadding::kZeros;
  bool align_corners = false;
};

StatusOr<GridSampleParams> ReadGridSampleParams(const Node& node, int64_t opset) {
  GridSampleParams p;
  // Opset 20 renamed bilinear/bicubic to linear/cubic (and made them N-D); each opset only
  // knows its own names.
  const bool new_names = opset >= 20;
  const std::string mode = node.attributes.GetString("mode", new_names ? "linear" : "bilinear");
  if (mode == (new_names ? "linear" : "bilinear")) {
    p.mode = GridMode::kBilinear;
  } else if (mode == "nearest") {
    p.mode = GridMode::kNearest;
  } else if (mode == (new_names ? "cubic" : "bicubic")) {
    p.mode = GridMode::kBicubic;
  } else {
    return OpError(node, StatusCode::kInvalidModel, "mode '{}' is not one of {}", mode,
                   new_names ? "linear, nearest, cubic" : "bilinear, nearest, bicubic");
  }
  const std::string padding = node.attributes.GetString("padding_mode", "zeros");
  if (padding == "zeros") {
    p.padding = GridPadding::kZeros;
  } else if (padding == "border") {
    p.padding = GridPadding::kBorder;
  } else if (padding == "reflection") {
    p.padding = GridPadding::kReflection;
  } else {
    return OpError(node, StatusCode::kInvalidModel,
                   "padding_mode '{}' is not one of zeros, border, reflection", padding);
  }
  p.align_corners = node.attributes.GetInt("align_corners", 0) != 0;
  return p;
}

Status InferGridSample(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 1, {DType::kFloat32, DType::kFloat64}));
  COLLAGE_RETURN_IF_ERROR(ReadGridSampleParams(ctx.node, ctx.opset).status());
  const Shape& x = ctx.input_type(0).shape;
  const Shape& grid = ctx.input_type(1).shape;
  if (x.size() != 4) {
    // Opset 20 allows N-D volumes; only images are implemented.
    const StatusCode code =
        ctx.opset >= 20 && x.size() > 2 ? StatusCode::kUnsupported : StatusCode::kInvalidModel;
    return OpError(ctx.node, code, "input X must have rank 4 (N, C, H, W), has shape {}",
                   ShapeToString(x));
  }
  if (grid.size() != 4 || grid[0] != x[0] || grid[3] != 2) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "grid of shape {} is not (N, H_out, W_out, 2) for input X of shape {}",
                   ShapeToString(grid), ShapeToString(x));
  }
  ctx.output_types[0] = {ctx.input_type(0).dtype, {x[0], x[1], grid[1], grid[2]}};
  return RequireNonEmptyPlane(ctx, ctx.output_types[0]);
}

// Maps a normalized grid coordinate in [-1, 1] onto pixel coordinates of an axis of `size`:
// -1 and 1 are the centres of the edge pixels with align_corners, their outer edges without.
double Denormalize(double n, int64_t size, bool align_corners) {
  const double s = static_cast<double>(size);
  return align_corners ? (n + 1) / 2 * (s - 1) : ((n + 1) * s - 1) / 2;
}

// Reflects x at lo and hi, repeatedly, until it lies in [lo, hi].
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;  // one pixel with align_corners: every position is that pixel
  if (x >= lo && x <= hi) return x;
  const double dx = x < lo ? lo - x : x - hi;
  const double flips = std::floor(dx / range);
  const double r = dx - flips * range;
  // An even number of flips leaves x measured from the edge it crossed, an odd from the other.
  const bool even = std::fmod(flips, 2.0) == 0;
  return (x < lo) == even ? lo + r : hi - r;
}

// An axis of the image, with the mirrors of reflection padding: the centres of the edge pixels
// with align_corners, their outer edges without.
struct AxisBounds {
  int64_t size;
  double lo, hi;
};

AxisBounds BoundsOf(int64_t size, bool align_corners) {
  return align_corners ? AxisBounds{size, 0.0, static_cast<double>(size - 1)}
                       : AxisBounds{size, -0.5, static_cast<double>(size) - 0.5};
}

// The pixel index that tap `i` of an axis reads, or -1 for a zero (zeros padding). Padding
// applies to each pixel a stencil reads, as in PyTorch and ONNX Runtime. For nearest and
// bilinear that equals padding the coordinate first (the ONNX reference's order); for bicubic
// with border padding it does not, and this gives PyTorch's result.
int64_t TapIndex(int64_t i, const AxisBounds& b, GridPadding padding) {
  if (i >= 0 && i < b.size) return i;
  switch (padding) {
    case GridPadding::kZeros: return -1;
    case GridPadding::kBorder: return std::clamp<int64_t>(i, 0, b.size - 1);
    case GridPadding::kReflection: {
      const double r = Reflect(static_cast<double>(i), b.lo, b.hi);
      return std::clamp<int64_t>(static_cast<int64_t>(r), 0, b.size - 1);
    }
  }
  return -1;
}

// Keys' cubic convolution weights (a = -0.75, as PyTorch) of the taps at floor(x) - 1 ..
// floor(x) + 2, for t = x - floor(x).
std::array<double, 4> CubicWeights(double t) {
  constexpr double a = -0.75;
  auto near = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };       // |d| <= 1
  auto far = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// The pixels one output position reads and their weights, shared by all channels.
struct Taps {
  int count = 0;
  std::array<int64_t, 16> offset{};  // into the H x W plane; -1 reads zero
  std::array<double, 16> weight{};
};

// Weights along one axis for the interpolation mode: `first` is the lowest tap's index.
struct AxisStencil {
  int64_t first = 0;
  int count = 0;
  std::array<double, 4> weight{};
};

AxisStencil StencilOf(GridMode mode, double x) {
  AxisStencil s;
  const double f = std::floor(x);
  switch (mode) {
    case GridMode::kNearest:
      s.first = static_cast<int64_t>(x);  // x is already rounded
      s.count = 1;
      s.weight[0] = 1;
      break;
    case GridMode::kBilinear:
      s.first = static_cast<int64_t>(f);
      s.count = 2;
      s.weight = {1 - (x - f), x - f, 0, 0};
      break;
    case GridMode::kBicubic:
      s.first = static_cast<int64_t>(f) - 1;
      s.count = 4;
      s.weight = CubicWeights(x - f);
      break;
  }
  return s;
}

// The taps for the sample at pixel coordinates (x, y); false when a coordinate is NaN.
bool TapsAt(const GridSampleParams& p, const AxisBounds& bx, const AxisBounds& by, double x,
            double y, Taps& taps) {
  if (p.mode == GridMode::kNearest) {
    // PyTorch's 2-D nearest rounds half to even (nearbyint).
    x = std::nearbyint(x);
    y = std::nearbyint(y);
  }
  if (std::isnan(x) || std::isnan(y)) return false;
  // The clamp keeps the integer conversions defined. That far outside any image, zeros and
  // border padding give the same result unclamped; reflection has no precision left anyway.
  constexpr double kFar = 0x1p40;
  x = std::clamp(x, -kFar, kFar);
  y = std::clamp(y, -kFar, kFar);
  const AxisStencil sx = StencilOf(p.mode, x);
  const AxisStencil sy = StencilOf(p.mode, y);
  taps.count = 0;
  for (int i = 0; i < sy.count; ++i) {
    const int64_t row = TapIndex(sy.first + i, by, p.padding);
    for (int j = 0; j < sx.count; ++j) {
      const int64_t col = TapIndex(sx.first + j, bx, p.padding);
      taps.offset[static_cast<size_t>(taps.count)] = row < 0 || col < 0 ? -1 : row * bx.size + col;
      taps.weight[static_cast<size_t>(taps.count)] =
          sy.weight[static_cast<size_t>(i)] * sx.weight[static_cast<size_t>(j)];
      ++taps.count;
    }
  }
  return true;
}

template <typename T>
void RunGridSampleTyped(const GridSampleParams& p, const Tensor& x_tensor,
                        const std::vector<double>& grid, Tensor& out) {
  const int64_t n_batch = x_tensor.dim(0), channels = x_tensor.dim(1);
  const int64_t h = x_tensor.dim(2), w = x_tensor.dim(3);
  const int64_t points = out.dim(2) * out.dim(3);  // output positions per plane
  const AxisBounds bx = BoundsOf(w, p.align_corners);
  const AxisBounds by = BoundsOf(h, p.align_corners);
  const T* x = x_tensor.data_as<T>();
  T* y = out.data_as<T>();
  Taps taps;
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t q = 0; q < points; ++q) {
      // grid[n, q] holds (x, y): width first.
      const double* g = grid.data() + 2 * (n * points + q);
      const bool ok = TapsAt(p, bx, by, Denormalize(g[0], w, p.align_corners),
                             Denormalize(g[1], h, p.align_corners), taps);
      for (int64_t c = 0; c < channels; ++c) {
        const T* plane = x + (n * channels + c) * h * w;
        double v = ok ? 0.0 : std::numeric_limits<double>::quiet_NaN();
        for (int t = 0; ok && t < taps.count; ++t) {
          const int64_t o = taps.offset[static_cast<size_t>(t)];
          if (o >= 0) v += taps.weight[static_cast<size_t>(t)] * static_cast<double>(plane[o]);
        }
        y[(n * channels + c) * points + q] = static_cast<T>(v);
      }
    }
  }
}

Status RunGridSample(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(GridSampleParams p, ReadGridSampleParams(ctx.node, ctx.opset));
  const std::vector<double> grid = ctx.inputs[1].ToVector<double>();
  return DispatchFloat(ctx.node, ctx.inputs[0].dtype(), [&](auto zero) {
    RunGridSampleTyped<decltype(zero)>(p, ctx.inputs[0], grid, ctx.outputs[0]);
  });
}

// ---- RoiAlign ----

struct RoiAlignParams {
  bool max_mode = false;
  int64_t out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;  // samples per bin and axis; 0: ceil(roi size / bins)
  double spatial_scale = 1.0;
  bool half_pixel = false;  // shift roi coordinates by -0.5 (opset 16's default)
};

StatusOr<RoiAlignParams> ReadRoiAlignParams(const Node& node, int64_t opset) {
  RoiAlignParams p;
  const Attributes& a = node.attributes;
  const std::string mode = a.GetString("mode", "avg");
  if (mode != "avg" && mode != "max") {
    return OpError(node, StatusCode::kInvalidModel, "mode '{}' is not one of avg, max", mode);
  }
  p.max_mode = mode == "max";
  p.out_h = a.GetInt("output_height", 1);
  p.out_w = a.GetInt("output_width", 1);
  p.sampling_ratio = a.GetInt("sampling_ratio", 0);
  if (p.out_h < 1 || p.out_w < 1 || p.out_h > kMaxGeometryValue || p.out_w > kMaxGeometryValue) {
    return OpError(node, StatusCode::kInvalidModel,
                   "output_height {} and output_width {} must be in [1, 2^31]", p.out_h, p.out_w);
  }
  if (p.sampling_ratio < 0 || p.sampling_ratio > kMaxGeometryValue) {
    return OpError(node, StatusCode::kInvalidModel, "sampling_ratio {} must be in [0, 2^31]",
                   p.sampling_ratio);
  }
  p.spatial_scale = a.GetFloat("spatial_scale", 1.0f);
  // Opset 10 had no attribute and behaved as output_half_pixel; opset 16 defaults to the
  // corrected half_pixel.
  const std::string ctm = opset >= 16 ? a.GetString("coordinate_transformation_mode", "half_pixel")
                                      : std::string("output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") {
    return OpError(node, StatusCode::kInvalidModel,
                   "coordinate_transformation_mode '{}' is not one of half_pixel, "
                   "output_half_pixel",
                   ctm);
  }
  p.half_pixel = ctm == "half_pixel";
  return p;
}

Status InferRoiAlign(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 1));
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 2, {DType::kInt64}));
  COLLAGE_ASSIGN_OR_RETURN(RoiAlignParams p, ReadRoiAlignParams(ctx.node, ctx.opset));
  COLLAGE_RETURN_IF_ERROR(RequireRank(ctx, 0, "input X", 4));
  const Shape& rois = ctx.input_type(1).shape;
  const Shape& indices = ctx.input_type(2).shape;
  if (rois.size() != 2 || rois[1] != 4 || indices.size() != 1 || indices[0] != rois[0]) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "rois of shape {} and batch_indices of shape {} are not (num_rois, 4) and "
                   "(num_rois)",
                   ShapeToString(rois), ShapeToString(indices));
  }
  ctx.output_types[0] = {ctx.input_type(0).dtype,
                         {rois[0], ctx.input_type(0).shape[1], p.out_h, p.out_w}};
  return RequireNonEmptyPlane(ctx, ctx.output_types[0]);
}

// One sample's four neighbouring pixels and their bilinear weights (all zero when the sample
// lies more than a pixel outside the plane).
struct BilinearTerms {
  std::array<int64_t, 4> offset{};
  std::array<double, 4> weight{};
};

BilinearTerms BilinearAt(double y, double x, int64_t h, int64_t w) {
  BilinearTerms b;
  // Written so that NaN counts as outside.
  if (!(y >= -1.0 && y <= static_cast<double>(h) && x >= -1.0 && x <= static_cast<double>(w))) {
    return b;
  }
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x);
  int64_t y1 = y0 + 1, x1 = x0 + 1;
  // At the last row or column the sample sits on it: both neighbours are that line.
  if (y0 >= h - 1) {
    y0 = y1 = h - 1;
    y = static_cast<double>(y0);
  }
  if (x0 >= w - 1) {
    x0 = x1 = w - 1;
    x = static_cast<double>(x0);
  }
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0);
  b.offset = {y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1};
  b.weight = {(1 - ly) * (1 - lx), (1 - ly) * lx, ly * (1 - lx), ly * lx};
  return b;
}

// What one sample contributes in one channel: avg mode sums the interpolated values. Max mode
// takes the largest weighted corner term, not the interpolated value: that is what ONNX
// Runtime and the ONNX reference compute, and what the official test data
// (test_roialign_mode_max) expects.
template <typename T>
double SampleValue(const BilinearTerms& b, const T* plane, bool max_mode) {
  double sum = 0, max = 0;
  for (size_t k = 0; k < 4; ++k) {
    const double term = b.weight[k] * static_cast<double>(plane[b.offset[k]]);
    sum += term;
    max = k == 0 ? term : std::max(max, term);
  }
  return max_mode ? max : sum;
}

// One roi scaled into pixel coordinates, cut into out_h x out_w bins of grid_h x grid_w
// samples each.
struct RoiGeometry {
  double start_y = 0, start_x = 0, bin_h = 0, bin_w = 0;
  int64_t grid_h = 0, grid_w = 0;
};

StatusOr<RoiGeometry> RoiGeometryOf(const Node& node, const RoiAlignParams& p, const double* roi,
                                    int64_t r) {
  const double offset = p.half_pixel ? 0.5 : 0.0;
  const double x0 = roi[0] * p.spatial_scale - offset, y0 = roi[1] * p.spatial_scale - offset;
  const double x1 = roi[2] * p.spatial_scale - offset, y1 = roi[3] * p.spatial_scale - offset;
  if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1)) {
    return OpError(node, StatusCode::kInvalidArgument,
                   "roi {} ({}, {}, {}, {}) scaled by {} is not finite", r, roi[0], roi[1], roi[2],
                   roi[3], p.spatial_scale);
  }
  double roi_w = x1 - x0, roi_h = y1 - y0;
  if (!p.half_pixel) {
    // The legacy mode forces malformed rois to 1x1.
    roi_w = std::max(roi_w, 1.0);
    roi_h = std::max(roi_h, 1.0);
  }
  RoiGeometry g;
  g.start_y = y0;
  g.start_x = x0;
  g.bin_h = roi_h / static_cast<double>(p.out_h);
  g.bin_w = roi_w / static_cast<double>(p.out_w);
  g.grid_h = g.grid_w = p.sampling_ratio;
  if (p.sampling_ratio == 0) {
    // Adaptive: about one sample per pixel. An empty or inverted roi gets no samples.
    const std::optional<int64_t> gh = CheckedToInt64(std::ceil(g.bin_h));
    const std::optional<int64_t> gw = CheckedToInt64(std::ceil(g.bin_w));
    if (!gh || !gw || !CheckedMul(std::max<int64_t>(*gh, 0), std::max<int64_t>(*gw, 0))) {
      return OpError(node, StatusCode::kInvalidArgument,
                     "roi {} ({}, {}, {}, {}) is too large to sample adaptively", r, roi[0], roi[1],
                     roi[2], roi[3]);
    }
    g.grid_h = std::max<int64_t>(*gh, 0);
    g.grid_w = std::max<int64_t>(*gw, 0);
  }
  return g;
}

template <typename T>
Status RunRoiAlignTyped(const Node& node, const RoiAlignParams& p, const Tensor& x_tensor,
                        const std::vector<double>& rois, const std::vector<int64_t>& batch,
                        Tensor& out) {
  const int64_t n_batch = x_tensor.dim(0), channels = x_tensor.dim(1);
  const int64_t h = x_tensor.dim(2), w = x_tensor.dim(3);
  const int64_t bins = p.out_h * p.out_w;
  const T* x = x_tensor.data_as<T>();
  T* y = out.data_as<T>();
  std::vector<double> acc(static_cast<size_t>(channels));
  for (size_t r = 0; r < batch.size(); ++r) {
    if (batch[r] < 0 || batch[r] >= n_batch) {
      return OpError(node, StatusCode::kInvalidArgument,
                     "batch_indices[{}] = {} is out of range for a batch of {}", r, batch[r],
                     n_batch);
    }
    COLLAGE_ASSIGN_OR_RETURN(RoiGeometry g,
                             RoiGeometryOf(node, p, &rois[4 * r], static_cast<int64_t>(r)));
    const T* image = x + batch[r] * channels * h * w;
    const int64_t samples = g.grid_h * g.grid_w;
    for (int64_t bin = 0; bin < bins; ++bin) {
      const double bin_y = g.start_y + static_cast<double>(bin / p.out_w) * g.bin_h;
      const double bin_x = g.start_x + static_cast<double>(bin % p.out_w) * g.bin_w;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t s = 0; s < samples; ++s) {
        const int64_t iy = s / g.grid_w, ix = s % g.grid_w;
        const BilinearTerms b = BilinearAt(
            bin_y + (static_cast<double>(iy) + 0.5) * g.bin_h / static_cast<double>(g.grid_h),
            bin_x + (static_cast<double>(ix) + 0.5) * g.bin_w / static_cast<double>(g.grid_w), h,
            w);
        for (int64_t c = 0; c < channels; ++c) {
          const double v = SampleValue(b, image + c * h * w, p.max_mode);
          double& a = acc[static_cast<size_t>(c)];
          a = !p.max_mode ? a + v : s == 0 ? v : std::max(a, v);
        }
      }
      const double count = p.max_mode ? 1.0 : static_cast<double>(std::max<int64_t>(samples, 1));
      for (int64_t c = 0; c < channels; ++c) {
        y[(static_cast<int64_t>(r) * channels + c) * bins + bin] =
            static_cast<T>(acc[static_cast<size_t>(c)] / count);
      }
    }
  }
  return Status::Ok();
}

Status RunRoiAlign(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(RoiAlignParams p, ReadRoiAlignParams(ctx.node, ctx.opset));
  const std::vector<double> rois = ctx.inputs[1].ToVector<double>();
  const std::vector<int64_t> batch = ctx.inputs[2].ToVector<int64_t>();
  Status status;
  COLLAGE_RETURN_IF_ERROR(DispatchFloat(ctx.node, ctx.inputs[0].dtype(), [&](auto zero) {
    status =
        RunRoiAlignTyped<decltype(zero)>(ctx.node, p, ctx.inputs[0], rois, batch, ctx.outputs[0]);
  }));
  return status;
}

}  // namespace

void RegisterSamplingOps(OpRegistry& registry) {
  // Data-dependent gathers with arithmetic: opaque to fusion, like Resize.
  registry.Register(MakeOpDef("GridSample", OpKind::kOpaque, 2, 2, InferGridSample, RunGridSample));
  registry.Register(MakeOpDef("RoiAlign", OpKind::kOpaque, 3, 3, InferRoiAlign, RunRoiAlign));
}

}  // namespace collage
