#include "onednn_epilogue.h"

#include <algorithm>
#include <cmath>

#include "collage/sdk/op_params.h"
#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::algorithm;

bool IsFloat(const Graph& graph, ValueId v) {
  return v != kNoValue && graph.value(v).type.dtype == DType::kFloat32;
}

bool Commutes(const std::string& op) { return op == "Add" || op == "Mul" || op == "Max" || op == "Min"; }

// The value of a one-element float32 constant; nullopt for anything else.
std::optional<float> ScalarConstant(const Graph& graph, ValueId value) {
  if (value == kNoValue) return std::nullopt;
  const Value& v = graph.value(value);
  if (!v.is_constant() || v.type.dtype != DType::kFloat32 || v.type.num_elements() != 1) {
    return std::nullopt;
  }
  return v.constant->data_as<float>()[0];
}

// The operand of a binary node that is not `operand` (nodes reading it twice have none).
ValueId OtherOperand(const Node& node, ValueId operand) {
  if (node.inputs.size() != 2 || node.inputs[0] == node.inputs[1]) return kNoValue;
  if (node.inputs[0] == operand) return node.inputs[1];
  if (node.inputs[1] == operand) return node.inputs[0];
  return kNoValue;
}

bool Near(std::optional<float> value, double expected) {
  return value.has_value() && std::abs(*value - expected) <= 1e-6 * std::abs(expected);
}

// nodes[i], nodes[i + 1] are `chain` times a gate of itself, in either operand order, that
// oneDNN computes as one step: Sigmoid (SiLU, x * sigmoid(x): a swish step with alpha 1), or
// HardSigmoid with alpha 1/6 and beta 1/2 (HardSwish as exporters write it before opset 14,
// x * max(0, min(1, x / 6 + 1/2)): a hardswish step). nullopt for anything else.
std::optional<EltwiseStep> SelfGateAt(const Graph& graph, const std::vector<NodeId>& nodes,
                                      size_t i, ValueId chain) {
  if (i + 1 >= nodes.size()) return std::nullopt;
  const Node& gate = graph.node(nodes[i]);
  const Node& mul = graph.node(nodes[i + 1]);
  if (mul.op_type != "Mul" || !gate.domain.empty() || !mul.domain.empty() ||
      gate.inputs.size() != 1 || gate.inputs[0] != chain || gate.outputs.size() != 1 ||
      mul.inputs.size() != 2 || mul.outputs.size() != 1) {
    return std::nullopt;
  }
  const ValueId gated = gate.outputs[0];
  const bool operands = (mul.inputs[0] == chain && mul.inputs[1] == gated) ||
                        (mul.inputs[0] == gated && mul.inputs[1] == chain);
  if (!operands || !IsFloat(graph, gated) || !IsFloat(graph, mul.outputs[0])) return std::nullopt;
  if (gate.op_type == "Sigmoid") return EltwiseStep{algorithm::eltwise_swish, 1.0f, 0.0f};
  if (gate.op_type == "HardSigmoid" &&
      Near(gate.attributes.GetFloat("alpha", 0.2f), 1.0 / 6.0) &&
      Near(gate.attributes.GetFloat("beta", 0.5f), 0.5)) {
    return EltwiseStep{algorithm::eltwise_hardswish, 0.0f, 0.0f};
  }
  return std::nullopt;
}

// nodes[i..i+4] are GELU's erf form of `chain`: Div(chain, sqrt(2)) (or Mul by 1/sqrt(2)),
// Erf, Add of 1, Mul by chain, Mul by 0.5, each binary in either operand order. oneDNN
// computes it as one gelu_erf step.
bool GeluAt(const Graph& graph, const std::vector<NodeId>& nodes, size_t i, ValueId chain) {
  if (i + 4 >= nodes.size()) return false;
  const Node& scale = graph.node(nodes[i]);
  const Node& erf = graph.node(nodes[i + 1]);
  const Node& add = graph.node(nodes[i + 2]);
  const Node& times_x = graph.node(nodes[i + 3]);
  const Node& half = graph.node(nodes[i + 4]);
  for (const Node* n : {&scale, &erf, &add, &times_x, &half}) {
    if (!n->domain.empty() || n->outputs.size() != 1 || !IsFloat(graph, n->outputs[0]))
      return false;
  }
  const bool scaled =
      scale.inputs.size() == 2 && scale.inputs[0] == chain &&
      ((scale.op_type == "Div" && Near(ScalarConstant(graph, scale.inputs[1]), std::sqrt(2.0))) ||
       (scale.op_type == "Mul" && Near(ScalarConstant(graph, scale.inputs[1]), std::sqrt(0.5))));
  return scaled && erf.op_type == "Erf" && erf.inputs.size() == 1 &&
         erf.inputs[0] == scale.outputs[0] && add.op_type == "Add" &&
         Near(ScalarConstant(graph, OtherOperand(add, erf.outputs[0])), 1.0) &&
         times_x.op_type == "Mul" && OtherOperand(times_x, add.outputs[0]) == chain &&
         half.op_type == "Mul" &&
         Near(ScalarConstant(graph, OtherOperand(half, times_x.outputs[0])), 0.5);
}

}  // namespace

