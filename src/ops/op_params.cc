// The readers of include/collage/sdk/op_params.h. Geometry attributes are bounded
// (SpatialInts), and every step of the arithmetic on shapes is checked, since a model can
// declare dims of any size: a hostile model gets an error naming the overflow, never a wrong
// geometry.
#include "collage/sdk/op_params.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "collage/sdk/op_registry.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// Division rounding towards -inf (pad totals can be negative).
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

enum class AutoPad { kNotSet, kValid, kSameUpper, kSameLower };

StatusOr<AutoPad> ReadAutoPad(const Node& node) {
  const std::string auto_pad = node.attributes.GetString("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") return AutoPad::kNotSet;
  if (auto_pad == "VALID") return AutoPad::kValid;
  if (auto_pad == "SAME_UPPER") return AutoPad::kSameUpper;
  if (auto_pad == "SAME_LOWER") return AutoPad::kSameLower;
  return OpError(node, StatusCode::kInvalidModel,
                 "attribute auto_pad is '{}' (NOTSET, VALID, SAME_UPPER or SAME_LOWER)", auto_pad);
}

bool IsSame(AutoPad auto_pad) {
  return auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower;
}

// The shape of input i of the node in the graph; an error naming the input when absent.
StatusOr<Shape> InputShape(const Graph& graph, const Node& node, size_t i, const char* name) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) {
    return OpError(node, StatusCode::kInvalidModel, "input {} ({}) is missing", i, name);
  }
  return graph.value(node.inputs[i]).type.shape;
}

Status CheckSpatialInput(const Node& node, const Shape& x) {
  if (x.size() < 3) {
    return OpError(node, StatusCode::kInvalidModel,
                   "input X has shape {}, expected rank >= 3 (N x C x spatial...)",
                   ShapeToString(x));
  }
  return Status::Ok();
}

// The kernel_shape attribute, when present, must be W's spatial dims.
Status CheckKernelShape(const Node& node, const Shape& kernel) {
  if (node.attributes.Has("kernel_shape") && node.attributes.GetInts("kernel_shape") != kernel) {
    return OpError(node, StatusCode::kInvalidModel,
                   "attribute kernel_shape {} does not match W's spatial dims {}",
                   ShapeToString(node.attributes.GetInts("kernel_shape")), ShapeToString(kernel));
  }
  return Status::Ok();
}

// What Conv and ConvTranspose read alike: the spatial dims of X and W, strides, dilations,
// pads and auto_pad.
struct ConvAttributes {
  size_t nd = 0;
  Shape in_spatial;
  Shape kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;
  AutoPad auto_pad = AutoPad::kNotSet;
};

StatusOr<ConvAttributes> ReadConvAttributes(const Node& node, const Shape& x, const Shape& w) {
  COLLAGE_RETURN_IF_ERROR(CheckSpatialInput(node, x));
  if (w.size() != x.size()) {
    return OpError(node, StatusCode::kInvalidModel, "weight W has shape {}, X has shape {}",
                   ShapeToString(w), ShapeToString(x));
  }
  ConvAttributes a;
  a.nd = x.size() - 2;
  a.in_spatial.assign(x.begin() + 2, x.end());
  a.kernel.assign(w.begin() + 2, w.end());
  COLLAGE_RETURN_IF_ERROR(CheckKernelShape(node, a.kernel));
  COLLAGE_ASSIGN_OR_RETURN(a.strides, SpatialInts(node, "strides", a.nd, 1, 1));
  COLLAGE_ASSIGN_OR_RETURN(a.dilations, SpatialInts(node, "dilations", a.nd, 1, 1));
  COLLAGE_ASSIGN_OR_RETURN(a.pads, SpatialInts(node, "pads", 2 * a.nd, 0, 0));
  COLLAGE_ASSIGN_OR_RETURN(a.auto_pad, ReadAutoPad(node));
  return a;
}

// One spatial axis of a Conv or pooling window: its pads and output size.
struct WindowAxis {
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
  int64_t out = 0;
};

