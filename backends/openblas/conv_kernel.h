// 2-D Conv (groups, strides, dilations, explicit or automatic pads, optional bias) as im2col
// + cblas_sgemm per image and group, with an optional Relu in the epilogue.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::openblas {

// Rules "conv" (one Conv node) and "conv_relu" (Conv, then Relu). X is float32 NCHW, W and
// the optional B are constants.
StatusOr<std::unique_ptr<Kernel>> CompileConv(const CompileRequest& request);

}  // namespace collage::openblas
