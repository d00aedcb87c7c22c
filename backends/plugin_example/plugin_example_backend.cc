// The example plug-in backend "plugin_example": clamp-type activations (Relu, LeakyRelu,
// and Clip with constant bounds) on float32 tensors of any shape, in one pass over
// contiguous memory. Small on purpose: it exists to show and test the plug-in contract.
#include <algorithm>
#include <memory>

#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"
#include "collage/sdk/op_params.h"

namespace collage::plugin_example {
namespace {

enum class Activation { kRelu, kLeakyRelu, kClip };

class ActivationKernel : public Kernel {
 public:
  ActivationKernel(Activation activation, int64_t elements, float alpha, float lo, float hi)
      : activation_(activation), elements_(elements), alpha_(alpha), lo_(lo), hi_(hi) {
    input_layouts_ = {Layout::Plain()};
    output_layouts_ = {Layout::Plain()};
  }

  Status Run(const KernelBuffers& buffers) const override {
    const float* x = static_cast<const float*>(buffers.inputs[0]);
    float* y = static_cast<float*>(buffers.outputs[0]);
    switch (activation_) {
      case Activation::kRelu:
        for (int64_t i = 0; i < elements_; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
        break;
      case Activation::kLeakyRelu:
        for (int64_t i = 0; i < elements_; ++i) y[i] = x[i] >= 0.0f ? x[i] : alpha_ * x[i];
        break;
      case Activation::kClip:
        // ONNX Clip propagates NaN; std::clamp would too, but keep it explicit.
        for (int64_t i = 0; i < elements_; ++i) y[i] = x[i] != x[i] ? x[i] : std::min(std::max(x[i], lo_), hi_);
        break;
    }
    return Status();
  }

 private:
  Activation activation_;
  int64_t elements_;
  float alpha_, lo_, hi_;
};

bool IsFloat32(const Graph& graph, ValueId value) {
  return graph.value(value).type.dtype == DType::kFloat32;
}

class PluginExampleBackend : public Backend {
 public:
  PluginExampleBackend() {
    Pattern input = Any().IfValue(IsFloat32);
    rules_.Add(Rule("relu", Op("Relu")(input)));
    rules_.Add(Rule("leaky_relu", Op("LeakyRelu")(input)));
    // The bounds' ONNX semantics (attributes or inputs, by opset) are the SDK's reader's.
    rules_.Add(Rule("clip", Op("Clip")(input, Optional(Const()), Optional(Const())))
                   .Where([](const Match& m) {
                     return ReadClipBounds(*m.graph, m.root_node()).ok();
                   }));
  }

  std::string name() const override { return "plugin_example"; }
  std::string version() const override { return "plugin_example 1.0 scalar"; }
  const RuleSet& rules() const override { return rules_; }

  StatusOr<std::unique_ptr<Kernel>> Compile(const CompileRequest& request) const override {
    std::vector<NodeId> nodes = request.node_ids();
    if (nodes.size() != 1 || request.inputs.size() != 1 || request.outputs.size() != 1) {
      return Unsupported("plugin_example runs single activation nodes only");
    }
    const Graph& graph = *request.graph;
    const Node& node = graph.node(nodes[0]);
    const int64_t elements = request.type(request.outputs[0]).num_elements();
    if (node.op_type == "Relu") {
      return std::unique_ptr<Kernel>(new ActivationKernel(Activation::kRelu, elements, 0, 0, 0));
    }
    if (node.op_type == "LeakyRelu") {
      float alpha = node.attributes.GetFloat("alpha", 0.01f);
      return std::unique_ptr<Kernel>(new ActivationKernel(Activation::kLeakyRelu, elements, alpha, 0, 0));
    }
    if (node.op_type == "Clip") {
      COLLAGE_ASSIGN_OR_RETURN(const ClipBounds<float> bounds, ReadClipBounds(graph, node));
      return std::unique_ptr<Kernel>(
          new ActivationKernel(Activation::kClip, elements, 0, bounds.lo, bounds.hi));
    }
    return Unsupported("plugin_example has no kernel for {}", node.op_type);
  }

 private:
  RuleSet rules_;
};

Status RegisterPluginExample(BackendRegistry& registry) {
  return registry.Register(std::make_unique<PluginExampleBackend>());
}

}  // namespace
}  // namespace collage::plugin_example

COLLAGE_PLUGIN(collage::plugin_example::RegisterPluginExample)
