#include "conv_kernel.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "backend/operand.h"
#include "blas_threads.h"
#include "im2col.h"
#include "util/errors.h"

namespace collage::openblas {
namespace {

// Reads the geometry of a Conv node whose X is [N, C, H, W] and W is [M, C/group, KH, KW].
StatusOr<Conv2dGeometry> ResolveConv2d(const Node& node, const Shape& x, const Shape& w) {
  if (x.size() != 4 || w.size() != 4) {
    return Unsupported("Conv with X {} and W {}: only 2-D convolution is supported",
                       ShapeToString(x), ShapeToString(w));
  }
  const Attributes& attrs = node.attributes;
  Conv2dGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.in_h = x[2];
  g.in_w = x[3];
  g.out_channels = w[0];
  g.kernel_h = w[2];
  g.kernel_w = w[3];
  g.group = attrs.GetInt("group", 1);
  if (g.group < 1 || w[1] * g.group != g.in_channels || g.out_channels % g.group != 0) {
    return InvalidArgument("Conv group {} does not fit X {} and W {}", g.group, ShapeToString(x),
                           ShapeToString(w));
  }
  const std::vector<int64_t> strides = attrs.GetInts("strides", {1, 1});
  const std::vector<int64_t> dilations = attrs.GetInts("dilations", {1, 1});
  const std::vector<int64_t> pads = attrs.GetInts("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4) {
    return InvalidArgument("Conv strides/dilations/pads have the wrong length");
  }
  g.stride_h = strides[0];
  g.stride_w = strides[1];
  g.dilation_h = dilations[0];
  g.dilation_w = dilations[1];
  const std::string auto_pad = attrs.GetString("auto_pad", "NOTSET");
  const int64_t in[2] = {g.in_h, g.in_w};
  const int64_t kernel[2] = {g.kernel_h, g.kernel_w};
  int64_t begin[2] = {pads[0], pads[1]};
  int64_t end[2] = {pads[2], pads[3]};
  int64_t out[2] = {0, 0};
  for (int d = 0; d < 2; ++d) {
    const int64_t s = strides[static_cast<size_t>(d)];
    const int64_t extent = (kernel[d] - 1) * dilations[static_cast<size_t>(d)] + 1;
    if (s < 1 || dilations[static_cast<size_t>(d)] < 1) return InvalidArgument("Conv stride/dilation < 1");
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // ONNX: output = ceil(in / stride); the odd pad goes at the end for SAME_UPPER.
      const int64_t o = (in[d] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (o - 1) * s + extent - in[d]);
      begin[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end[d] = total - begin[d];
    } else if (auto_pad == "VALID") {
      begin[d] = end[d] = 0;
    } else if (auto_pad != "NOTSET") {
      return Unsupported("Conv auto_pad '{}'", auto_pad);
    }
    const int64_t span = in[d] + begin[d] + end[d] - extent;
    if (span < 0) return InvalidArgument("Conv kernel is larger than the padded input");
    out[d] = span / s + 1;
  }
  g.pad_top = begin[0];
  g.pad_left = begin[1];
  g.out_h = out[0];
  g.out_w = out[1];
  return g;
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(const Conv2dGeometry& g, std::vector<float> weights, std::vector<float> bias,
             bool relu)
      : g_(g), weights_(std::move(weights)), bias_(std::move(bias)), relu_(relu) {
    input_layouts_ = {Layout::Plain()};
    output_layouts_ = {Layout::Plain()};
    if (!g_.pointwise()) {
      workspace_bytes_ = static_cast<size_t>(g_.patch() * g_.out_pixels()) * sizeof(float);
    }
  }

  Status Run(const KernelBuffers& buffers) const override {
    const float* x = static_cast<const float*>(buffers.inputs[0]);
    float* y = static_cast<float*>(buffers.outputs[0]);
    float* col = static_cast<float*>(buffers.workspace);
    const int64_t in_image = g_.in_channels * g_.in_h * g_.in_w;
    const int64_t in_group = g_.group_in() * g_.in_h * g_.in_w;
    const int64_t pixels = g_.out_pixels();
    const int64_t out_image = g_.out_channels * pixels;
    const int64_t patch = g_.patch();
    const int64_t group_out = g_.group_out();
    if (out_image == 0) return Status::Ok();
    for (int64_t n = 0; n < g_.batch; ++n) {
      for (int64_t grp = 0; grp < g_.group; ++grp) {
        const float* xg = x + n * in_image + grp * in_group;
        float* yg = y + n * out_image + grp * group_out * pixels;
        if (patch == 0) {  // no input channels: the sum is empty
          std::fill(yg, yg + group_out * pixels, 0.0f);
          continue;
        }
        const float* b = xg;
        if (!g_.pointwise()) {
          Im2Col(g_, xg, col);
          b = col;
        }
        BlasThreadScope threads;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(group_out),
                    static_cast<int>(pixels), static_cast<int>(patch), 1.0f,
                    weights_.data() + grp * group_out * patch, static_cast<int>(patch), b,
                    static_cast<int>(pixels), 0.0f, yg, static_cast<int>(pixels));
      }
      Epilogue(y + n * out_image);
    }
    return Status::Ok();
  }

