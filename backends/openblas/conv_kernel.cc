#include "conv_kernel.h"

#include <cblas.h>
#include <omp.h>

#include "backend/shared/im2col_conv_group.h"
#include "blas_threads.h"
#include "collage/sdk/errors.h"

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
    const int64_t pixels = g_.out_pixels();
    const int64_t patch = g_.patch();
    const int64_t group_out = g_.group_out();
    RunIm2colConv(
        g_, static_cast<const float*>(buffers.inputs[0]), static_cast<float*>(buffers.outputs[0]),
        static_cast<float*>(buffers.workspace),
        [&](int64_t grp, const float* patches, float* out) {
          BlasThreadScope threads;
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(group_out),
                      static_cast<int>(pixels), static_cast<int>(patch), 1.0f,
                      weights_.data() + grp * group_out * patch, static_cast<int>(patch), patches,
                      static_cast<int>(pixels), 0.0f, out, static_cast<int>(pixels));
        },
        // On the caller's OpenMP team, as the GEMM.
        [&](float* image_out) {
          AddBiasRelu(g_, image_out, bias_, relu_, omp_get_max_threads());
        });
    return Status::Ok();
  }

 private:
  Conv2dGeometry g_;
  std::vector<float> weights_;  // [M][C/group * KH * KW]: ONNX's layout is already the GEMM's A
  std::vector<float> bias_;     // empty or M values
  bool relu_;
};

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CompileConv(const CompileRequest& request) {
  COLLAGE_ASSIGN_OR_RETURN(Im2colConvGroup conv, ReadIm2colConvGroup(request));
  return std::unique_ptr<Kernel>(std::make_unique<ConvKernel>(
      conv.geometry, std::move(conv.weights), std::move(conv.bias), conv.relu));
}

}  // namespace collage::openblas
