// Resize (opsets 10–19) and the deprecated Upsample (opsets 7–9): nearest, N-linear and
// cubic interpolation over any number of axes.
//
// Every axis is handled separably: for each output coordinate of an axis we precompute the
// input indices it reads and their weights ("taps"); an output element is the sum over the
// product of its per-axis taps. Coordinates follow the ONNX reference implementation: the
// scale an axis divides by is the given scale when `scales` is used, sizes/input when
// `sizes` is, and the resized length in align_corners / tf_crop_and_resize /
// pytorch_half_pixel is the possibly fractional scale · input length ("output_width" in the
// opset-19 spec), which the conformance cases depend on.
//
// Kind: TVM marks image.resize2d INJECTIVE because its compute can be inlined into a fused
// loop nest. collage's kInjective promises more (each output element reads ONE input
// element), which linear and cubic break, so Resize is kOpaque, as op_kind.h lists it.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "collage/sdk/op_params.h"
#include "collage/sdk/op_registry.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// Below this many multiply-adds the thread fork costs more than it saves.
constexpr int64_t kParallelMinWork = 1 << 16;

enum class Mode { kNearest, kLinear, kCubic };

struct ResizeAttrs {
  Mode mode = Mode::kNearest;
  std::string transform = "half_pixel";             // coordinate_transformation_mode
  std::string nearest_mode = "round_prefer_floor";  // "simple" for Upsample and Resize-10
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0.0;
  std::string keep_aspect_ratio_policy = "stretch";
};

// Upsample (any opset) and Resize-10 predate coordinate_transformation_mode: they map
// x_original = x_resized / scale and pick nearest pixels like onnxruntime does for them.
bool IsLegacy(const Node& node, int64_t opset) { return node.op_type == "Upsample" || opset < 11; }

StatusOr<ResizeAttrs> ReadAttrs(const Node& node, int64_t opset) {
  const Attributes& a = node.attributes;
  ResizeAttrs r;
  const std::string mode = a.GetString("mode", "nearest");
  if (mode == "nearest") {
    r.mode = Mode::kNearest;
  } else if (mode == "linear" || (IsLegacy(node, opset) && mode == "bilinear")) {
    r.mode = Mode::kLinear;
  } else if (mode == "cubic" && !IsLegacy(node, opset)) {
    r.mode = Mode::kCubic;
  } else {
    return OpError(node, StatusCode::kInvalidModel, "mode '{}' is not valid", mode);
  }
  if (IsLegacy(node, opset)) {
    r.transform = "asymmetric";
    r.nearest_mode = "simple";
    return r;
  }
  r.transform = a.GetString("coordinate_transformation_mode", "half_pixel");
  static const char* kTransforms[] = {"half_pixel",         "half_pixel_symmetric",
                                      "pytorch_half_pixel", "align_corners",
                                      "asymmetric",         "tf_crop_and_resize"};
  if (std::find(std::begin(kTransforms), std::end(kTransforms), r.transform) ==
      std::end(kTransforms)) {
    // tf_half_pixel_for_nn existed in opset 11 only and was dropped from the spec.
    return OpError(node, StatusCode::kUnsupported,
                   "coordinate_transformation_mode '{}' is not supported", r.transform);
  }
  if (r.transform == "half_pixel_symmetric" && opset < 19) {
    return OpError(node, StatusCode::kInvalidModel,
                   "coordinate_transformation_mode half_pixel_symmetric needs opset 19");
  }
  r.nearest_mode = a.GetString("nearest_mode", "round_prefer_floor");
  if (r.nearest_mode != "round_prefer_floor" && r.nearest_mode != "round_prefer_ceil" &&
      r.nearest_mode != "floor" && r.nearest_mode != "ceil") {
    return OpError(node, StatusCode::kInvalidModel, "nearest_mode '{}' is not valid",
                   r.nearest_mode);
  }
  r.cubic_a = a.GetFloat("cubic_coeff_a", -0.75f);
  r.exclude_outside = a.GetInt("exclude_outside", 0) != 0;
  r.antialias = a.GetInt("antialias", 0) != 0;
  r.extrapolation = a.GetFloat("extrapolation_value", 0.0f);
  r.keep_aspect_ratio_policy = a.GetString("keep_aspect_ratio_policy", "stretch");
  if (r.keep_aspect_ratio_policy != "stretch" && r.keep_aspect_ratio_policy != "not_larger" &&
      r.keep_aspect_ratio_policy != "not_smaller") {
    return OpError(node, StatusCode::kInvalidModel, "keep_aspect_ratio_policy '{}' is not valid",
                   r.keep_aspect_ratio_policy);
  }
  return r;
}