// The pads and output size of spatial axis d of a window (`what`: "dilated kernel",
// "window") of `kernel` taps `dilation` apart sliding at `stride` over `in` values. SAME_*:
// the output is ceil(in / stride) and the padding that takes needs, the odd pad at the end
// for SAME_UPPER and at the beginning for SAME_LOWER; VALID: none; NOTSET: the given pads.
// Otherwise floor((padded - extent) / stride) + 1 windows, or with ceil_mode the ceiling,
// less a last window that would start in the end padding.
StatusOr<WindowAxis> ResolveWindowAxis(const Node& node, size_t d, const char* what,
                                       AutoPad auto_pad, int64_t in, int64_t kernel, int64_t stride,
                                       int64_t dilation, int64_t pad_begin, int64_t pad_end,
                                       bool ceil_mode) {
  COLLAGE_ASSIGN_OR_RETURN(const int64_t extent,
                           CheckedValue(node, (CheckedInt(kernel) - 1) * dilation + 1,
                                        "spatial axis {}: {} (kernel {} - 1) * dilation {} + 1", d,
                                        what, kernel, dilation));
  WindowAxis a;
  if (IsSame(auto_pad)) {
    a.out = CeilDiv(in, stride);
    COLLAGE_ASSIGN_OR_RETURN(
        const int64_t needed,
        CheckedValue(node, (CheckedInt(a.out) - 1) * stride + extent - in,
                     "spatial axis {}: SAME padding ({} - 1) * stride {} + {} {} - input {}", d,
                     a.out, stride, what, extent, in));
    const int64_t total = std::max<int64_t>(0, needed);
    a.pad_begin = auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
    a.pad_end = total - a.pad_begin;
    return a;
  }
  if (auto_pad == AutoPad::kNotSet) {
    a.pad_begin = pad_begin;
    a.pad_end = pad_end;
  }
  COLLAGE_ASSIGN_OR_RETURN(
      const int64_t padded,
      CheckedValue(node, CheckedInt(in) + a.pad_begin + a.pad_end,
                   "spatial axis {}: padded input {} + {} + {}", d, in, a.pad_begin, a.pad_end));
  const int64_t span = padded - extent;
  if (span < 0) {
    return OpError(node, StatusCode::kInvalidModel,
                   "{} {} is larger than the padded input {} along spatial axis {}", what, extent,
                   padded, d);
  }
  a.out = (ceil_mode ? CeilDiv(span, stride) : FloorDiv(span, stride)) + 1;
  // ceil_mode must not add a window that starts in the end padding (in + pad_begin <= padded
  // fits; a start beyond int64 is beyond it too).
  if (ceil_mode && CheckedMul(a.out - 1, stride).value_or(INT64_MAX) >= in + a.pad_begin) --a.out;
  return a;
}

Shape WithBatchAndChannels(int64_t batch, int64_t channels, const Shape& spatial) {
  Shape out = {batch, channels};
  out.insert(out.end(), spatial.begin(), spatial.end());
  return out;
}

}  // namespace

// ---- Conv -------------------------------------------------------------------------------

Shape ConvParams::output_shape() const {
  return WithBatchAndChannels(batch, out_channels, out_spatial);
}

StatusOr<ConvParams> ReadConvParams(const Node& node, const Shape& x, const Shape& w) {
  COLLAGE_ASSIGN_OR_RETURN(const ConvAttributes a, ReadConvAttributes(node, x, w));
  ConvParams p;
  p.spatial_rank = a.nd;
  p.batch = x[0];
  p.in_channels = x[1];
  p.out_channels = w[0];
  p.group = node.attributes.GetInt("group", 1);
  // w[1] * group can overflow for a hostile group (any group divides 0 channels).
  if (p.group < 1 || p.in_channels % p.group != 0 || p.out_channels % p.group != 0 ||
      CheckedMul(w[1], p.group) != p.in_channels) {
    return OpError(node, StatusCode::kInvalidModel,
                   "attribute group {} does not fit X {} and W {} (need C = W[1] * group, "
                   "M % group == 0)",
                   p.group, ShapeToString(x), ShapeToString(w));
  }
  p.in_spatial = a.in_spatial;
  p.kernel = a.kernel;
  p.strides = a.strides;
  p.dilations = a.dilations;
  for (size_t d = 0; d < a.nd; ++d) {
    COLLAGE_ASSIGN_OR_RETURN(
        const WindowAxis axis,
        ResolveWindowAxis(node, d, "dilated kernel", a.auto_pad, p.in_spatial[d], p.kernel[d],
                          p.strides[d], p.dilations[d], a.pads[d], a.pads[d + a.nd],
                          /*ceil_mode=*/false));
    p.pads_begin.push_back(axis.pad_begin);
    p.pads_end.push_back(axis.pad_end);
    p.out_spatial.push_back(axis.out);
  }
  return p;
}

