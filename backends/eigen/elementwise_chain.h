// A chain of elementwise ops (the "elementwise_chain" fusion) compiled into one kernel. The
// kernel walks the flat output index in tiles small enough that every intermediate of a tile
// stays in the L1 cache: per tile, each op runs as an Eigen array expression over the tile
// of its operands, so intermediates never travel to memory; only the group's inputs are read
// and its outputs written. Tiles are shared out over the OpenMP team.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"

namespace collage::eigen {

// The largest chain the kernel takes (the fusion's MaxOps): its tiles live on the stack.
inline constexpr int kMaxChainOps = 8;

// Every node must pass ChainSupportsNode (elementwise_ops.h) and produce the same shape.
StatusOr<std::unique_ptr<Kernel>> CompileElementwiseChain(const CompileRequest& request);

}  // namespace collage::eigen