// Where the scales and sizes inputs sit in this op's signature (-1: not an input).
struct InputSlots {
  int roi = -1;
  int scales = -1;
  int sizes = -1;
};

InputSlots SlotsOf(const Node& node, int64_t opset) {
  if (node.op_type == "Upsample") return opset >= 9 ? InputSlots{-1, 1, -1} : InputSlots{};
  if (opset < 11) return InputSlots{-1, 1, -1};
  return InputSlots{1, 2, 3};
}

struct Geometry {
  Shape out_shape;
  std::vector<double> scales;  // per axis: what coordinate transforms divide by
  std::vector<int64_t> axes;   // the axes roi/scales/sizes refer to
};

// `scales` / `sizes`: the values of those inputs, nullopt when absent or empty.
StatusOr<Geometry> ResolveShapeAndScales(const Node& node, const ResizeAttrs& attrs, const Shape& x,
                                         std::optional<std::vector<double>> scales,
                                         std::optional<std::vector<int64_t>> sizes) {
  const int64_t rank = static_cast<int64_t>(x.size());
  Geometry g;
  g.out_shape = x;
  g.scales.assign(x.size(), 1.0);
  if (node.attributes.Has("axes")) {
    for (int64_t axis : node.attributes.GetInts("axes")) {
      COLLAGE_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(node, axis, rank));
      if (std::find(g.axes.begin(), g.axes.end(), a) != g.axes.end()) {
        return OpError(node, StatusCode::kInvalidModel, "axes repeats axis {}", axis);
      }
      g.axes.push_back(a);
    }
  } else {
    for (int64_t i = 0; i < rank; ++i) g.axes.push_back(i);
  }
  if (scales.has_value() == sizes.has_value()) {
    return OpError(node, StatusCode::kInvalidModel,
                   "exactly one of scales and sizes must be given (got {})",
                   scales ? "both" : "neither");
  }
  const size_t n = g.axes.size();
  if (scales) {
    if (scales->size() != n) {
      return OpError(node, StatusCode::kInvalidModel, "scales has {} values for {} axes",
                     scales->size(), n);
    }
    for (size_t i = 0; i < n; ++i) {
      const double s = (*scales)[i];
      // inf would make every coordinate (x + 0.5) / inf - 0.5 the same; NaN fails > 0. The
      // length is computed in float (below), so the scale must be a finite float too.
      if (!(s > 0.0 && s <= std::numeric_limits<float>::max())) {
        return OpError(node, StatusCode::kInvalidModel, "scale {} must be positive and finite", s);
      }
      const size_t a = static_cast<size_t>(g.axes[i]);
      g.scales[a] = s;
      // floor(input · scale) in float arithmetic, as ONNX shape inference and onnxruntime
      // compute it (the importer checks our shapes against ONNX's; double would differ at
      // e.g. 10 · 0.7f). The spec's roi factor for tf_crop_and_resize is applied by neither.
      // A huge scale gives a length beyond int64 (or inf in float), which the plain cast
      // would turn into anything.
      const float length = std::floor(static_cast<float>(x[a]) * static_cast<float>(s));
      const std::optional<int64_t> out = CheckedToInt64(length);
      if (!out) {
        return OpError(node, StatusCode::kInvalidModel,
                       "axis {}: output length floor({} * scale {}) = {} overflows int64", a, x[a],
                       s, length);
      }
      g.out_shape[a] = *out;
    }
    return g;
  }
  if (sizes->size() != n) {
    return OpError(node, StatusCode::kInvalidModel, "sizes has {} values for {} axes",
                   sizes->size(), n);
  }
  for (size_t i = 0; i < n; ++i) {
    const size_t a = static_cast<size_t>(g.axes[i]);
    if ((*sizes)[i] <= 0 || x[a] <= 0) {
      return OpError(node, StatusCode::kInvalidModel, "size {} for axis {} of length {}",
                     (*sizes)[i], a, x[a]);
    }
    g.out_shape[a] = (*sizes)[i];
    g.scales[a] = static_cast<double>((*sizes)[i]) / static_cast<double>(x[a]);
  }
  if (attrs.keep_aspect_ratio_policy != "stretch") {
    // One scale for every listed axis: the largest that fits in `sizes` (not_larger) or the
    // smallest that covers it (not_smaller); lengths round half up.
    double s = g.scales[static_cast<size_t>(g.axes[0])];
    for (int64_t a : g.axes) {
      const double sa = g.scales[static_cast<size_t>(a)];
      s = attrs.keep_aspect_ratio_policy == "not_larger" ? std::min(s, sa) : std::max(s, sa);
    }
    for (int64_t a : g.axes) {
      const size_t ua = static_cast<size_t>(a);
      g.scales[ua] = s;
      // s is one of the sizes' ratios, so s · x is near some size; checked all the same.
      const double length = std::floor(s * static_cast<double>(x[ua]) + 0.5);
      const std::optional<int64_t> out = CheckedToInt64(length);
      if (!out) {
        return OpError(node, StatusCode::kInvalidModel,
                       "axis {}: output length {} * scale {} overflows int64", a, x[ua], s);
      }
      g.out_shape[ua] = *out;
    }
  }
  return g;
}