 private:
  // Bias and Relu over one image's output, one channel plane at a time.
  void Epilogue(float* y) const {
    if (bias_.empty() && !relu_) return;
    const int64_t pixels = g_.out_pixels();
    const bool parallel = !omp_in_parallel() && g_.out_channels * pixels >= (int64_t{1} << 15);
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t c = 0; c < g_.out_channels; ++c) {
      float* plane = y + c * pixels;
      const float b = bias_.empty() ? 0.0f : bias_[static_cast<size_t>(c)];
      if (relu_) {
        for (int64_t p = 0; p < pixels; ++p) plane[p] = std::max(plane[p] + b, 0.0f);
      } else {
        for (int64_t p = 0; p < pixels; ++p) plane[p] += b;
      }
    }
  }

  Conv2dGeometry g_;
  std::vector<float> weights_;  // [M][C/group * KH * KW]: ONNX's layout is already the GEMM's A
  std::vector<float> bias_;     // empty or M values
  bool relu_;
};

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CompileConv(const CompileRequest& request) {
  const Graph& graph = *request.graph;
  const Node* conv = nullptr;
  bool relu = false;
  for (NodeId id : request.node_ids()) {
    const Node& node = graph.node(id);
    if (node.op_type == "Conv") conv = &node;
    if (node.op_type == "Relu") relu = true;
  }
  if (conv == nullptr) return InvalidArgument("the group has no Conv node");
  const Shape& x = graph.value(conv->inputs[0]).type.shape;
  const Shape& w = graph.value(conv->inputs[1]).type.shape;
  COLLAGE_ASSIGN_OR_RETURN(Conv2dGeometry g, ResolveConv2d(*conv, x, w));
  const int64_t limit = INT_MAX;
  if (g.group_out() > limit || g.out_pixels() > limit || g.patch() > limit) {
    return Unsupported("Conv X {} W {} exceeds BLAS's int dims", ShapeToString(x), ShapeToString(w));
  }
  COLLAGE_ASSIGN_OR_RETURN(Operand weights, Operand::Resolve(request, conv->inputs[1]));
  if (!weights.is_constant()) return Unsupported("Conv weights must be a constant");
  std::vector<float> bias;
  if (conv->inputs.size() > 2 && conv->inputs[2] != kNoValue) {
    COLLAGE_ASSIGN_OR_RETURN(Operand b, Operand::Resolve(request, conv->inputs[2]));
    if (!b.is_constant()) return Unsupported("Conv bias must be a constant");
    bias = b.constant();
  }
  if (request.inputs.size() != 1 || request.inputs[0] != conv->inputs[0]) {
    return InvalidArgument("a Conv group reads exactly one non-constant value, X");
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<ConvKernel>(g, weights.constant(), std::move(bias), relu));
}

}  // namespace collage::openblas
