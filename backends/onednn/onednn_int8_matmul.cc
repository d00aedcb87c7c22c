// Quantized matrix products by constant weights on oneDNN's integer matmul, in the forms ONNX
// Runtime's quantizer writes for linear layers:
//  - qlinear_matmul: a QLinearMatMul;
//  - qgemm: a com.microsoft QGemm with a quantized output (transA 0);
//  - qdq_matmul, qdq_gemm: DequantizeLinear of the input and of the int8 weights (and of an
//    int32 bias, or a float bias, for Gemm) → MatMul or Gemm → QuantizeLinear.
// The input [..., M, K] (uint8 or int8, per tensor) runs as one [rows, K] product by the
// weights [K, N] (transposed where Gemm's transB says), packed once; the int32 sums scaled by
// alpha * a_scale * b_scale / y_scale per column, the bias added in the sums' units, the zero
// points removed and added by oneDNN, rounded half to even and saturated. Weights: int8,
// zero points 0, scales per tensor or per column; exact on this CPU (IntegerProductExact).
#include <cmath>
#include <optional>

#include "collage/sdk/op_params.h"
#include "onednn_quantized.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

// Everything the kernel needs, read from any of the forms.
struct QuantizedMatMul {
  ValueId a = kNoValue;
  ValueId y = kNoValue;
  float a_scale = 0, y_scale = 0, alpha = 1;
  int32_t a_zero_point = 0, y_zero_point = 0;
  const Tensor* weights = nullptr;  // int8 [K, N], or [N, K] with trans_b
  bool trans_b = false;
  std::vector<float> b_scale;  // one per tensor or per column
  std::vector<float> bias;     // per column, in the sums' units (empty: none)

  int64_t columns() const { return weights->dim(trans_b ? 0 : 1); }
  float ColumnScale(size_t n) const { return b_scale.size() == 1 ? b_scale[0] : b_scale[n]; }
};

// The weights: a constant int8 matrix with zero points 0 and scales per tensor or column.
bool ReadWeights(const Graph& graph, ValueId weights, ValueId scale, ValueId zero_point,
                 QuantizedMatMul* q) {
  const Value& w = graph.value(weights);
  if (!w.is_constant() || w.type.dtype != DType::kInt8 || w.type.shape.size() != 2 ||
      !AllZero(graph, zero_point)) {
    return false;
  }
  const Value& s = graph.value(scale);
  if (!s.is_constant() || s.type.shape.size() > 1) return false;
  q->weights = &*w.constant;
  q->b_scale = s.constant->ToVector<float>();
  if (q->b_scale.size() != 1 && static_cast<int64_t>(q->b_scale.size()) != q->columns())
    return false;
  for (float v : q->b_scale) {
    if (!(v > 0) || !std::isfinite(v)) return false;
  }
  return true;
}

// A bias per column: `values` in float (scale 0) or dequantized with `scale`, turned into the
// sums' units (bias / (alpha * a_scale * b_scale[n])); `beta` multiplies it first.
bool SetBias(std::vector<float> values, const std::vector<float>& scale, float beta,
             QuantizedMatMul* q) {
  const size_t n = static_cast<size_t>(q->columns());
  if (values.size() == 1) values.assign(n, values[0]);
  if (values.size() != n || (!scale.empty() && scale.size() != 1 && scale.size() != n))
    return false;
  for (size_t c = 0; c < n; ++c) {
    const float s = scale.empty() ? 1.0f : scale.size() == 1 ? scale[0] : scale[c];
    values[c] = beta * values[c] * s / (q->alpha * q->a_scale * q->ColumnScale(c));
  }
  q->bias = std::move(values);
  return true;
}

// A constant bias C of Gemm or QGemm: a scalar, [N] or [1, N] (one value per column).
std::optional<std::vector<float>> ColumnBias(const Graph& graph, ValueId bias) {
  const Value& b = graph.value(bias);
  if (!b.is_constant()) return std::nullopt;
  const Shape& s = b.type.shape;
  if (s.size() > 2 || (s.size() == 2 && s[0] != 1)) return std::nullopt;
  return b.constant->ToVector<float>();
}