// The taps of one output coordinate along an axis: `n` of them, from floor(x) + first on.
struct TapSpan {
  int64_t first = 0;
  int64_t n = 1;
};

// nullopt when an antialiased filter (widened by 1 / scale when shrinking) has more taps than
// int64 counts: a scale of 1e-30 asks for 2e30.
std::optional<TapSpan> TapSpanOf(const ResizeAttrs& attrs, double scale) {
  if (attrs.mode == Mode::kNearest) return TapSpan{};
  const double support_scale = attrs.antialias ? std::min(scale, 1.0) : 1.0;
  const double radius = attrs.mode == Mode::kLinear ? 1.0 : 2.0;
  const CheckedInt first = CheckedInt(CheckedToInt64(std::floor(-radius / support_scale))) + 1;
  const CheckedInt n = CheckedInt(2) - CheckedInt(2) * first;
  if (!first.ok() || !n.ok()) return std::nullopt;
  return TapSpan{*first.get(), *n.get()};
}

// The output shape and per-axis scales, with the tap tables the kernel builds from them
// (output length × taps per axis) checked to be countable.
StatusOr<Geometry> ResolveGeometry(const Node& node, const ResizeAttrs& attrs, const Shape& x,
                                   std::optional<std::vector<double>> scales,
                                   std::optional<std::vector<int64_t>> sizes) {
  COLLAGE_ASSIGN_OR_RETURN(
      Geometry g, ResolveShapeAndScales(node, attrs, x, std::move(scales), std::move(sizes)));
  for (size_t a = 0; a < x.size(); ++a) {
    const std::optional<TapSpan> taps = TapSpanOf(attrs, g.scales[a]);
    if (!taps || !CheckedMul(g.out_shape[a], taps->n)) {
      return OpError(node, StatusCode::kInvalidModel,
                     "axis {}: the interpolation taps ({} outputs times the filter width for "
                     "scale {}) overflow int64",
                     a, g.out_shape[a], g.scales[a]);
    }
  }
  return g;
}

std::optional<std::vector<double>> ScalesFromAttr(const Node& node) {
  if (!node.attributes.Has("scales")) return std::nullopt;
  std::vector<double> out;
  for (float f : node.attributes.GetFloats("scales")) out.push_back(f);
  return out;
}

// The per-axis taps of one axis: for output coordinate o, taps [o·n, o·n + n) hold the input
// offsets (index · stride) and weights; `outside[o]` means "write extrapolation_value".
struct AxisTaps {
  int64_t n = 1;
  std::vector<int64_t> offset;
  std::vector<double> weight;
  std::vector<uint8_t> outside;
};

