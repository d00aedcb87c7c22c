// im2col for 2-D convolution: lays the receptive fields of one image and one group out as a
// [channels * kh * kw] x [oh * ow] row-major matrix, so that the convolution is one GEMM of
// the group's weights [out channels x channels * kh * kw] by it. Shared by the BLAS backends
// (openblas, mkl), which differ only in the GEMM they run on it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "collage/sdk/graph.h"
#include "collage/status.h"

namespace collage {

struct Conv2dGeometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  int64_t in_h = 0, in_w = 0, kernel_h = 0, kernel_w = 0, out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;  // the bottom/right pads only shape out_h/out_w

  int64_t group_in() const { return in_channels / group; }
  int64_t group_out() const { return out_channels / group; }
  int64_t patch() const { return group_in() * kernel_h * kernel_w; }  // GEMM reduction size
  int64_t out_pixels() const { return out_h * out_w; }
  // A 1x1 kernel with unit strides and no padding reads the input as it lies: no im2col.
  bool pointwise() const {
    return kernel_h == 1 && kernel_w == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 &&
           pad_left == 0 && out_h == in_h && out_w == in_w;
  }
};

// The geometry of a Conv node whose X is [N, C, H, W] and W is [M, C/group, KH, KW], as
// ReadConvParams (collage/sdk/op_params.h) reads it. Unsupported for other ranks.
StatusOr<Conv2dGeometry> ReadConv2dGeometry(const Node& node, const Shape& x, const Shape& w);

// col[patch() x out_pixels()] from x, the group_in() channels of one image and group
// (channel-major, in_h x in_w each). Zero where a tap falls in the padding. Parallel over
// the rows on the OpenMP team when outside a parallel region and big enough.
void Im2Col(const Conv2dGeometry& g, const float* x, float* col);

// The whole convolution over plain NCHW x and y: for every image and group, im2col into `col`
// (patch() x out_pixels() floats; unused when pointwise) and `gemm(group, patches, out)`,
// which must compute out[group_out() x out_pixels()] = W_group[group_out() x patch()] *
// patches[patch() x out_pixels()]; then `epilogue(image_out)` once per image. A group with no
// input channels gets zeros without a GEMM.
template <typename Gemm, typename Epilogue>
void RunIm2colConv(const Conv2dGeometry& g, const float* x, float* y, float* col, Gemm&& gemm,
                   Epilogue&& epilogue) {
  const int64_t in_image = g.in_channels * g.in_h * g.in_w;
  const int64_t in_group = g.group_in() * g.in_h * g.in_w;
  const int64_t pixels = g.out_pixels();
  const int64_t out_image = g.out_channels * pixels;
  if (out_image == 0) return;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.group; ++grp) {
      float* out = y + n * out_image + grp * g.group_out() * pixels;
      if (g.patch() == 0) {
        std::fill(out, out + g.group_out() * pixels, 0.0f);
        continue;
      }
      const float* patches = x + n * in_image + grp * in_group;
      if (!g.pointwise()) {
        Im2Col(g, patches, col);
        patches = col;
      }
      gemm(grp, patches, out);
    }
    epilogue(y + n * out_image);
  }
}

// Adds the per-channel bias (empty: none) and applies Relu (std::max(v, 0) keeps NaN, as
// ONNX's Relu does) over one image's output, a channel plane at a time, on `num_threads`
// OpenMP threads when outside a parallel region and big enough.
void AddBiasRelu(const Conv2dGeometry& g, float* image_out, std::span<const float> bias, bool relu,
                 int num_threads);

}  // namespace collage
