// What the XNNPACK backends can run, decided once per node. The rules' constraints, the
// operator kernels and the subgraph builder all call these functions, so a rule never
// offers a node its Compile would refuse: every attribute, dtype and shape the library (this
// 2022-02 snapshot) cannot express exactly as ONNX defines it is an error here.
// Defined with their kernels (xnnpack_conv.cc, xnnpack_fc.cc, xnnpack_pooling.cc,
// xnnpack_elementwise.cc); clamp and shape helpers in xnnpack_analysis.cc.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "collage/status.h"
#include "collage/sdk/graph.h"

namespace collage::xnnpack {

inline constexpr float kInf = std::numeric_limits<float>::infinity();

// A fused or standalone clamp: Relu = [0, inf), Clip = [min, max] from constant bounds
// (inputs from opset 11, attributes before).
struct ClampRange {
  float min = -kInf;
  float max = kInf;
};
StatusOr<ClampRange> AnalyzeClamp(const Graph& graph, const Node& node);

// Conv (convolution2d_nhwc) or ConvTranspose (deconvolution2d_nhwc) on a 4-D NCHW tensor.
struct ConvSpec {
  bool transpose = false;
  ValueId x = kNoValue, w = kNoValue, b = kNoValue;  // b: kNoValue without bias
  int64_t n = 0, c = 0, h = 0, wd = 0;               // input N, C, H, W
  int64_t m = 0, oh = 0, ow = 0;                     // output channels, H, W
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t adj_h = 0, adj_w = 0;  // ConvTranspose output_padding
  int64_t groups = 1;
  int64_t group_in() const { return c / groups; }
  int64_t group_out() const { return m / groups; }
};
StatusOr<ConvSpec> AnalyzeConv(const Graph& graph, const Node& node);
// The geometry of a 2-D Conv (or QLinearConv) at these input and weight shapes, whatever its
// inputs are (for the integer convolutions, whose weights come through a DequantizeLinear).
StatusOr<ConvSpec> ConvGeometry(const Node& node, const Shape& x, const Shape& w);
// The weights in XNNPACK's [G][OCg][KH][KW][ICg] order, and the bias (empty when absent).
std::vector<float> PackConvWeights(const Graph& graph, const ConvSpec& spec);
// `weights` (a Conv's [M][C/G][KH][KW], a ConvTranspose's [C][M/G][KH][KW]) in that order.
template <typename T>
std::vector<T> PackConvWeightsAs(const std::vector<T>& weights, const ConvSpec& s) {
  const int64_t icg = s.group_in(), ocg = s.group_out(), khw = s.kh * s.kw;
  std::vector<T> packed(weights.size());
  for (int64_t g = 0; g < s.groups; ++g) {
    for (int64_t oc = 0; oc < ocg; ++oc) {
      for (int64_t ic = 0; ic < icg; ++ic) {
        for (int64_t p = 0; p < khw; ++p) {
          const int64_t from = s.transpose ? ((g * icg + ic) * ocg + oc) * khw + p
                                           : ((g * ocg + oc) * icg + ic) * khw + p;
          const int64_t to = ((g * ocg + oc) * khw + p) * icg + ic;
          packed[static_cast<size_t>(to)] = weights[static_cast<size_t>(from)];
        }
      }
    }
  }
  return packed;
}
std::vector<float> ConvBias(const Graph& graph, const ConvSpec& spec);

// Gemm (transA = 0, constant B, bias C broadcast along N only) or MatMul with a constant
// 2-D B: out[M][N] = in[M][K] · B, M = all leading dims of the input.
struct FcSpec {
  ValueId a = kNoValue, w = kNoValue, c = kNoValue;
  int64_t batch = 0, k = 0, n = 0;
  bool w_is_nk = false;  // B stored [N][K] (Gemm transB = 1)
  float alpha = 1.0f, beta = 1.0f;
};
StatusOr<FcSpec> AnalyzeFc(const Graph& graph, const Node& node);
// alpha·B in the stored order ([N][K] when w_is_nk, else [K][N]) and beta·C as an N-vector
// (empty without C).
std::vector<float> FcWeights(const Graph& graph, const FcSpec& spec);
std::vector<float> FcBias(const Graph& graph, const FcSpec& spec);

// An Add of a constant to a MatMul's output that is a bias along N ([N], [1, N], a scalar,
// ...; it must not broadcast the output to a larger shape): the bias as an N-vector.
StatusOr<std::vector<float>> AnalyzeBiasAdd(const Graph& graph, const Node& add, const Node& matmul,
                                            const FcSpec& spec);

enum class PoolKind { kMax, kAverage, kGlobalAverage };
struct PoolSpec {
  PoolKind kind = PoolKind::kMax;
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};
StatusOr<PoolSpec> AnalyzePool(const Graph& graph, const Node& node);

// Copies a 2-D window geometry read by the shared ONNX readers (ConvParams,
// ConvTransposeParams or PoolParams, collage/sdk/op_params.h) into a ConvSpec or PoolSpec.
template <typename Spec, typename Params>
void TakeWindow2d(const Params& p, Spec& s) {
  s.kh = p.kernel[0];
  s.kw = p.kernel[1];
  s.sh = p.strides[0];
  s.sw = p.strides[1];
  s.dh = p.dilations[0];
  s.dw = p.dilations[1];
  s.pad_top = p.pads_begin[0];
  s.pad_left = p.pads_begin[1];
  s.pad_bottom = p.pads_end[0];
  s.pad_right = p.pads_end[1];
  s.oh = p.out_spatial[0];
  s.ow = p.out_spatial[1];
}

enum class BinaryKind { kAdd, kSub, kMul, kDiv, kMax, kMin };
struct BinarySpec {
  BinaryKind kind = BinaryKind::kAdd;
  ValueId a = kNoValue, b = kNoValue;
  bool clamps = false;  // the xnn op takes output_min/max (Add/Sub/Mul/Div), so Relu/Clip fuse
};
StatusOr<BinarySpec> AnalyzeBinary(const Graph& graph, const Node& node);
// The channels-last variant: the output is 4-D; every non-constant operand is 4-D (then
// declared channels-last) or has a unit channel dim once aligned to 4-D (so its plain bytes
// are already channels-last). Constants of any broadcastable shape are re-laid out.
bool BinaryFitsChannelsLast(const Graph& graph, const Node& node);

enum class UnaryKind {
  kClamp,
  kSigmoid,
  kHardSwish,
  kLeakyRelu,
  kElu,
  kAbs,
  kNeg,
  kSqrt,
  kFloor,
  kCeil,
  kRound
};
struct UnarySpec {
  UnaryKind kind = UnaryKind::kClamp;
  ClampRange clamp;    // kClamp
  float alpha = 0.0f;  // LeakyRelu, Elu
};
StatusOr<UnarySpec> AnalyzeUnary(const Graph& graph, const Node& node);

// Softmax over the last axis (any opset whose semantics reduce to that).
struct SoftmaxSpec {
  int64_t rows = 0, channels = 0;
};
StatusOr<SoftmaxSpec> AnalyzeSoftmax(const Graph& graph, const Node& node);

// Shape helpers for channels-last data.
// The shape aligned to rank 4 (leading 1s), then permuted NCHW → NHWC.
std::vector<size_t> NhwcDims(const Shape& shape);
std::vector<size_t> Dims(const Shape& shape);  // plain; a scalar becomes [1]
// A constant's data transposed to NHWC after aligning it to rank 4.
std::vector<float> ConstantNhwc(const Tensor& tensor);
std::vector<float> ConstantFloats(const Graph& graph, ValueId value);

}  // namespace collage::xnnpack