double CubicWeight(double x, double a) {
  x = std::abs(x);
  if (x <= 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

// x_original for output coordinate `x` on an axis of input length `in`, resized with `scale`
// to `out` elements; roi_start/roi_end are used by tf_crop_and_resize only.
double OriginalCoordinate(const ResizeAttrs& attrs, double x, double scale, int64_t in, int64_t out,
                          double roi_start, double roi_end) {
  if (auto source = ResizeSourceCoordinate(attrs.transform, x, scale, in, out)) return *source;
  // tf_crop_and_resize
  const double in_len = static_cast<double>(in);
  const double out_len = scale * in_len;
  if (out_len == 1.0) return 0.5 * (roi_start + roi_end) * (in_len - 1.0);
  return roi_start * (in_len - 1.0) + x * (roi_end - roi_start) * (in_len - 1.0) / (out_len - 1.0);
}

// ReadAttrs admits the spec's nearest modes only ("simple" for Upsample and Resize-10).
int64_t NearestIndex(const ResizeAttrs& attrs, double x, double scale) {
  return ResizeNearestIndex(attrs.nearest_mode, x, scale)
      .value_or(static_cast<int64_t>(std::floor(x)));
}

AxisTaps BuildAxisTaps(const ResizeAttrs& attrs, int64_t in, int64_t out, double scale,
                       int64_t stride, double roi_start, double roi_end) {
  AxisTaps taps;
  const size_t out_n = static_cast<size_t>(out);
  taps.outside.assign(out_n, 0);
  // Antialiasing widens the linear / cubic filter by 1/scale when shrinking.
  const double support_scale = attrs.antialias ? std::min(scale, 1.0) : 1.0;
  // ResolveGeometry checked the span exists for this scale and out · n fits.
  const TapSpan span = TapSpanOf(attrs, scale).value_or(TapSpan{});
  const int64_t first = span.first;  // first tap, relative to floor(x)
  taps.n = span.n;
  taps.offset.assign(out_n * static_cast<size_t>(taps.n), 0);
  taps.weight.assign(out_n * static_cast<size_t>(taps.n), 0.0);
  bool all_exact = true;  // every coordinate hits an input element exactly
  for (int64_t o = 0; o < out; ++o) {
    const double x =
        OriginalCoordinate(attrs, static_cast<double>(o), scale, in, out, roi_start, roi_end);
    const size_t base = static_cast<size_t>(o * taps.n);
    if (attrs.transform == "tf_crop_and_resize" && (x < 0.0 || x > static_cast<double>(in - 1))) {
      taps.outside[static_cast<size_t>(o)] = 1;
      all_exact = false;
      continue;
    }
    if (attrs.mode == Mode::kNearest) {
      const int64_t i = std::clamp<int64_t>(NearestIndex(attrs, x, scale), 0, in - 1);
      taps.offset[base] = i * stride;
      taps.weight[base] = 1.0;
      continue;
    }
    const double fl = std::floor(x);
    const double ratio = x - fl;
    all_exact = all_exact && ratio == 0.0 && fl >= 0.0 && fl <= static_cast<double>(in - 1);
    double sum = 0.0;
    for (int64_t t = 0; t < taps.n; ++t) {
      const int64_t j = first + t;
      const int64_t idx = static_cast<int64_t>(fl) + j;
      const double d = (static_cast<double>(j) - ratio) * support_scale;
      double w;
      if (attrs.mode == Mode::kCubic) {
        w = CubicWeight(d, attrs.cubic_a);
      } else if (attrs.antialias) {
        w = std::max(0.0, 1.0 - std::abs(d));
      } else {
        w = t == 0 ? 1.0 - ratio : ratio;  // the reference's exact expressions
      }
      if (attrs.exclude_outside && (idx < 0 || idx >= in)) w = 0.0;
      taps.weight[base + static_cast<size_t>(t)] = w;
      taps.offset[base + static_cast<size_t>(t)] = std::clamp<int64_t>(idx, 0, in - 1) * stride;
      sum += w;
    }
    // Antialiased and exclude_outside filters are renormalized to sum to one.
    if ((attrs.antialias || attrs.exclude_outside) && sum != 0.0) {
      for (int64_t t = 0; t < taps.n; ++t) taps.weight[base + static_cast<size_t>(t)] /= sum;
    }
  }
  if (attrs.mode != Mode::kNearest && all_exact && !attrs.antialias) {
    // Each output reads one input element (an untouched axis, or an integer upscale's
    // exact hits): one tap of weight 1 gives the same sums at a fraction of the work.
    AxisTaps exact;
    exact.outside = taps.outside;
    exact.offset.resize(out_n);
    exact.weight.assign(out_n, 1.0);
    for (int64_t o = 0; o < out; ++o) {
      const double x =
          OriginalCoordinate(attrs, static_cast<double>(o), scale, in, out, roi_start, roi_end);
      exact.offset[static_cast<size_t>(o)] = static_cast<int64_t>(x) * stride;
    }
    return exact;
  }
  return taps;
}

template <typename T>
void Interpolate(const std::vector<AxisTaps>& taps, const Shape& out_shape, bool weighted,
                 double extrapolation, const T* x, T* y) {
  const size_t rank = out_shape.size();
  const int64_t total = NumElements(out_shape);
  if (total == 0) return;
  // Rows along the last axis are independent: each thread takes whole rows.
  const int64_t row_len = rank == 0 ? 1 : out_shape.back();
  const int64_t rows = total / row_len;
  int64_t work = total;
  for (const AxisTaps& a : taps) work *= a.n;
  const bool parallel = !omp_in_parallel() && rows > 1 && work >= kParallelMinWork;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<int64_t> idx(rank, 0);
    for (size_t d = rank > 0 ? rank - 1 : 0, r = static_cast<size_t>(row); d-- > 0;) {
      idx[d] = static_cast<int64_t>(r % static_cast<size_t>(out_shape[d]));
      r /= static_cast<size_t>(out_shape[d]);
    }
    // Depth-first sum over the per-axis taps of output position `idx`.
    auto gather = [&](auto&& self, size_t d, int64_t offset) -> double {
      if (d == rank) return static_cast<double>(x[offset]);
      const AxisTaps& a = taps[d];
      const size_t base = static_cast<size_t>(idx[d] * a.n);
      double s = 0.0;
      for (int64_t t = 0; t < a.n; ++t) {
        s += a.weight[base + static_cast<size_t>(t)] *
             self(self, d + 1, offset + a.offset[base + static_cast<size_t>(t)]);
      }
      return s;
    };
    for (int64_t i = 0; i < row_len; ++i) {
      if (rank > 0) idx[rank - 1] = i;
      bool outside = false;
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d) {
        outside = outside || taps[d].outside[static_cast<size_t>(idx[d])];
        offset += taps[d].offset[static_cast<size_t>(idx[d] * taps[d].n)];
      }
      T& out = y[row * row_len + i];
      if (outside) {
        out = static_cast<T>(extrapolation);
      } else if (!weighted) {
        out = x[offset];  // nearest: a plain copy, exact for every dtype
      } else {
        out = static_cast<T>(gather(gather, 0, 0));
      }
    }
  }
}