std::optional<QuantizedMatMul> ReadQLinearMatMul(const Graph& graph, const Node& node) {
  QuantizedMatMul q;
  q.a = node.inputs[0];
  q.y = node.outputs[0];
  const std::optional<float> as = SingleValue(graph, node.inputs[1]);
  const std::optional<float> az = SingleValue(graph, node.inputs[2]);
  const std::optional<float> ys = SingleValue(graph, node.inputs[6]);
  const std::optional<float> yz = SingleValue(graph, node.inputs[7]);
  if (!as || !az || !ys || !yz || !(*as > 0) || !(*ys > 0)) return std::nullopt;
  q.a_scale = *as;
  q.a_zero_point = static_cast<int32_t>(*az);
  q.y_scale = *ys;
  q.y_zero_point = static_cast<int32_t>(*yz);
  if (!ReadWeights(graph, node.inputs[3], node.inputs[4], node.inputs[5], &q)) return std::nullopt;
  return q;
}

std::optional<QuantizedMatMul> ReadQGemm(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 9 || node.inputs[7] == kNoValue ||
      node.attributes.GetInt("transA", 0) != 0) {
    return std::nullopt;
  }
  QuantizedMatMul q;
  q.a = node.inputs[0];
  q.y = node.outputs[0];
  q.trans_b = node.attributes.GetInt("transB", 0) != 0;
  q.alpha = node.attributes.GetFloat("alpha", 1.0f);
  const std::optional<float> as = SingleValue(graph, node.inputs[1]);
  const std::optional<float> az = SingleValue(graph, node.inputs[2]);
  const std::optional<float> ys = SingleValue(graph, node.inputs[7]);
  const std::optional<float> yz = SingleValue(graph, node.inputs[8]);
  if (!as || !az || !ys || !yz || !(*as > 0) || !(*ys > 0) || !(q.alpha > 0)) return std::nullopt;
  q.a_scale = *as;
  q.a_zero_point = static_cast<int32_t>(*az);
  q.y_scale = *ys;
  q.y_zero_point = static_cast<int32_t>(*yz);
  if (!ReadWeights(graph, node.inputs[3], node.inputs[4], node.inputs[5], &q)) return std::nullopt;
  if (node.inputs[6] != kNoValue) {
    // QGemm's int32 C is in the sums' units already: added to them before any scale.
    std::optional<std::vector<float>> c = ColumnBias(graph, node.inputs[6]);
    const size_t n = static_cast<size_t>(q.columns());
    if (!c || (c->size() != 1 && c->size() != n)) return std::nullopt;
    if (c->size() == 1) c->assign(n, (*c)[0]);
    q.bias = std::move(*c);
  }
  return q;
}

