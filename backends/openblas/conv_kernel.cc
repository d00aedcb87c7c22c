#include "conv_kernel.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "backend/find_node.h"
#include "backend/im2col.h"
#include "backend/operand.h"
#include "blas_threads.h"
#include "util/errors.h"

namespace collage::openblas {
namespace {

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
  const Node* conv = FindNode(request, "Conv");
  const bool relu = FindNode(request, "Relu") != nullptr;
  if (conv == nullptr) return InvalidArgument("the group has no Conv node");
  const Shape& x = graph.value(conv->inputs[0]).type.shape;
  const Shape& w = graph.value(conv->inputs[1]).type.shape;
  COLLAGE_ASSIGN_OR_RETURN(Conv2dGeometry g, ReadConv2dGeometry(*conv, x, w));
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
