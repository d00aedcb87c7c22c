// Quantized convolutions on oneDNN's integer kernels (VNNI and AMX where the CPU has them,
// AVX2/AVX-512 multiply-adds elsewhere), for both forms ONNX Runtime's quantizer writes:
//  - qlinear_conv: a QLinearConv;
//  - qdq_conv / qdq_conv_relu: DequantizeLinear of the input and of the weights (and of an
//    int32 bias, or a float bias), Conv (then Relu), QuantizeLinear.
// Each runs as one int8 convolution in channels-last layout (what oneDNN's integer
// convolutions read and write): the int32 sums scaled by x_scale * w_scale / y_scale per
// output channel, the bias added in the sums' units, the input's zero point removed and the
// output's added by oneDNN, rounded half to even and saturated. Weights must be int8 with zero
// points 0 (symmetric, as the quantizer makes them); activations uint8 or int8, per tensor —
// on a CPU without VNNI, uint8 with 7-bit weights only (IntegerProductExact).
// The reference kernels round each op of the QDQ form on its own, so the outputs may differ
// by one quantization step (ir/quantization_step.h), which the checks allow.
#include <algorithm>
#include <cmath>
#include <optional>

#include "collage/sdk/op_params.h"
#include "onednn_layout.h"
#include "onednn_quantized.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

bool IsEightBit(DType dtype) { return dtype == DType::kUInt8 || dtype == DType::kInt8; }

// Everything the kernel needs, read from either form.
struct QuantizedConv {
  NodeId conv = -1;  // the Conv or QLinearConv (its geometry)
  ValueId x = kNoValue;
  ValueId y = kNoValue;
  float x_scale = 0, y_scale = 0;
  int32_t x_zero_point = 0, y_zero_point = 0;
  const Tensor* weights = nullptr;  // int8 [M, C/group, k...]
  std::vector<float> w_scale;       // one per tensor or per output channel
  std::vector<float> bias;          // float, already in the sums' units (empty: none)
  bool relu = false;
};

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

float WeightScale(const QuantizedConv& q, size_t oc) {
  return q.w_scale.size() == 1 ? q.w_scale[0] : q.w_scale[oc];
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
  for (size_t oc = 0; oc < values.size(); ++oc) values[oc] /= q->x_scale * WeightScale(*q, oc);
  q->bias = std::move(values);
  return true;
}

// ---- reading the two forms -----------------------------------------------------------------

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

std::optional<QuantizedConv> Read(const Match& m) {
  if (m.root_node().op_type == "QLinearConv") return ReadQLinearConv(*m.graph, m.root);
  return ReadQdqConv(m);
}

// ---- the primitive ---------------------------------------------------------------------------

struct Int8ConvDescs {
  memory::desc src, weights, bias, dst;
  ConvGeometry geometry;
  dnnl::primitive_attr attr;

  dnnl::convolution_forward::primitive_desc PrimitiveDesc() const {
    dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, weights, bias,
        dst, geometry.strides, geometry.dilates, geometry.pads_l, geometry.pads_r);
    return dnnl::convolution_forward::primitive_desc(d, attr, Engine());
  }
};

