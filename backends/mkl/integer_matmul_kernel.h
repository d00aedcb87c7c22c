// MatMulInteger on MKL's cblas_gemm_s8u8s32, as ONNX Runtime's dynamic quantization writes
// it: uint8 activations with a run-time zero point (DynamicQuantizeLinear's) times constant
// int8 weights with no zero point, exact int32 sums.
//
// MKL multiplies unsigned by signed 8-bit values and adds a row of offsets to every output
// row; its one 8-bit offset for A cannot hold a uint8 zero point up to 255, so the kernel
// multiplies A as it is and subtracts zero_point x (each weight column's sum) through that row
// of offsets: sum_k (a - z) w = sum_k a w - z sum_k w, exact in int32.
//
// Exact only where MKL multiplies 8-bit integers into 32-bit sums (AVX-512 VNNI, which every
// CPU with AMX has too); elsewhere it adds pairs of uint8 x int8 products in int16
// (vpmaddubsw), which saturates unless the weights fit in 7 bits (255 x 64 x 2 < 32768), as
// quantizers' reduce_range makes them: measured with MKL restricted to AVX2 and to AVX-512
// without VNNI, full-range weights came out off in every output of a 2051-long sum, 7-bit
// weights exact.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"
#include "collage/sdk/pattern.h"

namespace collage::mkl {

// The rule's constraint: A uint8 (any rank), B a constant 2-D int8 whose sums MKL computes
// exactly on this CPU, A's zero point absent or one uint8 value, B's absent or zeros, and
// sums that fit int32 whatever the data.
bool IntegerMatMulSupported(const Match& match);

// Rule "matmul_integer": one MatMulInteger node.
StatusOr<std::unique_ptr<Kernel>> CompileIntegerMatMul(const CompileRequest& request);

}  // namespace collage::mkl
