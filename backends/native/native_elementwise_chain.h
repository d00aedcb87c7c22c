// The fused elementwise chain: a group of elementwise / broadcast nodes evaluated tile by
// tile over the elements of the chain's output shape, so that intermediate values live only
// in small per-thread tile buffers (L1/L2) and never go to memory.
//
// For one tile [begin, begin + n) of the flat output index:
//  - a value with the chain's full element count (a kernel input, a constant, or a value the
//    chain computes) is a 1-D view of n elements: into its buffer when it lives in memory
//    (inputs, constants, outputs of the group), into a tile buffer when it is an
//    intermediate;
//  - a one-element value is passed whole as a rank-0 tensor (the kernels broadcast it);
//  - any other broadcast operand ([C,1,1] bias, [1,C,H,W] against [N,C,H,W], ...) is
//    expanded into a tile buffer with the reference BroadcastPlan (memcpy of contiguous
//    runs, fills of constant runs). Expanding costs one copy per tile and keeps every node's
//    computation a plain 1-D loop over the tile, whatever the broadcast pattern.
// Each node then runs its reference KernelFn on 1-D tile views. Nodes whose outputs are
// smaller than the chain's shape (a [1,C,1,1] value computed from constants, say) cannot be
// tiled this way: they run first, whole, node by node (the prologue), and their results are
// read as broadcast operands.
#pragma once

#include <cstdint>
#include <memory>

#include "collage/sdk/backend.h"

namespace collage::native {

// Elements per tile: 8 KiB per fp32 buffer, so a chain of 8 nodes with a few broadcast
// operands keeps its tile buffers within a core's L2 (and mostly in L1).
inline constexpr int64_t kDefaultTileElements = 2048;

struct ChainOptions {
  int64_t tile_elements = kDefaultTileElements;
};

// Whether `node` may be part of an elementwise chain: a registered default-domain op of kind
// elementwise or broadcast whose broadcasting is numpy's (every data operand broadcasts to
// its outputs, which share one shape), with element types of a fixed size.
// BatchNormalization is filed under kBroadcast but broadcasts its [C] operands along axis 1,
// which a numpy broadcast cannot express: it is never chainable.
bool IsChainableNode(const Graph& graph, const Node& node);

// Whether input `index` of an op is a data operand (read element by element, broadcast to
// the output) rather than a parameter the kernel reads whole or not at all (Expand's shape,
// CastLike's target, Clip's bounds, Dropout's ratio and training mode).
bool IsDataOperand(const Node& node, size_t index);

// Compiles a group of chainable nodes. Errors: a node that is not chainable, outputs whose
// shapes do not broadcast to one shape, or a node smaller than the chain's shape that reads
// a value of the full shape.
StatusOr<std::unique_ptr<Kernel>> CompileElementwiseChain(const CompileRequest& request,
                                                          ChainOptions options = {});

}  // namespace collage::native
