// The reference convolution's loop (ops/conv.cc), for Conv and for the integer convolutions
// (ConvInteger, QLinearConv), which run it on int32 after removing the zero points.
#pragma once

#include "collage/sdk/op_params.h"

namespace collage {

// y = conv(x, w) + bias (bias may be null) with the geometry g, NCHW-style plain layouts.
// Instantiated for float, double and int32_t (integers wrap on overflow).
template <typename T>
void ConvTyped(const ConvParams& g, const T* x, const T* w, const T* bias, T* y);

}  // namespace collage