// The QDQ forms: the match's nodes are QuantizeLinear, MatMul or Gemm, then the product's
// DequantizeLinear inputs (pre-order of the pattern).
std::optional<QuantizedMatMul> ReadQdq(const Match& m) {
  const Graph& graph = *m.graph;
  QuantizedMatMul q;
  const Node& quantize = m.node(0);
  const Node& product = m.node(1);
  const Node& dq_a = m.node(2);
  const Node& dq_b = m.node(3);
  const Node* dq_c = m.op_nodes.size() > 4 && m.op_nodes[4] >= 0 ? &m.node(4) : nullptr;
  q.a = dq_a.inputs[0];
  q.y = quantize.outputs[0];
  if (!ReadTensorParams(graph, dq_a, &q.a_scale, &q.a_zero_point) ||
      !ReadTensorParams(graph, quantize, &q.y_scale, &q.y_zero_point)) {
    return std::nullopt;
  }
  float beta = 1.0f;
  if (product.op_type == "Gemm") {
    if (product.attributes.GetInt("transA", 0) != 0) return std::nullopt;
    q.trans_b = product.attributes.GetInt("transB", 0) != 0;
    q.alpha = product.attributes.GetFloat("alpha", 1.0f);
    beta = product.attributes.GetFloat("beta", 1.0f);
    if (!(q.alpha > 0)) return std::nullopt;
  }
  // Per-column scales run along the output columns: axis 1 of [K, N], axis 0 of [N, K].
  const int64_t axis = dq_b.attributes.GetInt("axis", 1);
  if (graph.value(dq_b.inputs[1]).type.num_elements() != 1 && axis != (q.trans_b ? 0 : 1)) {
    return std::nullopt;
  }
  if (!ReadWeights(graph, dq_b.inputs[0], dq_b.inputs[1],
                   dq_b.inputs.size() > 2 ? dq_b.inputs[2] : kNoValue, &q)) {
    return std::nullopt;
  }
  const ValueId bias = product.inputs.size() > 2 ? product.inputs[2] : kNoValue;
  if (dq_c != nullptr) {
    const std::optional<std::vector<float>> c = ColumnBias(graph, dq_c->inputs[0]);
    const Value& scale = graph.value(dq_c->inputs[1]);
    if (!c || !scale.is_constant() ||
        !AllZero(graph, dq_c->inputs.size() > 2 ? dq_c->inputs[2] : kNoValue) ||
        !SetBias(*c, scale.constant->ToVector<float>(), beta, &q)) {
      return std::nullopt;
    }
  } else if (bias != kNoValue) {
    const std::optional<std::vector<float>> c = ColumnBias(graph, bias);
    if (!c || !SetBias(*c, {}, beta, &q)) return std::nullopt;
  }
  return q;
}

std::optional<QuantizedMatMul> Read(const Match& m) {
  const Node& root = m.root_node();
  if (root.op_type == "QLinearMatMul") return ReadQLinearMatMul(*m.graph, root);
  if (root.op_type == "QGemm") return ReadQGemm(*m.graph, root);
  return ReadQdq(m);
}

// ---- the primitive ---------------------------------------------------------------------------

struct Int8MatMulDescs {
  memory::desc src, weights, weights_source, bias, dst;
  dnnl::primitive_attr attr;

  dnnl::matmul::primitive_desc PrimitiveDesc() const {
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, bias, dst), attr,
                                        Engine());
  }
};

StatusOr<Int8MatMulDescs> Describe(const Graph& graph, const QuantizedMatMul& q) {
  const TensorType& a = graph.value(q.a).type;
  const TensorType& y = graph.value(q.y).type;
  const std::optional<memory::data_type> src_type = DataTypeOf(a.dtype);
  const std::optional<memory::data_type> dst_type = DataTypeOf(y.dtype);
  if (!IsEightBit(a.dtype) || !IsEightBit(y.dtype) || !src_type || !dst_type ||
      a.shape.size() < 2) {
    return Unsupported("{} in, {} out", DTypeName(a.dtype), DTypeName(y.dtype));
  }
  const int64_t k = a.shape.back();
  const int64_t n = q.columns();
  const int64_t rows = a.num_elements() / std::max<int64_t>(k, 1);
  if (q.weights->dim(q.trans_b ? 1 : 0) != k || y.num_elements() != rows * n) {
    return Unsupported("shapes {} x {}", ShapeToString(a.shape), ShapeToString(q.weights->shape()));
  }
  Int8MatMulDescs d;
  // The input's rows as one [rows, K] matrix (the same bytes), the output likewise.
  d.src = PlainDesc({rows, k}, *src_type);
  d.dst = PlainDesc({rows, n}, *dst_type);
  d.weights = memory::desc({k, n}, memory::data_type::s8, memory::format_tag::any);
  d.weights_source = q.trans_b ? memory::desc({k, n}, memory::data_type::s8, memory::dims{1, k})
                               : PlainDesc({k, n}, memory::data_type::s8);
  if (!q.bias.empty()) d.bias = PlainDesc({1, n});
  d.attr = BaseAttr();
  std::vector<float> scales;
  for (size_t c = 0; c < q.b_scale.size(); ++c) {
    scales.push_back(q.alpha * q.a_scale * q.ColumnScale(c) / q.y_scale);
  }
  d.attr.set_output_scales(scales.size() == 1 ? 0 : 1 << 1, scales);
  SetZeroPoints(d.attr, q.a_zero_point, q.y_zero_point);
  return d;
}