StatusOr<ConvParams> ReadConvParams(const Graph& graph, const Node& node) {
  COLLAGE_ASSIGN_OR_RETURN(const Shape x, InputShape(graph, node, 0, "X"));
  COLLAGE_ASSIGN_OR_RETURN(const Shape w, InputShape(graph, node, 1, "W"));
  return ReadConvParams(node, x, w);
}

// ---- ConvTranspose ----------------------------------------------------------------------

Shape ConvTransposeParams::output_shape() const {
  return WithBatchAndChannels(batch, out_channels, out_spatial);
}

StatusOr<ConvTransposeParams> ReadConvTransposeParams(const Node& node, const Shape& x,
                                                      const Shape& w) {
  COLLAGE_ASSIGN_OR_RETURN(const ConvAttributes a, ReadConvAttributes(node, x, w));
  const size_t nd = a.nd;
  const Attributes& attrs = node.attributes;
  ConvTransposeParams p;
  p.spatial_rank = nd;
  p.batch = x[0];
  p.in_channels = x[1];
  p.group = attrs.GetInt("group", 1);
  if (p.group < 1 || p.in_channels % p.group != 0) {
    return OpError(node, StatusCode::kInvalidModel,
                   "attribute group {} does not divide the {} input channels", p.group,
                   p.in_channels);
  }
  if (w[0] != p.in_channels) {
    return OpError(node, StatusCode::kInvalidModel,
                   "weight W has {} input channels (dim 0), X has {}", w[0], p.in_channels);
  }
  // group is an unbounded attribute: any group divides 0 input channels.
  COLLAGE_ASSIGN_OR_RETURN(p.out_channels,
                           CheckedValue(node, CheckedInt(w[1]) * p.group,
                                        "output channels W[1] {} * group {}", w[1], p.group));
  p.in_spatial = a.in_spatial;
  p.kernel = a.kernel;
  p.strides = a.strides;
  p.dilations = a.dilations;
  COLLAGE_ASSIGN_OR_RETURN(p.output_padding, SpatialInts(node, "output_padding", nd, 0, 0));
  // The spec: each output_padding is less than its axis's stride or dilation (a larger one
  // adds output no input reaches).
  for (size_t i = 0; i < nd; ++i) {
    if (p.output_padding[i] >= std::max(p.strides[i], p.dilations[i])) {
      return OpError(node, StatusCode::kInvalidModel,
                     "output_padding {} on spatial axis {} is not less than its stride {} or "
                     "dilation {}",
                     p.output_padding[i], i, p.strides[i], p.dilations[i]);
    }
  }
  const std::vector<int64_t>& pads = a.pads;
  const AutoPad auto_pad = a.auto_pad;

  // The extent the scatter covers with no padding at all. The attributes are bounded but
  // the input and kernel dims come from shapes: stride 2^31 times an input of 2^40 overflows.
  std::vector<int64_t> full(nd);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t in = p.in_spatial[i], k = p.kernel[i];
    const int64_t s = p.strides[i], d = p.dilations[i];
    COLLAGE_ASSIGN_OR_RETURN(
        full[i], CheckedValue(node,
                              CheckedInt(s) * (CheckedInt(in) - 1) + p.output_padding[i] +
                                  (CheckedInt(k) - 1) * d + 1,
                              "spatial axis {}: stride {} * (input {} - 1) + output_padding {} + "
                              "(kernel {} - 1) * dilation {} + 1",
                              i, s, in, p.output_padding[i], k, d));
  }

  std::vector<int64_t> target;  // the requested output size, when pads are derived from it
  if (attrs.Has("output_shape")) {
    target = attrs.GetInts("output_shape");
    // Exporters write either the spatial dims or the full N, C, spatial shape.
    if (target.size() == nd + 2) target.erase(target.begin(), target.begin() + 2);
    if (target.size() != nd) {
      return OpError(node, StatusCode::kInvalidModel,
                     "attribute output_shape has {} values, expected {} spatial dims",
                     target.size(), nd);
    }
    p.output_shape_given = true;
  } else if (IsSame(auto_pad)) {
    for (size_t i = 0; i < nd; ++i) {
      COLLAGE_ASSIGN_OR_RETURN(
          const int64_t out, CheckedValue(node, CheckedInt(p.in_spatial[i]) * p.strides[i],
                                          "spatial axis {}: SAME output size input {} * stride {}",
                                          i, p.in_spatial[i], p.strides[i]));
      target.push_back(out);
    }
  }

  for (size_t i = 0; i < nd; ++i) {
    int64_t begin = 0;
    int64_t out = full[i];  // VALID
    if (!target.empty()) {
      // The spec's formula: the total padding is split in halves, the odd one going to the
      // end for SAME_UPPER and to the start otherwise. Floor division keeps this right for a
      // negative total (an output larger than the scatter covers: the extra is zeros).
      // output_shape is an unbounded attribute: full - INT64_MIN overflows.
      COLLAGE_ASSIGN_OR_RETURN(const int64_t total,
                               CheckedValue(node, CheckedInt(full[i]) - target[i],
                                            "spatial axis {}: total padding {} - output_shape {}",
                                            i, full[i], target[i]));
      begin = auto_pad == AutoPad::kSameUpper ? FloorDiv(total, 2) : total - FloorDiv(total, 2);
      out = target[i];
    } else if (auto_pad == AutoPad::kNotSet) {
      begin = pads[i];
      COLLAGE_ASSIGN_OR_RETURN(out, CheckedValue(node, CheckedInt(full[i]) - pads[i] - pads[i + nd],
                                                 "spatial axis {}: output {} - pads {} - {}", i,
                                                 full[i], pads[i], pads[i + nd]));
    }
    if (out <= 0) {
      return OpError(node, StatusCode::kInvalidModel,
                     "output spatial dim {} would be {} (input {}, kernel {}, stride {})", i, out,
                     p.in_spatial[i], p.kernel[i], p.strides[i]);
    }
    p.pads_begin.push_back(begin);
    p.pads_end.push_back(full[i] - out - begin);  // |each| <= full + out: no overflow
    p.out_spatial.push_back(out);
  }
  return p;
}

