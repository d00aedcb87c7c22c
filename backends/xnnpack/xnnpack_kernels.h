// The operator-level kernels of the `xnnpack` backend and the region kernel of
// `xnnpack_graph`. Each Compile* builds one XNNPACK object from a group that the rules
// (xnnpack_rules.cc) offered; weights are packed by XNNPACK at creation, once.
#pragma once

#include <memory>

#include "collage/sdk/backend.h"
#include "xnnpack_analysis.h"
#include "xnnpack_util.h"

namespace collage::xnnpack {

// One op-level group: a main node, for a MatMul optionally followed by a bias Add, then
// optionally a Relu/Clip fused as the operator's output range.
struct OpGroup {
  const Graph* graph = nullptr;
  const Node* main = nullptr;
  const Node* bias_add = nullptr;  // MatMul: a following Add of a bias vector
  ClampRange clamp;
  bool channels_last = false;  // elementwise ops: the rule's channels-last variant
  ValueId output = kNoValue;   // the group's (single) output
};

using KernelOr = StatusOr<std::unique_ptr<Kernel>>;

// What every `xnnpack` rule compiles with: the group its match names (xnnpack_backend.cc),
// elementwise ops channels-last when `channels_last`.
KernelOr CompileOperatorGroup(const CompileRequest& request, const Match& match,
                              bool channels_last);
// What every `xnnpack_graph` rule and fusion compiles with: CompileSubgraph on the pool.
KernelOr CompileRegion(const CompileRequest& request);

KernelOr CompileConv(const OpGroup& group, const PoolHandle& pool);
KernelOr CompileFc(const OpGroup& group, const PoolHandle& pool);
KernelOr CompilePool(const OpGroup& group, const PoolHandle& pool);
// `inputs` are the request's kernel inputs: a binary op's operands map onto them by value.
KernelOr CompileBinary(const OpGroup& group, const std::vector<ValueId>& inputs,
                       const PoolHandle& pool);
KernelOr CompileUnary(const OpGroup& group, const PoolHandle& pool);
KernelOr CompileSoftmax(const OpGroup& group, const PoolHandle& pool);

// A whole region through the subgraph API (xnn_create_runtime_v2).
bool SubgraphSupports(const Graph& graph, const Node& node);
KernelOr CompileSubgraph(const CompileRequest& request, const PoolHandle& pool);

inline uint32_t U32(int64_t v) { return static_cast<uint32_t>(v); }
inline size_t Sz(int64_t v) { return static_cast<size_t>(v); }

}  // namespace collage::xnnpack
