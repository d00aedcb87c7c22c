// 2-D ConvTranspose as one product per image and group, col = Wᵀ · X (the group's weights
// packed once at compile time), then col2im (Col2Im, collage/sdk/op_params.h, the reference
// kernel's): each column is the kernel-sized patch one input pixel scatters, added at stride
// intervals into the output that starts as the bias. Every geometry ReadConvTransposeParams gives
// (groups, strides, dilations, pads, output_padding, output_shape, auto_pad). Where a library's
// direct kernel is weak — one input pixel (a generator's first layer, a matrix-vector product) or a
// few output channels (its last) — the product runs at the BLAS's speed instead; measurement
// decides.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::mkl {

// Rule "conv_transpose": X float32 [N, C, H, W], W and the optional B constants.
bool ConvTranspose2dSupported(const Graph& graph, const Node& node);
StatusOr<std::unique_ptr<Kernel>> CompileConvTranspose(const CompileRequest& request);

}  // namespace collage::mkl