const std::vector<std::string>& UnaryActivationOps() {
  static const std::vector<std::string> ops = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu",
                                               "HardSigmoid", "HardSwish", "Exp", "Abs", "Sqrt",
                                               "Log", "Softplus", "Neg", "Reciprocal"};
  return ops;
}

std::optional<std::vector<EltwiseStep>> ActivationSteps(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  const Attributes& a = node.attributes;
  if (!node.domain.empty()) return std::nullopt;
  if (node.outputs.size() != 1) return std::nullopt;
  if (op == "Clip") {
    const StatusOr<ClipBounds<float>> bounds = ReadClipBounds(graph, node);
    if (!bounds.ok()) return std::nullopt;
    const float lo = bounds->lo, hi = bounds->hi;
    // ONNX gives `max` everywhere when min > max; oneDNN's clip would not.
    if (!(lo <= hi)) return std::nullopt;
    return std::vector<EltwiseStep>{{algorithm::eltwise_clip, lo, hi}};
  }
  if (node.inputs.size() != 1) return std::nullopt;
  if (op == "Relu") return std::vector<EltwiseStep>{{algorithm::eltwise_relu, 0.0f, 0.0f}};
  if (op == "LeakyRelu") {
    return std::vector<EltwiseStep>{{algorithm::eltwise_relu, a.GetFloat("alpha", 0.01f), 0.0f}};
  }
  if (op == "Sigmoid") return std::vector<EltwiseStep>{{algorithm::eltwise_logistic}};
  if (op == "Tanh") return std::vector<EltwiseStep>{{algorithm::eltwise_tanh}};
  if (op == "Elu") return std::vector<EltwiseStep>{{algorithm::eltwise_elu, a.GetFloat("alpha", 1.0f), 0.0f}};
  if (op == "HardSigmoid") {
    // max(0, min(1, alpha * x + beta)): oneDNN 2.6 has no hardsigmoid, a linear then a clip.
    return std::vector<EltwiseStep>{
        {algorithm::eltwise_linear, a.GetFloat("alpha", 0.2f), a.GetFloat("beta", 0.5f)},
        {algorithm::eltwise_clip, 0.0f, 1.0f}};
  }
  if (op == "HardSwish") return std::vector<EltwiseStep>{{algorithm::eltwise_hardswish}};
  if (op == "Exp") return std::vector<EltwiseStep>{{algorithm::eltwise_exp}};
  if (op == "Abs") return std::vector<EltwiseStep>{{algorithm::eltwise_abs}};
  if (op == "Sqrt") return std::vector<EltwiseStep>{{algorithm::eltwise_sqrt}};
  if (op == "Log") return std::vector<EltwiseStep>{{algorithm::eltwise_log}};
  if (op == "Softplus") return std::vector<EltwiseStep>{{algorithm::eltwise_soft_relu}};
  if (op == "Neg") return std::vector<EltwiseStep>{{algorithm::eltwise_linear, -1.0f, 0.0f}};
  if (op == "Reciprocal") return std::vector<EltwiseStep>{{algorithm::eltwise_pow, 1.0f, -1.0f}};
  return std::nullopt;
}

bool IsActivation(const Graph& graph, const Node& node) {
  return !node.inputs.empty() && IsFloat(graph, node.inputs[0]) && IsFloat(graph, node.outputs[0]) &&
         ActivationSteps(graph, node).has_value();
}

