// Small random graphs covering the ops backends typically accept, from a fixed seed: each is
// one op (sometimes with an epilogue or a short chain) with random shapes and attributes, so
// that a backend's rules meet the corner cases the zoo models never show (odd channel
// counts, asymmetric pads, dilations, broadcast forms, transposed GEMM operands, ...).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/sdk/graph.h"

namespace collage::backend_ops {

struct SourceGraph {
  std::string name;  // "resnet50", "random.conv2d.3"
  Graph graph;
};

// `per_family` graphs of each family (conv2d, conv3d, conv1d, conv_transpose, matmul, gemm,
// pool, global_pool, batch_norm, layer_norm, softmax, unary, binary, fused, chain,
// transpose, reshape, recurrent). The unary and binary families have at least one graph per
// op (binary: one in float32, one maybe in an integer dtype), the fused family every pairing
// of a common heavy op with a common activation, the recurrent family each of LSTM, GRU and
// RNN. A configuration the op registry's type inference refuses is redrawn, so the same seed
// always gives the same graphs.
std::vector<SourceGraph> RandomGraphs(uint64_t seed, int per_family);

}  // namespace collage::backend_ops