// An input's data as doubles / ints, nullopt when absent or empty (opset 11 passes an empty
// tensor for the unused one of scales and sizes).
std::optional<std::vector<double>> OptionalDoubles(const Tensor* t) {
  if (t == nullptr || t->empty() || t->num_elements() == 0) return std::nullopt;
  return t->ToVector<double>();
}
std::optional<std::vector<int64_t>> OptionalInts(const Tensor* t) {
  if (t == nullptr || t->empty() || t->num_elements() == 0) return std::nullopt;
  return t->ToVector<int64_t>();
}

Status InferResize(InferContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(ResizeAttrs attrs, ReadAttrs(ctx.node, ctx.opset));
  const DType dtype = ctx.input_type(0).dtype;
  if (attrs.mode != Mode::kNearest && dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "linear/cubic resize of dtype {} is not supported (float32, float64 are)",
                   DTypeName(dtype));
  }
  // Nearest copies elements of any dtype the kernels know (not float16, say).
  COLLAGE_RETURN_IF_ERROR(DispatchAny(ctx.node, dtype, [](auto) {}));
  const InputSlots slots = SlotsOf(ctx.node, ctx.opset);
  // The output shape depends on scales/sizes, so they must be known now.
  std::optional<std::vector<double>> scales;
  std::optional<std::vector<int64_t>> sizes;
  for (int slot : {slots.scales, slots.sizes}) {
    if (slot < 0 || !ctx.has_input(static_cast<size_t>(slot))) continue;
    const Tensor* value = ctx.input_value(static_cast<size_t>(slot));
    if (value == nullptr) {
      if (ctx.input_type(static_cast<size_t>(slot)).num_elements() == 0) continue;
      return OpError(ctx.node, StatusCode::kUnsupported,
                     "input {} ({}) is not a constant; collage needs static output shapes", slot,
                     slot == slots.scales ? "scales" : "sizes");
    }
    if (slot == slots.scales) {
      scales = OptionalDoubles(value);
    } else {
      sizes = OptionalInts(value);
    }
  }
  if (slots.scales < 0) scales = ScalesFromAttr(ctx.node);  // Upsample-7
  COLLAGE_ASSIGN_OR_RETURN(
      Geometry g, ResolveGeometry(ctx.node, attrs, ctx.input_type(0).shape, scales, sizes));
  if (attrs.transform == "tf_crop_and_resize") {
    if (slots.roi < 0 || !ctx.has_input(static_cast<size_t>(slots.roi))) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "tf_crop_and_resize needs input roi");
    }
    COLLAGE_RETURN_IF_ERROR(
        RequireDType(ctx, static_cast<size_t>(slots.roi), {DType::kFloat32, DType::kFloat64}));
    const int64_t n = ctx.input_type(static_cast<size_t>(slots.roi)).num_elements();
    if (n != 2 * static_cast<int64_t>(g.axes.size())) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "roi has {} values, expected {}", n,
                     2 * g.axes.size());
    }
  }
  ctx.output_types[0] = TensorType{dtype, g.out_shape};
  return Status::Ok();
}

