#include "conv_kernel.h"

#include <mkl_cblas.h>

#include <algorithm>

#include "backend/shared/im2col_conv_group.h"
#include "collage/sdk/errors.h"
#include "mkl_threads.h"
#include "packed_matrix.h"

namespace collage::mkl {
namespace {

// Below this many output elements the epilogue's parallel region costs more than it saves.

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
    const int64_t pixels = g_.out_pixels();
    const int64_t patch = g_.patch();
    MklThreadScope threads(num_threads_);
    RunIm2colConv(
        g_, static_cast<const float*>(buffers.inputs[0]), static_cast<float*>(buffers.outputs[0]),
        static_cast<float*>(buffers.workspace),
        [&](int64_t grp, const float* patches, float* out) {
          cblas_sgemm_compute(CblasRowMajor, CblasPacked, CblasNoTrans,
                              static_cast<MKL_INT>(g_.group_out()), static_cast<MKL_INT>(pixels),
                              static_cast<MKL_INT>(patch), weights_[static_cast<size_t>(grp)].data(),
                              static_cast<MKL_INT>(patch), patches, static_cast<MKL_INT>(pixels),
                              0.0f, out, static_cast<MKL_INT>(pixels));
        },
        [&](float* image_out) { AddBiasRelu(g_, image_out, bias_, relu_, num_threads_); });
    return Status::Ok();
  }

 private:
  Conv2dGeometry g_;
  std::vector<PackedMatrix> weights_;
  std::vector<float> bias_;  // empty or M values
  bool relu_;
  int num_threads_;
};

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CompileConv(const CompileRequest& request) {
  COLLAGE_ASSIGN_OR_RETURN(Im2colConvGroup conv, ReadIm2colConvGroup(request));
  const Conv2dGeometry& g = conv.geometry;
  std::vector<PackedMatrix> packed;
  const GemmDims dims{g.group_out(), g.out_pixels(), g.patch()};
  if (dims.m > 0 && dims.n > 0 && dims.k > 0) {
    for (int64_t grp = 0; grp < g.group; ++grp) {
      COLLAGE_ASSIGN_OR_RETURN(
          PackedMatrix a, PackedMatrix::Pack(CblasAMatrix, CblasNoTrans, dims, 1.0f,
                                             conv.weights.data() + grp * dims.m * dims.k, dims.k,
                                             request.num_threads()));
      packed.push_back(std::move(a));
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<ConvKernel>(
      g, std::move(packed), std::move(conv.bias), conv.relu, request.num_threads()));
}

}  // namespace collage::mkl
