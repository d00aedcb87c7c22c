#include "native_node_sequence.h"

#include "collage/sdk/errors.h"

namespace collage::native {

StatusOr<NodeSequence> NodeSequence::Build(const Graph& graph, const std::vector<NodeId>& nodes,
                                           GroupValues& values) {
  NodeSequence seq;
  seq.opset_ = graph.opset();
  for (NodeId id : nodes) {
    const Node& node = graph.node(id);
    const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type);
    if (def == nullptr) {
      return Unsupported("{} node '{}': op is not supported", node.op_type, node.name);
    }
    for (ValueId in : node.inputs) {
      if (in != kNoValue && !values.Has(in)) {
        return Internal("{} node '{}': input '{}' is neither an input of the group nor computed "
                        "before it",
                        node.op_type, node.name, graph.value(in).name);
      }
    }
    for (ValueId out : node.outputs) {
      if (out != kNoValue) values.PlaceInWorkspace(out);
    }
    seq.steps_.push_back(Step{node, def});
  }
  return seq;
}

Status NodeSequence::Run(const GroupValues& values, const KernelBuffers& buffers) const {
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  for (const Step& step : steps_) {
    inputs.clear();
    outputs.clear();
    for (ValueId in : step.node.inputs) {
      inputs.push_back(in == kNoValue ? Tensor() : values.View(in, buffers));
    }
    for (ValueId out : step.node.outputs) {
      outputs.push_back(out == kNoValue ? Tensor() : values.View(out, buffers));
    }
    KernelContext ctx{step.node, opset_, inputs, outputs};
    COLLAGE_RETURN_IF_ERROR(step.def->run(ctx));
  }
  return Status::Ok();
}

namespace {

class NodeByNodeKernel final : public Kernel {
 public:
  NodeByNodeKernel(GroupValues values, NodeSequence sequence, size_t num_inputs,
                   size_t num_outputs)
      : values_(std::move(values)), sequence_(std::move(sequence)) {
    input_layouts_.assign(num_inputs, Layout::Plain());
    output_layouts_.assign(num_outputs, Layout::Plain());
    workspace_bytes_ = values_.workspace_bytes();
  }

  Status Run(const KernelBuffers& buffers) const override {
    return sequence_.Run(values_, buffers);
  }

 private:
  GroupValues values_;
  NodeSequence sequence_;
};

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CompileNodeByNode(const CompileRequest& request) {
  GroupValues values(request);
  COLLAGE_ASSIGN_OR_RETURN(NodeSequence sequence,
                           NodeSequence::Build(*request.graph, request.node_ids(), values));
  return std::unique_ptr<Kernel>(new NodeByNodeKernel(std::move(values), std::move(sequence),
                                                      request.inputs.size(),
                                                      request.outputs.size()));
}

}  // namespace collage::native