StatusOr<std::unique_ptr<Kernel>> CompileInt8MatMul(const CompileRequest& request,
                                                    const Match& match) {
  const std::optional<QuantizedMatMul> q = Read(match);
  if (!q.has_value()) {
    return Unsupported("quantized product '{}' is not supported", match.root_node().name);
  }
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("int8 matmul", [&]() -> Status {
    COLLAGE_ASSIGN_OR_RETURN(Int8MatMulDescs d, Describe(*request.graph, *q));
    const auto pd = d.PrimitiveDesc();
    KernelBuilder builder(request);
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(q->a, DNNL_ARG_SRC, d.src, Layout::Plain()));
    COLLAGE_ASSIGN_OR_RETURN(memory packed,
                             ConstantMemory(*q->weights, pd.weights_desc(), &d.weights_source));
    builder.BindConstant(DNNL_ARG_WEIGHTS, std::move(packed));
    if (!q->bias.empty()) {
      COLLAGE_ASSIGN_OR_RETURN(
          memory bias, ConstantMemory(Tensor::FromVector<float>(
                                          {1, static_cast<int64_t>(q->bias.size())}, q->bias),
                                      d.bias));
      builder.BindConstant(DNNL_ARG_BIAS, std::move(bias));
    }
    BindZeroPoints(builder, q->a_zero_point, q->y_zero_point);
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(q->y, DNNL_ARG_DST, d.dst));
    COLLAGE_ASSIGN_OR_RETURN(
        kernel, builder.Finish(std::string("int8 matmul ") + pd.impl_info_str(), dnnl::matmul(pd),
                               pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

// oneDNN runs it exactly on this CPU, with an optimized (not reference) implementation.
bool Int8MatMulOk(const Match& m) {
  const std::optional<QuantizedMatMul> q = Read(m);
  if (!q.has_value() || !IntegerProductExact(m.graph->value(q->a).type.dtype, *q->weights)) {
    return false;
  }
  return HasOptimizedImplementation([&]() -> std::string {
    StatusOr<Int8MatMulDescs> d = Describe(*m.graph, *q);
    if (!d.ok()) return "ref:unsupported";
    return d->PrimitiveDesc().impl_info_str();
  });
}

Pattern QdqProduct(const std::string& op) {
  const Pattern a = Op("DequantizeLinear")(Any(), Const(), Optional(Const()));
  const Pattern product = op == "Gemm" ? Op("Gemm")(a, DequantizedConstant(),
                                                    Optional(Alt({DequantizedConstant(), Const()})))
                                       : Op("MatMul")(a, DequantizedConstant());
  return Op("QuantizeLinear")(product, Const(), Optional(Const()));
}

}  // namespace

void AddInt8MatMulRules(std::vector<RuleEntry>& rules) {
  const std::vector<std::pair<std::string, Pattern>> forms = {
      {"qlinear_matmul", Op("QLinearMatMul")},
      {"qgemm", Op("com.microsoft::QGemm")},
      {"qdq_matmul", QdqProduct("MatMul")},
      {"qdq_gemm", QdqProduct("Gemm")},
  };
  for (const auto& [name, pattern] : forms) {
    rules.push_back({Rule(name, pattern).Where(Int8MatMulOk).Compiles(CompileInt8MatMul), false});
  }
}

}  // namespace collage::onednn