StatusOr<ConvTransposeParams> ReadConvTransposeParams(const Graph& graph, const Node& node) {
  COLLAGE_ASSIGN_OR_RETURN(const Shape x, InputShape(graph, node, 0, "X"));
  COLLAGE_ASSIGN_OR_RETURN(const Shape w, InputShape(graph, node, 1, "W"));
  return ReadConvTransposeParams(node, x, w);
}

// ---- Pooling ----------------------------------------------------------------------------

Shape PoolParams::output_shape() const {
  return WithBatchAndChannels(batch, channels, out_spatial);
}

StatusOr<PoolParams> ReadPoolParams(const Node& node, const Shape& x) {
  PoolParams p;
  if (node.op_type == "MaxPool") {
    p.kind = PoolKind::kMax;
  } else if (node.op_type == "AveragePool") {
    p.kind = PoolKind::kAverage;
  } else if (node.op_type == "GlobalMaxPool") {
    p.kind = PoolKind::kGlobalMax;
  } else if (node.op_type == "GlobalAveragePool") {
    p.kind = PoolKind::kGlobalAverage;
  } else {
    return OpError(node, StatusCode::kInvalidArgument, "is not a pooling op");
  }
  COLLAGE_RETURN_IF_ERROR(CheckSpatialInput(node, x));
  const size_t nd = x.size() - 2;
  p.spatial_rank = nd;
  p.batch = x[0];
  p.channels = x[1];
  p.in_spatial.assign(x.begin() + 2, x.end());
  if (p.is_global()) {
    p.kernel = p.in_spatial;
    p.strides.assign(nd, 1);
    p.dilations.assign(nd, 1);
    p.pads_begin.assign(nd, 0);
    p.pads_end.assign(nd, 0);
    p.out_spatial.assign(nd, 1);
    return p;
  }
  const Attributes& attrs = node.attributes;
  if (!attrs.Has("kernel_shape")) {
    return OpError(node, StatusCode::kInvalidModel, "attribute kernel_shape is missing");
  }
  COLLAGE_ASSIGN_OR_RETURN(p.kernel, SpatialInts(node, "kernel_shape", nd, 1, 1));
  COLLAGE_ASSIGN_OR_RETURN(p.strides, SpatialInts(node, "strides", nd, 1, 1));
  COLLAGE_ASSIGN_OR_RETURN(p.dilations, SpatialInts(node, "dilations", nd, 1, 1));
  COLLAGE_ASSIGN_OR_RETURN(const std::vector<int64_t> pads,
                           SpatialInts(node, "pads", 2 * nd, 0, 0));
  COLLAGE_ASSIGN_OR_RETURN(const AutoPad auto_pad, ReadAutoPad(node));
  p.ceil_mode = attrs.GetInt("ceil_mode", 0) != 0;
  if (p.kind == PoolKind::kAverage) {
    p.count_include_pad = attrs.GetInt("count_include_pad", 0) != 0;
  } else {
    const int64_t storage_order = attrs.GetInt("storage_order", 0);
    if (storage_order != 0 && storage_order != 1) {
      return OpError(node, StatusCode::kInvalidModel,
                     "attribute storage_order is {} (0: row-major, 1: column-major)",
                     storage_order);
    }
    p.column_major_indices = storage_order == 1;
  }
  for (size_t d = 0; d < nd; ++d) {
    // A pad as wide as the window leaves windows with no input element: a max of nothing, a
    // mean over zero elements.
    const int64_t window = (p.kernel[d] - 1) * p.dilations[d] + 1;
    if (pads[d] >= window || pads[d + nd] >= window) {
      return OpError(node, StatusCode::kInvalidModel,
                     "pads {} and {} on spatial axis {} are not both smaller than the window {}",
                     pads[d], pads[d + nd], d, window);
    }
    COLLAGE_ASSIGN_OR_RETURN(
        const WindowAxis a,
        ResolveWindowAxis(node, d, "window", auto_pad, p.in_spatial[d], p.kernel[d], p.strides[d],
                          p.dilations[d], pads[d], pads[d + nd], p.ceil_mode));
    p.pads_begin.push_back(a.pad_begin);
    p.pads_end.push_back(a.pad_end);
    p.out_spatial.push_back(a.out);
  }
  return p;
}

