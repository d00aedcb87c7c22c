// Concat along the channels, then an inference BatchNormalization, then optionally Relu,
// LeakyRelu or Clip, in one pass: each input's channels are normalised and activated straight
// into their place in the output. A pre-activation network (DenseNet) joins every feature map
// so far before each layer's BatchNormalization; run as two kernels, the join writes the whole
// concatenation once more per layer only for the normalisation to read it back.
//
// Plain (NCHW...) and channels-last (NHWC...) forms: the channels-last one sits between
// kernels of a library that keeps images channels-last (oneDNN's convolutions on AVX-512,
// XNNPACK's) without a layout conversion.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::native {

// Concat(axis 1 of a float32 tensor of rank >= 2) → BatchNormalization (inference, constant
// per-channel parameters) → optional Relu / LeakyRelu / Clip (constant bounds). For the
// channels-last form the rank is 3 to 5.
Pattern ConcatBatchNormPattern();
bool ConcatBatchNormOk(const Match& match, bool channels_last);

StatusOr<std::unique_ptr<Kernel>> CompileConcatBatchNorm(const CompileRequest& request,
                                                         const Match& match, bool channels_last);

}  // namespace collage::native
