// The ONNX semantics of the ops whose attributes every kernel library has to translate: Conv
// and ConvTranspose geometry, pooling geometry, Clip bounds, the Softmax axis, Gemm's
// parameters and Resize's coordinate mapping. Each reader resolves the attributes, their defaults
// and the opset's differences once, against the input shapes, into plain numbers; the reference
// kernels and every backend read them here, so that all of them agree on what a node means, and a
// backend keeps only the translation of these numbers into its library's descriptors.
//
// Errors name the node and what is wrong with it, e.g.
//   "Conv node 'conv1': attribute pads has 2 values, expected 4".
// They are InvalidModel for a node the spec does not allow; Unsupported for a valid one the
// graph form cannot read (a Clip bound the graph computes); InvalidArgument for a node of
// another op type.
//
// Each reader has two forms: one over the node and its inputs' shapes (or tensors), as a
// reference kernel sees them, and one over the graph, which takes the shapes and constant
// inputs from the node's values and the opset from the graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collage/sdk/graph.h"
#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

// ---- Conv, ConvTranspose ----------------------------------------------------------------

// A Conv node (X [N, C, spatial...], W [M, C / group, kernel...]) over any spatial rank.
struct ConvParams {
  size_t spatial_rank = 0;
  int64_t batch = 0;
  int64_t in_channels = 0;   // C
  int64_t out_channels = 0;  // M
  int64_t group = 1;
  Shape in_spatial;
  Shape kernel;  // W's spatial dims (a kernel_shape attribute must agree with them)
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  // The explicit pads, or the ones auto_pad implies (SAME_UPPER puts the odd one at the end,
  // SAME_LOWER at the beginning; VALID none). Never negative.
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  Shape out_spatial;

  int64_t group_in_channels() const { return in_channels / group; }
  int64_t group_out_channels() const { return out_channels / group; }
  // The extent of kernel dim d with its dilation holes: (kernel - 1) * dilation + 1.
  int64_t dilated_kernel(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
  // [N, M, out_spatial...].
  Shape output_shape() const;
};

// Errors for X of rank < 3, W of another rank, a group that does not fit C and M, a
// kernel_shape other than W's, strides or dilations below 1, pads of the wrong length or
// negative, an unknown auto_pad, or a dilated kernel larger than the padded input.
StatusOr<ConvParams> ReadConvParams(const Node& node, const Shape& x, const Shape& w);
StatusOr<ConvParams> ReadConvParams(const Graph& graph, const Node& node);

// A ConvTranspose node (X [N, C, spatial...], W [C, M / group, kernel...]): each input pixel
// scatters a kernel-sized patch at stride intervals; the output is that scatter, which covers
// stride * (in - 1) + output_padding + dilated kernel, less the pads at either end.
struct ConvTransposeParams {
  size_t spatial_rank = 0;
  int64_t batch = 0;
  int64_t in_channels = 0;   // C
  int64_t out_channels = 0;  // M = W[1] * group
  int64_t group = 1;
  Shape in_spatial;
  Shape kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> output_padding;
  // Explicit pads; or, when output_shape is given (or auto_pad is SAME_*, whose output is
  // in * stride), the pads that give that output, the total split as the spec says: the odd
  // one at the end for SAME_UPPER, at the beginning otherwise. Negative where the requested
  // output is larger than the scatter (the extra positions are zeros, plus the bias).
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  Shape out_spatial;
  bool output_shape_given = false;  // the output_shape attribute decided out_spatial

  int64_t group_in_channels() const { return in_channels / group; }
  int64_t group_out_channels() const { return out_channels / group; }
  int64_t dilated_kernel(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
  // [N, M, out_spatial...].
  Shape output_shape() const;
};

// Errors as ReadConvParams, plus output_padding or output_shape of the wrong length and an
// output spatial dim that would be empty.
StatusOr<ConvTransposeParams> ReadConvTransposeParams(const Node& node, const Shape& x,
                                                      const Shape& w);
StatusOr<ConvTransposeParams> ReadConvTransposeParams(const Graph& graph, const Node& node);

// col2im, the scatter half of ConvTranspose as a product col = W_gᵀ · X_g: adds every entry of
// `col` (rows: `channels` output channels of a group × kernel offsets, in the kernel's
// row-major order; row q holds one value per input pixel at col[q * col_row_stride + pixel])
// into its output pixel of the planes `dst` (`channels` × output pixels), which the caller
// initialised (the bias, or zeros). Parallel over the channels on the OpenMP team when outside
// a parallel region and large enough. The reference kernel and the BLAS backends share it.
void Col2Im(const ConvTransposeParams& g, int64_t channels, const float* col,
            int64_t col_row_stride, float* dst);
void Col2Im(const ConvTransposeParams& g, int64_t channels, const double* col,
            int64_t col_row_stride, double* dst);

// ---- Pooling ----------------------------------------------------------------------------

enum class PoolKind { kMax, kAverage, kGlobalMax, kGlobalAverage };

// A MaxPool, AveragePool, GlobalMaxPool or GlobalAveragePool node over X [N, C, spatial...].
// A global pool reads as one window over the whole input (kernel = in_spatial, no padding,
// output 1 per spatial dim).
struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  size_t spatial_rank = 0;
  int64_t batch = 0;
  int64_t channels = 0;
  Shape in_spatial;
  Shape kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;  // explicit, or from auto_pad as for Conv
  std::vector<int64_t> pads_end;
  // floor((padded - window) / stride) + 1, or with ceil_mode the ceiling, less a last window
  // that would start in the end padding (the spec drops it); SAME_*: ceil(in / stride).
  Shape out_spatial;
  bool ceil_mode = false;
  bool count_include_pad = false;     // AveragePool: the divisor counts the padding
  bool column_major_indices = false;  // MaxPool storage_order = 1: Indices column-major

