#include "backend/shared/quantized_conv.h"

#include <cmath>

#include "backend/shared/quantized_params.h"

namespace collage {
namespace {

// The weights' int8 data and scales: a constant int8 tensor, zero points 0, scales per tensor
// or one per output channel.
bool ReadWeights(const Graph& graph, ValueId weights, ValueId scale, ValueId zero_point,
                 QuantizedConv* q) {
  const Value& w = graph.value(weights);
  if (!w.is_constant() || w.type.dtype != DType::kInt8 || !AllZero(graph, zero_point)) return false;
  const Value& s = graph.value(scale);
  if (!s.is_constant()) return false;
  q->w_scale = s.constant->ToVector<float>();
  const int64_t channels = w.type.shape.empty() ? 0 : w.type.shape[0];
  if (q->w_scale.size() != 1 && static_cast<int64_t>(q->w_scale.size()) != channels) return false;
  for (float v : q->w_scale) {
    if (!(v > 0) || !std::isfinite(v)) return false;
  }
  q->weights = &*w.constant;
  return true;
}

// A bias given in float (`scale` 0) or as int32 dequantized with `scale`, in the sums' units:
// bias / (x_scale * w_scale[oc]).
bool ReadBias(const Graph& graph, ValueId bias, const Node* dequantize, QuantizedConv* q) {
  if (bias == kNoValue) return true;
  const Value& b = graph.value(bias);
  if (!b.is_constant()) return false;
  std::vector<float> values = b.constant->ToVector<float>();
  if (dequantize != nullptr) {
    const Value& s = graph.value(dequantize->inputs[1]);
    if (!s.is_constant() ||
        !AllZero(graph, dequantize->inputs.size() > 2 ? dequantize->inputs[2] : kNoValue)) {
      return false;
    }
    const std::vector<float> scale = s.constant->ToVector<float>();
    if (scale.size() != 1 && scale.size() != values.size()) return false;
    for (size_t i = 0; i < values.size(); ++i) values[i] *= scale.size() == 1 ? scale[0] : scale[i];
  }
  for (size_t oc = 0; oc < values.size(); ++oc) values[oc] /= q->x_scale * q->WeightScale(oc);
  q->bias = std::move(values);
  return true;
}

std::optional<QuantizedConv> ReadQLinearConv(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  if (node.op_type != "QLinearConv" || node.inputs.size() < 8) return std::nullopt;
  QuantizedConv q;
  q.conv = id;
  q.x = node.inputs[0];
  q.y = node.outputs[0];
  const std::optional<float> xs = SingleValue(graph, node.inputs[1]);
  const std::optional<float> xz = SingleValue(graph, node.inputs[2]);
  const std::optional<float> ys = SingleValue(graph, node.inputs[6]);
  const std::optional<float> yz = SingleValue(graph, node.inputs[7]);
  if (!xs || !xz || !ys || !yz || !(*xs > 0) || !(*ys > 0)) return std::nullopt;
  q.x_scale = *xs;
  q.x_zero_point = static_cast<int32_t>(*xz);
  q.y_scale = *ys;
  q.y_zero_point = static_cast<int32_t>(*yz);
  if (!ReadWeights(graph, node.inputs[3], node.inputs[4], node.inputs[5], &q)) return std::nullopt;
  const ValueId bias = node.inputs.size() > 8 ? node.inputs[8] : kNoValue;
  // QLinearConv's int32 bias is in the sums' units already.
  if (bias != kNoValue) {
    const Value& b = graph.value(bias);
    if (!b.is_constant()) return std::nullopt;
    q.bias = b.constant->ToVector<float>();
  }
  return q;
}

// The QDQ form: the match's nodes are QuantizeLinear, [Relu,] Conv, then the Conv's
// DequantizeLinear inputs (pre-order of the pattern).
std::optional<QuantizedConv> ReadQdqConv(const Match& m) {
  const Graph& graph = *m.graph;
  QuantizedConv q;
  size_t i = 0;
  const Node& quantize = m.node(i++);
  if (m.node(i).op_type == "Relu") {
    q.relu = true;
    ++i;
  }
  q.conv = m.op_nodes[i];
  const Node& conv = m.node(i++);
  const Node& dq_x = m.node(i++);
  const Node& dq_w = m.node(i++);
  const Node* dq_b = i < m.op_nodes.size() && m.op_nodes[i] >= 0 ? &m.node(i) : nullptr;
  q.x = dq_x.inputs[0];
  q.y = quantize.outputs[0];
  if (!ReadTensorParams(graph, dq_x, &q.x_scale, &q.x_zero_point) ||
      !ReadTensorParams(graph, quantize, &q.y_scale, &q.y_zero_point)) {
    return std::nullopt;
  }
  if (dq_w.attributes.GetInt("axis", 1) != 0 &&
      graph.value(dq_w.inputs[1]).type.num_elements() != 1) {
    return std::nullopt;  // per-channel scales must run along the output channels
  }
  if (!ReadWeights(graph, dq_w.inputs[0], dq_w.inputs[1],
                   dq_w.inputs.size() > 2 ? dq_w.inputs[2] : kNoValue, &q)) {
    return std::nullopt;
  }
  const ValueId bias = conv.inputs.size() > 2 ? conv.inputs[2] : kNoValue;
  if (!ReadBias(graph, dq_b != nullptr ? dq_b->inputs[0] : bias, dq_b, &q)) return std::nullopt;
  return q;
}

}  // namespace

Pattern QdqConvPattern(bool relu) {
  const Pattern x = Op("DequantizeLinear")(Any(), Const(), Optional(Const()));
  const Pattern conv =
      Op("Conv")(x, DequantizedConstant(), Optional(Alt({DequantizedConstant(), Const()})));
  const Pattern activation = relu ? Op("Relu")(conv) : conv;
  return Op("QuantizeLinear")(activation, Const(), Optional(Const()));
}

std::optional<QuantizedConv> ReadQuantizedConv(const Match& m) {
  if (m.root_node().op_type == "QLinearConv") return ReadQLinearConv(*m.graph, m.root);
  return ReadQdqConv(m);
}

}  // namespace collage