std::optional<algorithm> BinaryAlgorithm(const std::string& op_type) {
  if (op_type == "Add") return algorithm::binary_add;
  if (op_type == "Sub") return algorithm::binary_sub;
  if (op_type == "Mul") return algorithm::binary_mul;
  if (op_type == "Div") return algorithm::binary_div;
  if (op_type == "Max") return algorithm::binary_max;
  if (op_type == "Min") return algorithm::binary_min;
  return std::nullopt;
}

KernelBuilder::KernelBuilder(const CompileRequest& request)
    : request_(request), input_layouts_(request.inputs.size()) {}

Status KernelBuilder::BindValue(ValueId value, int arg, const dnnl::memory::desc& desc) {
  return BindValue(value, arg, desc, LayoutOf(desc));
}

Status KernelBuilder::BindValue(ValueId value, int arg, const dnnl::memory::desc& desc,
                                const Layout& layout) {
  const Value& v = request_.graph->value(value);
  if (v.is_constant()) {
    COLLAGE_ASSIGN_OR_RETURN(dnnl::memory memory, ConstantMemory(*v.constant, desc));
    BindConstant(arg, std::move(memory));
    return Status();
  }
  auto it = std::find(request_.inputs.begin(), request_.inputs.end(), value);
  if (it == request_.inputs.end()) return Internal("value '{}' is not an input of the group", v.name);
  size_t index = static_cast<size_t>(it - request_.inputs.begin());
  if (input_layouts_[index].has_value() && *input_layouts_[index] != layout) {
    return Unsupported("input '{}' is read in two formats", v.name);
  }
  input_layouts_[index] = layout;
  ArgBinding b;
  b.arg = arg;
  b.source = ArgBinding::Source::kInput;
  b.index = index;
  b.desc = desc;
  args_.push_back(std::move(b));
  return Status();
}

Status KernelBuilder::BindValueConverted(ValueId value, int arg, const dnnl::memory::desc& desc,
                                         const Layout& layout, const dnnl::memory::desc& computed) {
  const Value& v = request_.graph->value(value);
  if (v.is_constant()) {
    COLLAGE_ASSIGN_OR_RETURN(dnnl::memory memory, ConstantMemory(*v.constant, computed, &desc));
    BindConstant(arg, std::move(memory));
    return Status();
  }
  COLLAGE_RETURN_IF_ERROR(BindValue(value, arg, desc, layout));
  args_.back().convert_from = desc;
  args_.back().desc = computed;
  return Status();
}

void KernelBuilder::BindConstant(int arg, dnnl::memory memory) {
  ArgBinding b;
  b.arg = arg;
  b.source = ArgBinding::Source::kConstant;
  b.desc = memory.get_desc();
  b.constant = std::move(memory);
  args_.push_back(std::move(b));
}

Status KernelBuilder::BindOutput(ValueId value, int arg, const dnnl::memory::desc& desc) {
  if (request_.outputs.size() != 1 || request_.outputs[0] != value) {
    return Unsupported("the group must have exactly one output, its last node's");
  }
  output_layout_ = LayoutOf(desc);
  ArgBinding b;
  b.arg = arg;
  b.source = ArgBinding::Source::kOutput;
  b.index = 0;
  b.desc = desc;
  args_.push_back(std::move(b));
  return Status();
}

StatusOr<std::unique_ptr<Kernel>> KernelBuilder::Finish(const std::string& what,
                                                        dnnl::primitive primitive,
                                                        const dnnl::memory::desc& scratchpad) {
  std::vector<Layout> inputs;
  for (size_t i = 0; i < input_layouts_.size(); ++i) {
    if (!input_layouts_[i].has_value()) {
      return Internal("{}: group input '{}' is not read by the primitive", what,
                      request_.graph->value(request_.inputs[i]).name);
    }
    inputs.push_back(*input_layouts_[i]);
  }
  if (!output_layout_.has_value()) return Internal("{}: no output bound", what);
  std::unique_ptr<Kernel> kernel = std::make_unique<OnednnKernel>(
      what, std::move(primitive), std::move(args_), scratchpad, std::move(inputs),
      std::vector<Layout>{*output_layout_});
  return kernel;
}

