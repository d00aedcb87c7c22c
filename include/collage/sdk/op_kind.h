// How an op relates its outputs to its inputs; the fusion generators grow groups by kind
// (TVM's pattern kinds, which the Collage paper's generators also use).
#pragma once

namespace collage {

enum class OpKind {
  kElementwise,       // output[i] depends on input[i] only, same shape (Relu, Add of equal shapes)
  kBroadcast,         // elementwise with numpy broadcasting (Add, Where, Expand)
  kInjective,         // each output element reads one input element (Reshape, Transpose, Slice)
  kReduction,         // reduces along axes (ReduceMean, Softmax, LayerNormalization)
  kOutEWiseFusable,   // heavy op whose output can take an elementwise epilogue (Conv, MatMul)
  kOpaque,            // anything else (LSTM, Resize, Shape)
};

const char* OpKindName(OpKind kind);

}  // namespace collage
