// The example plug-in backend "plugin_example": clamp-type activations (Relu, LeakyRelu,
// and Clip with constant bounds) on float32 tensors of any shape, in one pass over
// contiguous memory. Small on purpose: it exists to show and test the plug-in contract.
#include <algorithm>
#include <limits>
#include <memory>

#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"

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

// A Clip bound: the attribute before opset 11, an optional constant scalar input after.
bool ClipBound(const Graph& graph, const Node& node, size_t input, const char* attribute,
               float default_value, float* bound) {
  if (graph.opset() < 11) {
    *bound = node.attributes.GetFloat(attribute, default_value);
    return true;
  }
  if (input >= node.inputs.size() || node.inputs[input] == kNoValue) {
    *bound = default_value;
    return true;
  }
  const Value& value = graph.value(node.inputs[input]);
  if (!value.is_constant() || value.constant->num_elements() != 1 ||
      value.constant->dtype() != DType::kFloat32) {
    return false;
  }
  *bound = value.constant->data_as<float>()[0];
  return true;
}

class PluginExampleBackend : public Backend {
 public:
  PluginExampleBackend() {
    Pattern input = Any().IfValue(IsFloat32);
    rules_.Add(Rule("relu", Op("Relu")(input)));
    rules_.Add(Rule("leaky_relu", Op("LeakyRelu")(input)));
    rules_.Add(Rule("clip", Op("Clip")(input, Optional(Const()), Optional(Const())))
                   .Where([](const Match& m) {
                     float lo, hi;
                     return ClipBound(*m.graph, m.root_node(), 1, "min", 0, &lo) &&
                            ClipBound(*m.graph, m.root_node(), 2, "max", 0, &hi);
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
      float lo = 0, hi = 0;
      if (!ClipBound(graph, node, 1, "min", std::numeric_limits<float>::lowest(), &lo) ||
          !ClipBound(graph, node, 2, "max", std::numeric_limits<float>::max(), &hi)) {
        return Unsupported("Clip bounds must be constant float32 scalars");
      }
      return std::unique_ptr<Kernel>(new ActivationKernel(Activation::kClip, elements, 0, lo, hi));
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