Status RunResize(KernelContext& ctx) {
  COLLAGE_ASSIGN_OR_RETURN(ResizeAttrs attrs, ReadAttrs(ctx.node, ctx.opset));
  const InputSlots slots = SlotsOf(ctx.node, ctx.opset);
  auto input = [&](int slot) -> const Tensor* {
    return slot >= 0 && ctx.has_input(static_cast<size_t>(slot))
               ? &ctx.inputs[static_cast<size_t>(slot)]
               : nullptr;
  };
  std::optional<std::vector<double>> scales =
      slots.scales < 0 ? ScalesFromAttr(ctx.node) : OptionalDoubles(input(slots.scales));
  const Tensor& x = ctx.inputs[0];
  Tensor& y = ctx.outputs[0];
  COLLAGE_ASSIGN_OR_RETURN(Geometry g, ResolveGeometry(ctx.node, attrs, x.shape(), scales,
                                                       OptionalInts(input(slots.sizes))));
  const size_t rank = x.shape().size();
  std::vector<double> roi_start(rank, 0.0), roi_end(rank, 1.0);
  if (attrs.transform == "tf_crop_and_resize") {
    const std::vector<double> roi = input(slots.roi)->ToVector<double>();
    for (double r : roi) {
      if (!std::isfinite(r)) {  // would make every sampling coordinate NaN
        return OpError(ctx.node, StatusCode::kInvalidArgument, "roi holds {}", r);
      }
    }
    for (size_t i = 0; i < g.axes.size(); ++i) {
      roi_start[static_cast<size_t>(g.axes[i])] = roi[i];
      roi_end[static_cast<size_t>(g.axes[i])] = roi[g.axes.size() + i];
    }
  }
  const std::vector<int64_t> strides = StridesOf(x.shape());
  std::vector<AxisTaps> taps;
  for (size_t d = 0; d < rank; ++d) {
    taps.push_back(BuildAxisTaps(attrs, x.dim(static_cast<int64_t>(d)), g.out_shape[d], g.scales[d],
                                 strides[d], roi_start[d], roi_end[d]));
  }
  const bool weighted = attrs.mode != Mode::kNearest;
  if (weighted) {
    return DispatchFloat(ctx.node, x.dtype(), [&](auto t) {
      using T = decltype(t);
      Interpolate<T>(taps, g.out_shape, true, attrs.extrapolation, x.data_as<T>(), y.data_as<T>());
    });
  }
  return DispatchAny(ctx.node, x.dtype(), [&](auto t) {
    using T = decltype(t);
    Interpolate<T>(taps, g.out_shape, false, attrs.extrapolation, x.data_as<T>(), y.data_as<T>());
  });
}

}  // namespace

void RegisterResizeOps(OpRegistry& registry) {
  registry.Register(OpDef{.op_type = "Resize",
                          .domain = "",
                          .kind = OpKind::kOpaque,
                          .min_inputs = 1,
                          .max_inputs = 4,
                          .min_outputs = 1,
                          .max_outputs = 1,
                          .infer = InferResize,
                          .run = RunResize});
  // Upsample is Resize with asymmetric coordinates and its scales in input 1 (an attribute
  // before opset 9).
  registry.Register(OpDef{.op_type = "Upsample",
                          .domain = "",
                          .kind = OpKind::kOpaque,
                          .min_inputs = 1,
                          .max_inputs = 2,
                          .min_outputs = 1,
                          .max_outputs = 1,
                          .infer = InferResize,
                          .run = RunResize});
}

}  // namespace collage
