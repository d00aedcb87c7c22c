// What a backend compiles and what it hands back: a CompileRequest names one group of nodes
// of a graph, a Kernel runs it on buffers in the layouts it declares. Lifecycle, after
// XNNPACK: compiling packs the weights once, Run binds buffers and runs, many times.
#pragma once

#include <algorithm>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collage/precision.h"
#include "collage/sdk/execution_context.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/layout.h"
#include "collage/sdk/subgraph.h"
#include "collage/status.h"

namespace collage {

// The buffers of one kernel run, each in the layout the kernel declared.
struct KernelBuffers {
  std::span<const void* const> inputs;
  std::span<void* const> outputs;
  void* workspace = nullptr;  // workspace_bytes() bytes, 64-byte aligned; null when 0
};

class Kernel {
 public:
  virtual ~Kernel() = default;

  // Runs on the bound buffers. Must be safe to call from several threads at once with
  // different buffers (a kernel over a non-reentrant library object serialises itself).
  virtual Status Run(const KernelBuffers& buffers) const = 0;

  // One per kernel input (CompileRequest::inputs) and output (CompileRequest::outputs).
  const std::vector<Layout>& input_layouts() const { return input_layouts_; }
  const std::vector<Layout>& output_layouts() const { return output_layouts_; }
  size_t workspace_bytes() const { return workspace_bytes_; }

 protected:
  std::vector<Layout> input_layouts_;
  std::vector<Layout> output_layouts_;
  size_t workspace_bytes_ = 0;
};

// What compiling is asked to build: one group of nodes of a graph, offered by the rule or
// fusion named `rule` of the backend compiling it, in an execution context.
struct CompileRequest {
  const Graph* graph = nullptr;
  SubGraph nodes;
  std::string rule;              // the rule or fusion that offered the group
  // The precision to compute in (one the rule declares); inputs and outputs stay as typed.
  Precision precision = Precision::kFloat32;
  std::vector<ValueId> inputs;   // non-constant values the group reads: the kernel inputs
  std::vector<ValueId> outputs;  // values the group produces for others: the kernel outputs
  // The session's (or the measurement's) context: its thread count and the resources the
  // kernels share. A kernel holding one of its resources keeps this pointer.
  std::shared_ptr<ExecutionContext> context;

  // Builds a request from a node set: inputs = SubGraph::Inputs minus constants,
  // outputs = SubGraph::Outputs.
  static CompileRequest For(const Graph& graph, const SubGraph& nodes, std::string rule,
                            std::shared_ptr<ExecutionContext> context);
  // The same in a context of its own with `num_threads` threads (a one-off compile).
  static CompileRequest For(const Graph& graph, const SubGraph& nodes, std::string rule,
                            int num_threads);
  std::vector<NodeId> node_ids() const { return nodes.Nodes(); }
  const TensorType& type(ValueId id) const { return graph->value(id).type; }
  // Which kernel input `value` is (its index in `inputs`), -1 when it is none.
  int input_index(ValueId value) const {
    const auto it = std::find(inputs.begin(), inputs.end(), value);
    return it == inputs.end() ? -1 : static_cast<int>(it - inputs.begin());
  }
  int num_threads() const { return context != nullptr ? context->num_threads() : 1; }
};

}  // namespace collage