StatusOr<PoolParams> ReadPoolParams(const Graph& graph, const Node& node) {
  COLLAGE_ASSIGN_OR_RETURN(const Shape x, InputShape(graph, node, 0, "X"));
  return ReadPoolParams(node, x);
}

// ---- Clip -------------------------------------------------------------------------------

template <typename T>
StatusOr<ClipBounds<T>> ReadClipBounds(const Node& node, int64_t opset, const Tensor* min,
                                       const Tensor* max) {
  using Limits = std::numeric_limits<T>;
  ClipBounds<T> b{Limits::has_infinity ? -Limits::infinity() : Limits::lowest(),
                  Limits::has_infinity ? Limits::infinity() : Limits::max()};
  const bool has_min = min != nullptr && !min->empty();
  const bool has_max = max != nullptr && !max->empty();
  if (opset < 11) {
    if (has_min || has_max) {
      return OpError(node, StatusCode::kInvalidModel,
                     "min/max are attributes before opset 11, not inputs (opset {})", opset);
    }
    if (node.attributes.Has("min")) b.lo = static_cast<T>(node.attributes.GetFloat("min", 0));
    if (node.attributes.Has("max")) b.hi = static_cast<T>(node.attributes.GetFloat("max", 0));
    return b;
  }
  // By position, not by pointer: Clip(x, c, c) passes one tensor as both bounds.
  const Tensor* bounds[2] = {min, max};
  T* values[2] = {&b.lo, &b.hi};
  for (size_t i = 0; i < 2; ++i) {
    if (bounds[i] == nullptr || bounds[i]->empty()) continue;
    if (bounds[i]->num_elements() != 1) {
      return OpError(node, StatusCode::kInvalidModel, "{} must be a scalar, got shape {}",
                     i == 0 ? "min" : "max", ShapeToString(bounds[i]->shape()));
    }
    *values[i] = bounds[i]->ToVector<T>()[0];
  }
  return b;
}

