// The op families: each file under src/ops/ defines one family and registers its ops in one
// function, called once when the global registry is built (op_registry.cc). Internal to the
// library: applications and backends find ops through OpRegistry.
#pragma once

#include "collage/sdk/op_registry.h"

namespace collage {

void RegisterConvOps(OpRegistry& registry);           // conv.cc: Conv
void RegisterConvTransposeOps(OpRegistry& registry);  // conv_transpose.cc: ConvTranspose
void RegisterPoolOps(OpRegistry& registry);           // pool.cc: MaxPool, AveragePool, Global*Pool
void RegisterGemmOps(OpRegistry& registry);           // gemm.cc: MatMul, Gemm
void RegisterNormalizationOps(
    OpRegistry& registry);  // normalization.cc: BatchNormalization, LayerNormalization
void RegisterUnaryOps(OpRegistry& registry);  // unary.cc: Relu, Sigmoid, Cast, Not, ...
void RegisterBinaryOps(
    OpRegistry& registry);  // binary.cc: Add, Mul, Pow, Equal, Where, PRelu, Min, Max, ...
void RegisterReductionOps(
    OpRegistry& registry);  // reduction.cc: ReduceMean/Sum/Max, Softmax, LogSoftmax
void RegisterShapeOps(OpRegistry& registry);  // shape_ops.cc: Reshape, Flatten, Squeeze, Unsqueeze,
                                              // Shape, Size, Constant, ConstantOfShape, Range
void RegisterSliceOps(OpRegistry& registry);  // slice_ops.cc: Slice, Split, Concat
void RegisterGatherOps(OpRegistry& registry);  // gather_ops.cc: Gather, GatherElements, OneHot
void RegisterLayoutOps(OpRegistry& registry);  // layout_ops.cc: Transpose, Expand, Tile, Pad, Trilu
void RegisterResizeOps(OpRegistry& registry);  // resize.cc: Resize, Upsample
void RegisterRecurrentOps(OpRegistry& registry);  // recurrent.cc: LSTM, GRU, RNN
void RegisterQuantizeOps(
    OpRegistry& registry);  // quantize.cc: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
void RegisterIntegerMatMulOps(
    OpRegistry& registry);  // integer_matmul.cc: MatMulInteger, QLinearMatMul
void RegisterIntegerConvOps(OpRegistry& registry);  // integer_conv.cc: ConvInteger, QLinearConv
void RegisterQLinearContribOps(
    OpRegistry& registry);  // qlinear_contrib.cc: com.microsoft QLinear* ops, QGemm
void RegisterGeluContribOps(
    OpRegistry& registry);  // gelu_contrib.cc: com.microsoft Gelu, FastGelu, BiasGelu, QuickGelu
void RegisterSkipLayerNormOps(OpRegistry& registry);  // skip_layer_norm.cc: com.microsoft
                                                      // Skip(Simplified)LayerNormalization
void RegisterEmbedLayerNormOps(
    OpRegistry& registry);  // embed_layer_norm.cc: com.microsoft EmbedLayerNormalization
void RegisterAttentionOps(OpRegistry& registry);  // attention.cc: com.microsoft Attention
void RegisterScatterOps(
    OpRegistry& registry);  // scatter_ops.cc: ScatterElements, Scatter, ScatterND, GatherND
void RegisterCumSumOps(OpRegistry& registry);     // cumsum.cc: CumSum
void RegisterTopKOps(OpRegistry& registry);       // topk.cc: TopK
void RegisterEinsumOps(OpRegistry& registry);     // einsum.cc: Einsum
void RegisterSamplingOps(OpRegistry& registry);   // sampling_ops.cc: GridSample, RoiAlign
void RegisterRearrangeOps(OpRegistry& registry);  // rearrange_ops.cc: DepthToSpace, SpaceToDepth,
                                                  // ReverseSequence, EyeLike

void RegisterSelectionOps(
    OpRegistry& registry);  // selection_ops.cc: NonZero, Compress, Unique, NonMaxSuppression
void RegisterSignalOps(OpRegistry& registry);     // signal_ops.cc: DFT, STFT, MelWeightMatrix
void RegisterDetOps(OpRegistry& registry);        // det.cc: Det
void RegisterMaxUnpoolOps(OpRegistry& registry);  // max_unpool.cc: MaxUnpool

}  // namespace collage