StatusOr<Epilogue> BuildEpilogue(const CompileRequest& request, const Match& match,
                                 const dnnl::memory::desc& dst_desc, KernelBuilder& builder) {
  const Graph& graph = *request.graph;
  std::vector<NodeId> nodes = ChainOrder(match);
  Epilogue e;
  if (nodes.empty()) return Internal("empty group");
  ValueId chain = graph.node(nodes[0]).outputs[0];
  const size_t rank = static_cast<size_t>(dst_desc.dims().size());
  int index = 0;
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (auto step = SelfGateAt(graph, nodes, i, chain)) {
      e.ops.append_eltwise(1.0f, step->algorithm, step->alpha, step->beta);
      ++index;
      chain = graph.node(nodes[++i]).outputs[0];
      continue;
    }
    if (GeluAt(graph, nodes, i, chain)) {
      e.ops.append_eltwise(1.0f, algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
      ++index;
      i += 4;
      chain = graph.node(nodes[i]).outputs[0];
      continue;
    }
    const Node& node = graph.node(nodes[i]);
    if (auto steps = ActivationSteps(graph, node); steps.has_value() && node.inputs[0] == chain) {
      for (const EltwiseStep& s : *steps) e.ops.append_eltwise(1.0f, s.algorithm, s.alpha, s.beta);
      index += static_cast<int>(steps->size());
    } else if (auto alg = BinaryAlgorithm(node.op_type); alg.has_value() && node.inputs.size() == 2) {
      if (node.inputs[0] != chain && (node.inputs[1] != chain || !Commutes(node.op_type))) {
        return Unsupported("{} '{}' does not read the chain first", node.op_type, node.name);
      }
      ValueId other = node.inputs[0] == chain ? node.inputs[1] : node.inputs[0];
      const Shape& shape = graph.value(other).type.shape;
      if (shape.size() > rank) return Unsupported("operand of '{}' has a higher rank", node.name);
      dnnl::memory::desc desc = shape == graph.value(chain).type.shape
                                    ? dst_desc
                                    : PlainDesc(PadShape(shape, rank));
      e.ops.append_binary(*alg, desc);
      COLLAGE_RETURN_IF_ERROR(
          builder.BindValue(other, DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1, desc));
      ++index;
    } else {
      return Unsupported("node '{}' ({}) cannot be a post-op", node.name, node.op_type);
    }
    chain = node.outputs[0];
  }
  e.output = chain;
  return e;
}

bool EpilogueSupported(const Graph& graph, const std::vector<NodeId>& nodes) {
  if (nodes.empty()) return false;
  ValueId chain = graph.node(nodes[0]).outputs[0];
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (SelfGateAt(graph, nodes, i, chain)) {
      chain = graph.node(nodes[++i]).outputs[0];
      continue;
    }
    if (GeluAt(graph, nodes, i, chain)) {
      i += 4;
      chain = graph.node(nodes[i]).outputs[0];
      continue;
    }
    const Node& node = graph.node(nodes[i]);
    if (node.outputs.size() != 1 || !IsFloat(graph, node.outputs[0])) return false;
    if (IsActivation(graph, node)) {
      if (node.inputs[0] != chain) return false;
    } else if (BinaryAlgorithm(node.op_type).has_value() && node.inputs.size() == 2) {
      if (node.inputs[0] != chain && (node.inputs[1] != chain || !Commutes(node.op_type))) return false;
      if (node.inputs[0] == node.inputs[1]) return false;
      ValueId other = node.inputs[0] == chain ? node.inputs[1] : node.inputs[0];
      if (!IsFloat(graph, other)) return false;
      // A post-op reads the kernel's inputs and constants, not values computed before the
      // chain's end (x * hardsigmoid(x) with other constants than HardSwish's).
      for (size_t j = 0; j < i; ++j) {
        const std::vector<ValueId>& made = graph.node(nodes[j]).outputs;
        if (std::find(made.begin(), made.end(), other) != made.end()) return false;
      }
      const Shape& chain_shape = graph.value(chain).type.shape;
      const Shape& other_shape = graph.value(other).type.shape;
      if (other_shape.size() > chain_shape.size()) return false;
      // The other operand broadcasts into the chain value; the result keeps its shape.
      Shape padded = PadShape(other_shape, chain_shape.size());
      for (size_t d = 0; d < padded.size(); ++d) {
        if (padded[d] != 1 && padded[d] != chain_shape[d]) return false;
      }
      if (graph.value(node.outputs[0]).type.shape != chain_shape) return false;
    } else {
      return false;
    }
    chain = node.outputs[0];
  }
  return true;
}

}  // namespace collage::onednn
