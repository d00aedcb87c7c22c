#include "cost/group_signature.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <type_traits>
#include <variant>

#include "collage/random_tensor.h"
#include "collage/sdk/op_params.h"
#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

constexpr int64_t kSmallConstant = 16;

// Scalars (clip bounds, Pow exponents) and small integer tensors (shapes, axes, pads) change
// what a kernel does; other constants are weights, their values do not.
bool DataMatters(const Tensor& t) {
  const bool integer = t.dtype() != DType::kFloat32 && t.dtype() != DType::kFloat64 &&
                       t.dtype() != DType::kFloat16 && t.dtype() != DType::kBFloat16;
  return t.num_elements() == 1 || (integer && t.num_elements() <= kSmallConstant);
}

std::string TensorSignature(const Tensor& t, bool with_data) {
  std::string s = fmt::format("{}[{}]", DTypeName(t.dtype()), ShapeToString(t.shape()));
  if (with_data && DataMatters(t)) {
    s += fmt::format("={}", fmt::join(t.ToVector<double>(), ","));
  }
  return s;
}

std::string AttributeSignature(const Attribute& attribute) {
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, Tensor>) {
          return TensorSignature(v, true);
        } else if constexpr (std::is_same_v<V, std::vector<int64_t>> ||
                             std::is_same_v<V, std::vector<float>> ||
                             std::is_same_v<V, std::vector<std::string>>) {
          return fmt::format("[{}]", fmt::join(v, ","));
        } else {
          return fmt::format("{}", v);
        }
      },
      attribute);
}

int64_t Product(const Shape& shape, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < shape.size(); ++i) p *= shape[i];
  return p;
}

int64_t NodeReduction(const Graph& graph, const Node& node) {
  auto in_shape = [&](size_t i) -> const Shape& { return graph.value(node.inputs[i]).type.shape; };
  auto has_input = [&](size_t i) { return i < node.inputs.size() && node.inputs[i] != kNoValue; };
  const std::string& op = node.op_type;
  if (op == "Conv" && has_input(1)) return Product(in_shape(1), 1);
  if (op == "ConvTranspose") {
    const StatusOr<ConvTransposeParams> p = ReadConvTransposeParams(graph, node);
    return p.ok() ? p->group_in_channels() * NumElements(p->kernel) : 1;
  }
  if (op == "MatMul" && has_input(0)) {
    const Shape& a = in_shape(0);
    return a.empty() ? 1 : a.back();
  }
  if (op == "Gemm") {
    const StatusOr<GemmParams> p = ReadGemmParams(graph, node);
    return p.ok() ? p->k : 1;
  }
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
      op == "GlobalMaxPool") {
    const StatusOr<PoolParams> p = ReadPoolParams(graph, node);
    return p.ok() ? NumElements(p->kernel) : 1;
  }
  if (op == "LayerNormalization") {
    const Shape& x = in_shape(0);
    int64_t axis = node.attributes.GetInt("axis", -1);
    if (axis < 0) axis += static_cast<int64_t>(x.size());
    return Product(x, static_cast<size_t>(std::clamp<int64_t>(axis, 0, static_cast<int64_t>(x.size()))));
  }
  const OpDef* def = OpRegistry::Global().Find(node.domain, op);
  if (def != nullptr && def->kind == OpKind::kReduction && has_input(0) && !node.outputs.empty() &&
      node.outputs[0] != kNoValue) {
    // Softmax (opset 13+) reduces one axis; input/output would say 1, so ask the axis.
    const Shape& x = in_shape(0);
    if (op == "Softmax" || op == "LogSoftmax") {
      const StatusOr<SoftmaxAxis> axis = ReadSoftmaxAxis(graph, node);
      if (axis.ok()) return axis->n;
    }
    const int64_t out = std::max<int64_t>(1, graph.value(node.outputs[0]).type.num_elements());
    return NumElements(x) / out;
  }
  return 1;
}

template <typename T>
void FillIndices(Tensor& t, int64_t bound, std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> dist(0, std::max<int64_t>(0, bound - 1));
  T* p = t.data_as<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<T>(dist(rng));
}