template StatusOr<ClipBounds<float>> ReadClipBounds(const Node&, int64_t, const Tensor*,
                                                    const Tensor*);
template StatusOr<ClipBounds<double>> ReadClipBounds(const Node&, int64_t, const Tensor*,
                                                     const Tensor*);
template StatusOr<ClipBounds<int64_t>> ReadClipBounds(const Node&, int64_t, const Tensor*,
                                                      const Tensor*);
template StatusOr<ClipBounds<int32_t>> ReadClipBounds(const Node&, int64_t, const Tensor*,
                                                      const Tensor*);
template StatusOr<ClipBounds<int16_t>> ReadClipBounds(const Node&, int64_t, const Tensor*,
                                                      const Tensor*);
template StatusOr<ClipBounds<int8_t>> ReadClipBounds(const Node&, int64_t, const Tensor*,
                                                     const Tensor*);
template StatusOr<ClipBounds<uint64_t>> ReadClipBounds(const Node&, int64_t, const Tensor*,
                                                       const Tensor*);
template StatusOr<ClipBounds<uint32_t>> ReadClipBounds(const Node&, int64_t, const Tensor*,
                                                       const Tensor*);
template StatusOr<ClipBounds<uint16_t>> ReadClipBounds(const Node&, int64_t, const Tensor*,
                                                       const Tensor*);
template StatusOr<ClipBounds<uint8_t>> ReadClipBounds(const Node&, int64_t, const Tensor*,
                                                      const Tensor*);

StatusOr<ClipBounds<float>> ReadClipBounds(const Graph& graph, const Node& node) {
  const Tensor* bounds[2] = {nullptr, nullptr};
  for (size_t i = 1; i <= 2; ++i) {
    if (i >= node.inputs.size() || node.inputs[i] == kNoValue) continue;
    const Value& value = graph.value(node.inputs[i]);
    if (!value.is_constant()) {
      return OpError(node, StatusCode::kUnsupported,
                     "{} (input {}, '{}') is computed by the graph, not a constant",
                     i == 1 ? "min" : "max", i, value.name);
    }
    bounds[i - 1] = &*value.constant;
  }
  return ReadClipBounds<float>(node, graph.opset(), bounds[0], bounds[1]);
}

// ---- Softmax, LogSoftmax, Hardmax -------------------------------------------------------

StatusOr<SoftmaxAxis> ReadSoftmaxAxis(const Node& node, int64_t opset, const Shape& x) {
  SoftmaxAxis s;
  s.flatten = opset < 13;
  const int64_t rank = static_cast<int64_t>(x.size());
  COLLAGE_ASSIGN_OR_RETURN(
      s.axis, NormalizeAxis(node, node.attributes.GetInt("axis", s.flatten ? 1 : -1), rank));
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t size = x[static_cast<size_t>(d)];
    if (d < s.axis) {
      s.outer *= size;
    } else if (d == s.axis || s.flatten) {
      s.n *= size;
    } else {
      s.inner *= size;
    }
  }
  return s;
}

StatusOr<SoftmaxAxis> ReadSoftmaxAxis(const Graph& graph, const Node& node) {
  COLLAGE_ASSIGN_OR_RETURN(const Shape x, InputShape(graph, node, 0, "input"));
  return ReadSoftmaxAxis(node, graph.opset(), x);
}

