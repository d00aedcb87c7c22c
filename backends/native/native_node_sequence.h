// Nodes run one after the other on the reference kernels (src/ops), each on tensor views of
// the kernel's buffers. The `op` rule compiles one node this way; the injective chain and
// the prologue of the elementwise chain run several, with their intermediate values in the
// workspace (materialised in memory: this is not loop fusion).
#pragma once

#include <memory>
#include <vector>

#include "collage/sdk/backend.h"
#include "native_group_values.h"
#include "collage/sdk/op_registry.h"

namespace collage::native {

class NodeSequence {
 public:
  // `nodes` in topological order. Every output a node writes that has no home yet (an
  // intermediate, or an output nothing reads) gets a region of the workspace in `values`;
  // kNoValue outputs stay empty Tensors, as the runtime has always passed them.
  static StatusOr<NodeSequence> Build(const Graph& graph, const std::vector<NodeId>& nodes,
                                      GroupValues& values);

  // Thread-safe: reads only the compiled steps.
  Status Run(const GroupValues& values, const KernelBuffers& buffers) const;
  bool empty() const { return steps_.empty(); }

 private:
  struct Step {
    Node node;  // a copy, so the kernel does not depend on the graph's lifetime
    const OpDef* def = nullptr;
  };
  std::vector<Step> steps_;
  int64_t opset_ = 0;
};

// The kernel of the `op` rule and of the injective chain: the group's nodes, node by node.
StatusOr<std::unique_ptr<Kernel>> CompileNodeByNode(const CompileRequest& request);

}  // namespace collage::native
