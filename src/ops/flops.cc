#include "ops/flops.h"

#include "collage/sdk/op_params.h"

namespace collage {

namespace {

double Elements(const Graph& graph, ValueId id) {
  return id == kNoValue ? 0.0 : static_cast<double>(graph.value(id).type.num_elements());
}

// Product of the spatial dims of a weight tensor laid out [M, C/group, k1, k2, ...].
double KernelVolume(const Shape& weight) {
  double v = 1;
  for (size_t i = 2; i < weight.size(); ++i) v *= static_cast<double>(weight[i]);
  return v;
}

}  // namespace

double NodeFlops(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  if (node.outputs.empty()) return 0;
  const double out = Elements(graph, node.outputs[0]);
  auto in_shape = [&](size_t i) -> const Shape& { return graph.value(node.inputs[i]).type.shape; };
  if (op == "Conv" && node.inputs.size() >= 2) {
    const Shape& w = in_shape(1);
    return 2.0 * out * static_cast<double>(w[1]) * KernelVolume(w);
  }
  if (op == "ConvTranspose" && node.inputs.size() >= 2) {
    const Shape& w = in_shape(1);  // [C, M/group, k...]: every input element scatters M/g*k
    return 2.0 * Elements(graph, node.inputs[0]) * static_cast<double>(w[1]) * KernelVolume(w);
  }
  if (op == "MatMul" && node.inputs.size() == 2) {
    const Shape& a = in_shape(0);
    return a.empty() ? 0 : 2.0 * out * static_cast<double>(a.back());
  }
  if (op == "Gemm") {
    StatusOr<GemmParams> gemm = ReadGemmParams(graph, node);
    if (gemm.ok()) return 2.0 * out * static_cast<double>(gemm->k);
  }
  if ((op == "LSTM" || op == "GRU" || op == "RNN") && node.inputs.size() >= 3) {
    const Shape& x = in_shape(0);
    const Shape& w = in_shape(1);  // [dirs, gates*H, I]
    const Shape& r = in_shape(2);  // [dirs, gates*H, H]
    double steps = static_cast<double>(x[0] * x[1]);
    return 2.0 * steps * static_cast<double>(w[0] * w[1] * (w[2] + r[2]));
  }
  return out;
}

double GraphFlops(const Graph& graph) {
  double total = 0;
  for (const Node& node : graph.nodes()) total += NodeFlops(graph, node);
  return total;
}

ModelSummary SummarizeGraph(const Graph& graph) {
  ModelSummary summary;
  summary.name = graph.name();
  summary.opset = graph.opset();
  summary.num_nodes = graph.num_nodes();
  for (const Node& node : graph.nodes()) {
    summary.op_counts[node.domain.empty() ? node.op_type : node.domain + "::" + node.op_type]++;
  }
  summary.num_parameters = graph.NumParameters();
  summary.flops = GraphFlops(graph);
  return summary;
}

}  // namespace collage