template <typename T>
void ReplaceZeros(Tensor& t) {
  T* p = t.data_as<T>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = p[i] == 0 ? T{1} : p[i];
}

}  // namespace

std::string GroupSignature(const Graph& graph, const SubGraph& nodes) {
  std::map<ValueId, std::string> names;  // values produced inside: "n<node>.<output>"
  std::map<ValueId, int> external;       // non-constant inputs, numbered by first use
  std::string s = fmt::format("opset{};", graph.opset());
  int index = 0;
  for (NodeId id : nodes.Nodes()) {
    const Node& node = graph.node(id);
    s += fmt::format("{}::{}(", node.domain, node.op_type);
    for (ValueId in : node.inputs) {
      if (in == kNoValue) {
        s += "-,";
      } else if (auto it = names.find(in); it != names.end()) {
        s += it->second + ",";
      } else if (graph.value(in).is_constant()) {
        s += "const:" + TensorSignature(*graph.value(in).constant, true) + ",";
      } else {
        auto [pos, inserted] = external.emplace(in, static_cast<int>(external.size()));
        s += fmt::format("in{}:{},", pos->second, graph.value(in).type.ToString());
      }
    }
    s += "){";
    for (const auto& [name, value] : node.attributes.all()) {
      s += name + "=" + AttributeSignature(value) + ";";
    }
    s += "}->";
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o] == kNoValue) {
        s += "-,";
        continue;
      }
      names[node.outputs[o]] = fmt::format("n{}.{}", index, o);
      s += graph.value(node.outputs[o]).type.ToString() + ",";
    }
    s += ";";
    ++index;
  }
  s += "out:";
  for (ValueId out : nodes.Outputs(graph)) s += names[out] + ",";
  return s;
}

int64_t LongestReduction(const Graph& graph, const SubGraph& nodes) {
  int64_t longest = 1;
  for (NodeId id : nodes.Nodes()) longest = std::max(longest, NodeReduction(graph, graph.node(id)));
  return longest;
}

double ToleranceFor(const Graph& graph, const SubGraph& nodes) {
  return LongestReduction(graph, nodes) > 1000 ? 1e-3 : 1e-4;
}

std::vector<Tensor> RandomInputs(const CompileRequest& request, std::mt19937& rng) {
  const Graph& graph = *request.graph;
  std::vector<Tensor> inputs;
  for (ValueId in : request.inputs) {
    const TensorType& type = graph.value(in).type;
    Tensor t = RandomTensor(type.dtype, type.shape, rng);
    for (NodeId consumer : graph.value(in).consumers) {
      if (!request.nodes.Contains(consumer)) continue;
      const Node& node = graph.node(consumer);
      // Outside their domain libraries disagree on which NaN or infinity comes out (a NaN may
      // become -inf after a fused division); the test is about values, so stay inside.
      if ((node.op_type == "Sqrt" || node.op_type == "Log") && type.dtype == DType::kFloat32) {
        float* p = t.data_as<float>();
        for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = std::fabs(p[i]) + 1e-3f;
      }
      // Integer division by zero is an error, not a value to compare.
      if ((node.op_type == "Div" || node.op_type == "Mod") && node.inputs.size() > 1 &&
          node.inputs[1] == in) {
        if (type.dtype == DType::kInt64) ReplaceZeros<int64_t>(t);
        if (type.dtype == DType::kInt32) ReplaceZeros<int32_t>(t);
      }
      // Index operands must address the data they index.
      const bool gather = node.op_type == "Gather" || node.op_type == "GatherElements";
      if (!gather || node.inputs.size() < 2 || node.inputs[1] != in || node.inputs[0] == kNoValue) continue;
      const Shape& data = graph.value(node.inputs[0]).type.shape;
      int64_t axis = node.attributes.GetInt("axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(data.size());
      if (axis < 0 || axis >= static_cast<int64_t>(data.size())) continue;
      const int64_t bound = data[static_cast<size_t>(axis)];
      if (type.dtype == DType::kInt64) FillIndices<int64_t>(t, bound, rng);
      if (type.dtype == DType::kInt32) FillIndices<int32_t>(t, bound, rng);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

}  // namespace collage
