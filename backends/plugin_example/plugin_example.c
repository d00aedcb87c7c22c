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

StatusOr<std::unique_ptr<Kernel>> MakeKernel(const CompileRequest& request, Activation activation,
                                             float alpha, float lo, float hi) {
  const int64_t elements = request.type(request.outputs[0]).num_elements();
  return std::unique_ptr<Kernel>(new ActivationKernel(activation, elements, alpha, lo, hi));
}

// Each rule carries the function compiling what it matched; the match names the nodes
// (here the root: the activation itself).
class PluginExampleBackend : public Backend {
 public:
  PluginExampleBackend() {
    Pattern input = Any().IfValue(IsFloat32);
    rules_.Add(
        Rule("relu", Op("Relu")(input)).Compiles([](const CompileRequest& request, const Match&) {
          return MakeKernel(request, Activation::kRelu, 0, 0, 0);
        }));
    rules_.Add(Rule("leaky_relu", Op("LeakyRelu")(input))
                   .Compiles([](const CompileRequest& request, const Match& match) {
                     const float alpha = match.root_node().attributes.GetFloat("alpha", 0.01f);
                     return MakeKernel(request, Activation::kLeakyRelu, alpha, 0, 0);
                   }));
    // The bounds' ONNX semantics (attributes or inputs, by opset) are the SDK's reader's.
    rules_.Add(
        Rule("clip", Op("Clip")(input, Optional(Const()), Optional(Const())))
            .Where([](const Match& m) { return ReadClipBounds(*m.graph, m.root_node()).ok(); })
            .Compiles([](const CompileRequest& request,
                         const Match& match) -> StatusOr<std::unique_ptr<Kernel>> {
              COLLAGE_ASSIGN_OR_RETURN(const ClipBounds<float> bounds,
                                       ReadClipBounds(*match.graph, match.root_node()));
              return MakeKernel(request, Activation::kClip, 0, bounds.lo, bounds.hi);
            }));
  }

  std::string name() const override { return "plugin_example"; }
  std::string version() const override { return "plugin_example 1.0 scalar"; }
  const RuleSet& rules() const override { return rules_; }

 private:
  RuleSet rules_;
};

Status RegisterPluginExample(BackendRegistry& registry) {
  return registry.Register(std::make_unique<PluginExampleBackend>());
}

}  // namespace
}  // namespace collage::plugin_example

COLLAGE_PLUGIN(collage::plugin_example::RegisterPluginExample)
