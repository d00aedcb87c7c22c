// The elementwise chain on channels-last data: the same fused kernel as
// native_elementwise_chain.h, for groups that sit between kernels of another library that
// keep images channels-last (oneDNN's and XNNPACK's convolutions). Without it every
// elementwise op there (a SiLU's Sigmoid and Mul, a squeeze-and-excitation scale, a residual
// Add) costs two layout conversions around a plain-layout kernel.
//
// An elementwise op commutes with any permutation of its operands' dims, and numpy
// broadcasting is preserved when every operand is first aligned to the chain's rank and then
// permuted the same way. So the chain is compiled on a copy of the graph in which every data
// value of the group has its channels-last shape (dim 1 moved last; constants re-laid out),
// and the unchanged tiled kernel runs on it: a channels-last buffer holds exactly the plain
// bytes of that permuted shape.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::native {

// Whether `node` may join a channels-last chain: chainable (IsChainableNode), its outputs of
// rank 4 or 5 (images and volumes; lower ranks rarely meet a channels-last producer, and
// offering them would double the candidates of every sequence model), no axis attribute (it
// would need remapping), not Expand (its shape operand would), and every non-constant data
// operand of lower rank is one whose plain bytes are already channels-last (one channel or
// one spatial position once aligned).
bool IsChannelsLastChainableNode(const Graph& graph, const Node& node);

// Compiles a group of such nodes, all of one output rank. Inputs of the chain's rank and
// every output are channels-last; lower-rank inputs are plain (their bytes are the same).
StatusOr<std::unique_ptr<Kernel>> CompileChannelsLastChain(const CompileRequest& request);

}  // namespace collage::native