// ---- Gemm -------------------------------------------------------------------------------

StatusOr<GemmParams> ReadGemmParams(const Node& node, int64_t opset, const Shape& a, const Shape& b,
                                    const Shape* c) {
  if (a.size() != 2 || b.size() != 2) {
    return OpError(node, StatusCode::kInvalidModel, "A and B must be 2-D, got {} and {}",
                   ShapeToString(a), ShapeToString(b));
  }
  GemmParams p;
  p.trans_a = node.attributes.GetInt("transA", 0) != 0;
  p.trans_b = node.attributes.GetInt("transB", 0) != 0;
  p.alpha = node.attributes.GetFloat("alpha", 1.0f);
  p.beta = node.attributes.GetFloat("beta", 1.0f);
  p.m = p.trans_a ? a[1] : a[0];
  p.k = p.trans_a ? a[0] : a[1];
  const int64_t kb = p.trans_b ? b[1] : b[0];
  p.n = p.trans_b ? b[0] : b[1];
  if (p.k != kb) {
    return OpError(node, StatusCode::kInvalidModel,
                   "inner dimensions differ: op(A) is {}x{}, op(B) is {}x{}", p.m, p.k, kb, p.n);
  }
  if (c == nullptr) {
    if (opset < 11) {
      return OpError(node, StatusCode::kInvalidModel, "input C is required before opset 11");
    }
    return p;
  }
  Shape c2(c->size() < 2 ? 2 - c->size() : 0, 1);  // C left-padded to 2-D
  c2.insert(c2.end(), c->begin(), c->end());
  if (c->size() > 2 || (c2[0] != 1 && c2[0] != p.m) || (c2[1] != 1 && c2[1] != p.n)) {
    return OpError(node, StatusCode::kInvalidModel, "C of shape {} cannot be broadcast to {}",
                   ShapeToString(*c), ShapeToString(Shape{p.m, p.n}));
  }
  p.has_c = true;
  p.c_rows = c2[0];
  p.c_cols = c2[1];
  return p;
}

StatusOr<GemmParams> ReadGemmParams(const Graph& graph, const Node& node) {
  COLLAGE_ASSIGN_OR_RETURN(const Shape a, InputShape(graph, node, 0, "A"));
  COLLAGE_ASSIGN_OR_RETURN(const Shape b, InputShape(graph, node, 1, "B"));
  const bool has_c = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  const Shape c = has_c ? graph.value(node.inputs[2]).type.shape : Shape{};
  return ReadGemmParams(node, graph.opset(), a, b, has_c ? &c : nullptr);
}

// ---- Resize -----------------------------------------------------------------------------

std::optional<double> ResizeSourceCoordinate(const std::string& transform, double x, double scale,
                                             int64_t in, int64_t out) {
  const double in_len = static_cast<double>(in);
  const double out_len = scale * in_len;  // fractional when it comes from a scale
  if (transform == "asymmetric") return x / scale;
  if (transform == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (transform == "pytorch_half_pixel") return out_len > 1.0 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (transform == "align_corners") {
    return out_len == 1.0 ? 0.0 : x * (in_len - 1.0) / (out_len - 1.0);
  }
  if (transform == "half_pixel_symmetric") {
    const double adjustment = static_cast<double>(out) / out_len;
    const double offset = in_len / 2.0 * (1.0 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  return std::nullopt;
}

std::optional<int64_t> ResizeNearestIndex(const std::string& nearest_mode, double x, double scale) {
  const double fl = std::floor(x);
  const double frac = x - fl;
  bool up = false;
  if (nearest_mode == "round_prefer_floor") {
    up = frac > 0.5;
  } else if (nearest_mode == "round_prefer_ceil") {
    up = frac >= 0.5;
  } else if (nearest_mode == "ceil") {
    up = frac > 0.0;
  } else if (nearest_mode == "simple") {
    up = frac > 0.0 && scale < 1.0;
  } else if (nearest_mode != "floor") {
    return std::nullopt;
  }
  return static_cast<int64_t>(fl) + (up ? 1 : 0);
}

}  // namespace collage
