// 2-D Conv (groups, strides, dilations, explicit or automatic pads, optional bias) as im2col
// (src/backend/shared/im2col.h) + cblas_sgemm_compute per image and group on the group's weights,
// packed once at compile time, with an optional Relu in the epilogue.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::mkl {

// Rules "conv" (one Conv node) and "conv_relu" (Conv, then Relu). X is float32 NCHW, W and
// the optional B are constants.
StatusOr<std::unique_ptr<Kernel>> CompileConv(const CompileRequest& request);

}  // namespace collage::mkl
