#include "conv_kernel.h"

#include <mkl_cblas.h>
#include <omp.h>

#include <algorithm>

#include "backend/find_node.h"
#include "backend/im2col.h"
#include "backend/operand.h"
#include "mkl_threads.h"
#include "packed_matrix.h"
#include "util/errors.h"

namespace collage::mkl {
namespace {

// Below this many output elements the epilogue's parallel region costs more than it saves.
constexpr int64_t kParallelMinElements = int64_t{1} << 15;

class ConvKernel final : public Kernel {
 public:
  // `weights`: one packed A [group_out x patch] per group; empty when the GEMMs are empty.
  ConvKernel(const Conv2dGeometry& g, std::vector<PackedMatrix> weights, std::vector<float> bias,
             bool relu, int num_threads)
      : g_(g),
        weights_(std::move(weights)),
        bias_(std::move(bias)),
        relu_(relu),
        num_threads_(std::max(1, num_threads)) {
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
    const int64_t group_out = g_.group_out();
    if (out_image == 0) return Status::Ok();
    MklThreadScope threads(num_threads_);
    for (int64_t n = 0; n < g_.batch; ++n) {
      for (int64_t grp = 0; grp < g_.group; ++grp) {
        float* yg = y + n * out_image + grp * group_out * pixels;
        if (weights_.empty()) {  // no input channels: the sum is empty
          std::fill(yg, yg + group_out * pixels, 0.0f);
          continue;
        }
        const float* b = x + n * in_image + grp * in_group;
        if (!g_.pointwise()) {
          Im2Col(g_, b, col);
          b = col;
        }
        cblas_sgemm_compute(
            CblasRowMajor, CblasPacked, CblasNoTrans, static_cast<MKL_INT>(group_out),
            static_cast<MKL_INT>(pixels), static_cast<MKL_INT>(g_.patch()),
            weights_[static_cast<size_t>(grp)].data(), static_cast<MKL_INT>(g_.patch()), b,
            static_cast<MKL_INT>(pixels), 0.0f, yg, static_cast<MKL_INT>(pixels));
      }
      Epilogue(y + n * out_image);
    }
    return Status::Ok();
  }

 private:
  // Bias and Relu over one image's output, one channel plane at a time, on the kernel's
  // threads. std::max(v, 0) is (v < 0 ? 0 : v): it keeps NaN, as ONNX's Relu does.
  void Epilogue(float* y) const {
    if (bias_.empty() && !relu_) return;
    const int64_t pixels = g_.out_pixels();
    const bool parallel = !omp_in_parallel() && g_.out_channels * pixels >= kParallelMinElements;
#pragma omp parallel for schedule(static) num_threads(num_threads_) if (parallel)
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
  std::vector<PackedMatrix> weights_;
  std::vector<float> bias_;  // empty or M values
  bool relu_;
  int num_threads_;
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
  if (!FitsMklInt(g.group_out()) || !FitsMklInt(g.out_pixels()) || !FitsMklInt(g.patch())) {
    return Unsupported("Conv X {} W {} exceeds MKL's int dims", ShapeToString(x), ShapeToString(w));
  }
  if (request.inputs.size() != 1 || request.inputs[0] != conv->inputs[0]) {
    return InvalidArgument("a Conv group reads exactly one non-constant value, X");
  }
  COLLAGE_ASSIGN_OR_RETURN(Operand weights, Operand::Resolve(request, conv->inputs[1]));
  if (!weights.is_constant()) return Unsupported("Conv weights must be a constant");
  std::vector<float> bias;
  if (conv->inputs.size() > 2 && conv->inputs[2] != kNoValue) {
    COLLAGE_ASSIGN_OR_RETURN(Operand b, Operand::Resolve(request, conv->inputs[2]));
    if (!b.is_constant()) return Unsupported("Conv bias must be a constant");
    bias = b.constant();
  }
  // ONNX's weight layout [M][C/group * KH * KW] already is each group's GEMM A, row-major.
  std::vector<PackedMatrix> packed;
  const GemmDims dims{g.group_out(), g.out_pixels(), g.patch()};
  if (dims.m > 0 && dims.n > 0 && dims.k > 0) {
    for (int64_t grp = 0; grp < g.group; ++grp) {
      COLLAGE_ASSIGN_OR_RETURN(PackedMatrix a,
                               PackedMatrix::Pack(CblasAMatrix, CblasNoTrans, dims, 1.0f,
                                                  weights.constant().data() + grp * dims.m * dims.k,
                                                  dims.k, request.num_threads));
      packed.push_back(std::move(a));
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<ConvKernel>(g, std::move(packed), std::move(bias),
                                                              relu, request.num_threads));
}

}  // namespace collage::mkl