StatusOr<Int8ConvDescs> Describe(const Graph& graph, const QuantizedConv& q) {
  const Node& conv = graph.node(q.conv);
  const TensorType& x = graph.value(q.x).type;
  const TensorType& y = graph.value(q.y).type;
  const Shape& w = q.weights->shape();
  COLLAGE_ASSIGN_OR_RETURN(const ConvParams p, ReadConvParams(conv, x.shape, w));
  if (x.shape.size() < 3 || x.shape.size() > 5 || p.output_shape() != y.shape) {
    return Unsupported("rank {} or output shape", x.shape.size());
  }
  const std::optional<memory::data_type> src_type = DataTypeOf(x.dtype);
  const std::optional<memory::data_type> dst_type = DataTypeOf(y.dtype);
  if (!IsEightBit(x.dtype) || !IsEightBit(y.dtype) || !src_type || !dst_type) {
    return Unsupported("{} in, {} out", DTypeName(x.dtype), DTypeName(y.dtype));
  }
  Int8ConvDescs d;
  COLLAGE_ASSIGN_OR_RETURN(d.geometry,
                           OnednnConvGeometry(p.strides, p.dilations, p.pads_begin, p.pads_end));
  memory::dims wdims = ToDims(w);
  if (p.group > 1) {
    wdims[0] /= p.group;
    wdims.insert(wdims.begin(), p.group);
  }
  const int ndims = static_cast<int>(x.shape.size());
  const memory::format_tag channels_last = ndims == 3   ? memory::format_tag::nwc
                                           : ndims == 4 ? memory::format_tag::nhwc
                                                        : memory::format_tag::ndhwc;
  d.src = memory::desc(ToDims(x.shape), *src_type, channels_last);
  d.dst = memory::desc(ToDims(y.shape), *dst_type, channels_last);
  d.weights = memory::desc(wdims, memory::data_type::s8, memory::format_tag::any);
  if (!q.bias.empty()) d.bias = PlainDesc({p.out_channels});
  d.attr = BaseAttr();
  std::vector<float> scales;
  for (size_t oc = 0; oc < static_cast<size_t>(q.w_scale.size()); ++oc) {
    scales.push_back(q.x_scale * WeightScale(q, oc) / q.y_scale);
  }
  d.attr.set_output_scales(scales.size() == 1 ? 0 : 1 << 1, scales);
  SetZeroPoints(d.attr, q.x_zero_point, q.y_zero_point);
  if (q.relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    d.attr.set_post_ops(ops);
  }
  return d;
}

StatusOr<std::unique_ptr<Kernel>> CompileInt8Conv(const CompileRequest& request,
                                                  const Match& match) {
  const Graph& graph = *request.graph;
  const std::optional<QuantizedConv> q = Read(match);
  if (!q.has_value())
    return Unsupported("quantized convolution '{}' is not supported", match.root_node().name);
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("int8 convolution", [&]() -> Status {
    COLLAGE_ASSIGN_OR_RETURN(Int8ConvDescs d, Describe(graph, *q));
    const auto pd = d.PrimitiveDesc();
    KernelBuilder builder(request);
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(q->x, DNNL_ARG_SRC, d.src));
    COLLAGE_ASSIGN_OR_RETURN(memory packed, ConstantMemory(*q->weights, pd.weights_desc()));
    builder.BindConstant(DNNL_ARG_WEIGHTS, std::move(packed));
    if (!q->bias.empty()) {
      COLLAGE_ASSIGN_OR_RETURN(
          memory bias,
          ConstantMemory(Tensor::FromVector<float>({static_cast<int64_t>(q->bias.size())}, q->bias),
                         d.bias));
      builder.BindConstant(DNNL_ARG_BIAS, std::move(bias));
    }
    BindZeroPoints(builder, q->x_zero_point, q->y_zero_point);
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(q->y, DNNL_ARG_DST, d.dst));
    COLLAGE_ASSIGN_OR_RETURN(kernel,
                             builder.Finish(std::string("int8 convolution ") + pd.impl_info_str(),
                                            dnnl::convolution_forward(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

// oneDNN runs it exactly, with an optimized (not reference) implementation.
bool Int8ConvOk(const Match& m) {
  const std::optional<QuantizedConv> q = Read(m);
  if (!q.has_value() || !IntegerProductExact(m.graph->value(q->x).type.dtype, *q->weights)) {
    return false;
  }
  return HasOptimizedImplementation([&]() -> std::string {
    StatusOr<Int8ConvDescs> d = Describe(*m.graph, *q);
    if (!d.ok()) return "ref:unsupported";
    return d->PrimitiveDesc().impl_info_str();
  });
}

Pattern QdqConv(bool relu) {
  const Pattern x = Op("DequantizeLinear")(Any(), Const(), Optional(Const()));
  const Pattern conv =
      Op("Conv")(x, DequantizedConstant(), Optional(Alt({DequantizedConstant(), Const()})));
  const Pattern activation = relu ? Op("Relu")(conv) : conv;
  return Op("QuantizeLinear")(activation, Const(), Optional(Const()));
}

}  // namespace

void AddInt8ConvRules(std::vector<RuleEntry>& rules) {
  const std::vector<std::pair<std::string, Pattern>> forms = {
      {"qlinear_conv", Op("QLinearConv")},
      {"qdq_conv", QdqConv(false)},
      {"qdq_conv_relu", QdqConv(true)},
  };
  for (const auto& [name, pattern] : forms) {
    rules.push_back({Rule(name, pattern).Where(Int8ConvOk).Compiles(CompileInt8Conv), false});
  }
}

}  // namespace collage::onednn
