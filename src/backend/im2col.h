// im2col for 2-D convolution: lays the receptive fields of one image and one group out as a
// [channels * kh * kw] x [oh * ow] row-major matrix, so that the convolution is one GEMM of
// the group's weights [out channels x channels * kh * kw] by it. Shared by the BLAS backends
// (openblas, mkl), which differ only in the GEMM they run on it.
#pragma once

#include <cstdint>

#include "collage/status.h"
#include "ir/graph.h"

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

// The geometry of a Conv node whose X is [N, C, H, W] and W is [M, C/group, KH, KW]: group,
// strides, dilations, explicit pads or auto_pad (SAME_UPPER, SAME_LOWER, VALID) as the ONNX
// spec defines them. Unsupported for other ranks.
StatusOr<Conv2dGeometry> ReadConv2dGeometry(const Node& node, const Shape& x, const Shape& w);

// col[patch() x out_pixels()] from x, the group_in() channels of one image and group
// (channel-major, in_h x in_w each). Zero where a tap falls in the padding. Parallel over
// the rows on the OpenMP team when outside a parallel region and big enough.
void Im2Col(const Conv2dGeometry& g, const float* x, float* col);

}  // namespace collage