  bool is_global() const {
    return kind == PoolKind::kGlobalMax || kind == PoolKind::kGlobalAverage;
  }
  bool is_max() const { return kind == PoolKind::kMax || kind == PoolKind::kGlobalMax; }
  int64_t dilated_kernel(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
  // The end padding the last window reaches along dim d: pads_end, less when the floor drops
  // positions, more when ceil_mode adds a window that hangs past the end padding.
  int64_t reached_pad_end(size_t d) const {
    return (out_spatial[d] - 1) * strides[d] + dilated_kernel(d) - in_spatial[d] - pads_begin[d];
  }
  // [N, C, out_spatial...].
  Shape output_shape() const;
};

// Errors for another op type, X of rank < 3, a missing kernel_shape, geometry attributes of
// the wrong length or out of range, an unknown auto_pad, a storage_order other than 0 or 1,
// or a window larger than the padded input.
StatusOr<PoolParams> ReadPoolParams(const Node& node, const Shape& x);
StatusOr<PoolParams> ReadPoolParams(const Graph& graph, const Node& node);

// ---- Clip -------------------------------------------------------------------------------

// Clip's range: y = min(max(x, lo), hi), so lo > hi gives hi everywhere. An absent bound is
// -inf / +inf (the lowest / highest value for integer types).
template <typename T>
struct ClipBounds {
  T lo;
  T hi;
};

// Before opset 11 the bounds are the float attributes min and max; from opset 11 they are
// the optional scalar inputs 1 and 2 (`min`, `max`: nullptr or an empty tensor when absent),
// converted to T. Errors for bound inputs before opset 11 and for bounds that are no scalar.
// Instantiated for float, double and the integer dtypes.
template <typename T>
StatusOr<ClipBounds<T>> ReadClipBounds(const Node& node, int64_t opset, const Tensor* min,
                                       const Tensor* max);
// The graph form, as float: a bound input must be a constant of the graph (one the graph
// computes is refused, naming it).
StatusOr<ClipBounds<float>> ReadClipBounds(const Graph& graph, const Node& node);

// ---- Softmax, LogSoftmax, Hardmax -------------------------------------------------------

// Which values one normalisation runs over. Before opset 13 the input is read as a matrix
// [prod(dims[:axis]), prod(dims[axis:])] and each row is normalised (default axis 1); from
// opset 13 along the one dim `axis` (default -1). Both are an [outer, n, inner] view: n values
// at stride inner, outer * inner times.
struct SoftmaxAxis {
  int64_t axis = 0;      // in [0, rank)
  bool flatten = false;  // the opset < 13 matrix semantics
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;  // always 1 with flatten
};

// Errors for an axis outside [-rank, rank - 1] (a scalar has none).
StatusOr<SoftmaxAxis> ReadSoftmaxAxis(const Node& node, int64_t opset, const Shape& x);
StatusOr<SoftmaxAxis> ReadSoftmaxAxis(const Graph& graph, const Node& node);

// ---- Gemm -------------------------------------------------------------------------------

// Y [m, n] = alpha * op(A) * op(B) + beta * C, op transposing when transA / transB is set, the
// optional C unidirectionally broadcast to [m, n].
struct GemmParams {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  float beta = 1.0f;
  bool has_c = false;
  // C's shape left-padded to 2-D; each dim is 1 (broadcast) or the output's (m, n).
  int64_t c_rows = 1;
  int64_t c_cols = 1;
};

// Errors when A or B is not 2-D, their inner dims differ, C is absent before opset 11, or C
// has rank above 2 or does not broadcast to [m, n]. `c` is nullptr when C is absent.
StatusOr<GemmParams> ReadGemmParams(const Node& node, int64_t opset, const Shape& a, const Shape& b,
                                    const Shape* c);
StatusOr<GemmParams> ReadGemmParams(const Graph& graph, const Node& node);

// ---- Resize -----------------------------------------------------------------------------

// The input coordinate ONNX Resize reads for output coordinate `x` of one axis of input length
// `in` resized by `scale` to `out` elements, per coordinate_transformation_mode `transform`;
// nullopt for tf_crop_and_resize (it needs the roi) and for a mode the spec does not define.
std::optional<double> ResizeSourceCoordinate(const std::string& transform, double x, double scale,
                                             int64_t in, int64_t out);
// The input index ONNX Resize's nearest mode `nearest_mode` picks for input coordinate `x`,
// not yet clamped to the axis ("simple" is Upsample's and Resize-10's: truncate when
// enlarging, round up when shrinking); nullopt for a mode the spec does not define.
std::optional<int64_t> ResizeNearestIndex(const std::string& nearest_mode, double x, double scale);

}  // namespace collage
