// The com.microsoft quantized ops ONNX Runtime's quantizer emits in its operator (QOperator)
// format, beside the ONNX ones (QLinearConv, QLinearMatMul):
//  - QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QLinearConcat,
//    QLinearWhere, QLinearAveragePool, QLinearGlobalAveragePool: defined as the float op on
//    the dequantized inputs, quantized to the output's scale and zero point. The reference
//    computes exactly that, running the float op's own reference kernel in between, so each
//    has the semantics of its float op (broadcasting, pooling geometry, softmax axis);
//  - QGemm: an integer GEMM with an int32 bias, requantized (or scaled to float when it has
//    no output scale), as ONNX Runtime computes it.
// Scales and zero points of these ops are per tensor (ONNX Runtime accepts nothing else, but
// QGemm's B, which may have one per column). The quantizer's other com.microsoft ops
// (QAttention, DynamicQuantizeLSTM, QEmbedLayerNormalization, ...) are not registered, so
// loading a model with them names them as unsupported.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "collage/sdk/op_params.h"
#include "ops/kernels/gemm_kernel.h"
#include "ops/quantize_math.h"

namespace collage {
namespace {

constexpr char kMicrosoftDomain[] = "com.microsoft";

// The ONNX opset whose semantics the float op of a QLinear op has (QLinearSoftmax says its own
// in an attribute).
constexpr int64_t kFloatOpset = 13;

// What one input of the float op is made of: a quantized operand of the QLinear op (its value,
// scale and zero-point inputs; zero_point -1 when the op has no such input) or an input passed
// through as it is (QLinearWhere's condition).
struct FloatOpInput {
  int value = -1;
  int scale = -1;
  int zero_point = -1;
  bool quantized() const { return scale >= 0; }
};

// A QLinear op's inputs, given how many it has: the float op's inputs, then the output's scale
// and zero point (zero_point may be past the last input: absent).
struct QLinearLayout {
  std::vector<FloatOpInput> inputs;
  int y_scale = -1;
  int y_zero_point = -1;
};

struct QLinearOp {
  const char* op_type;
  const char* float_op;
  bool channels_last_attr;  // pools: may read NHWC (channels_last = 1)
  QLinearLayout (*layout)(size_t num_inputs);
};

// (X, X_scale, X_zp) -> Y with (Y_scale, Y_zp): Sigmoid, LeakyRelu, Softmax, pools.
QLinearLayout UnaryLayout(size_t) { return {{{0, 1, 2}}, 3, 4}; }
// (A, A_scale, A_zp, B, B_scale, B_zp) -> C with (C_scale, C_zp): Add, Mul.
QLinearLayout BinaryLayout(size_t) { return {{{0, 1, 2}, {3, 4, 5}}, 6, 7}; }
// (Y_scale, Y_zp, then X, X_scale, X_zp per input) -> Y: Concat.
QLinearLayout ConcatLayout(size_t num_inputs) {
  QLinearLayout l;
  l.y_scale = 0;
  l.y_zero_point = 1;
  for (int i = 2; i + 2 < static_cast<int>(num_inputs); i += 3)
    l.inputs.push_back({i, i + 1, i + 2});
  return l;
}
// (condition, X, x_scale, x_zp, Y, y_scale, y_zp, z_scale, z_zp) -> Z: Where.
QLinearLayout WhereLayout(size_t) { return {{{0, -1, -1}, {1, 2, 3}, {4, 5, 6}}, 7, 8}; }

const std::vector<QLinearOp>& QLinearOps() {
  static const std::vector<QLinearOp> ops = {
      {"QLinearAdd", "Add", false, BinaryLayout},
      {"QLinearMul", "Mul", false, BinaryLayout},
      {"QLinearSigmoid", "Sigmoid", false, UnaryLayout},
      {"QLinearLeakyRelu", "LeakyRelu", false, UnaryLayout},
      {"QLinearSoftmax", "Softmax", false, UnaryLayout},
      {"QLinearConcat", "Concat", false, ConcatLayout},
      {"QLinearWhere", "Where", false, WhereLayout},
      {"QLinearAveragePool", "AveragePool", true, UnaryLayout},
      {"QLinearGlobalAveragePool", "GlobalAveragePool", true, UnaryLayout},
  };
  return ops;
}

const QLinearOp& FindQLinearOp(const std::string& op_type) {
  for (const QLinearOp& op : QLinearOps()) {
    if (op_type == op.op_type) return op;
  }
  return QLinearOps().front();  // unreachable: every registered op is in the table
}

bool ChannelsLast(const QLinearOp& op, const Node& node) {
  return op.channels_last_attr && node.attributes.GetInt("channels_last", 0) != 0;
}

// NHWC <-> NCHW permutations of a rank-r tensor.
std::vector<int64_t> ToChannelsFirst(size_t rank) {
  std::vector<int64_t> perm = {0, static_cast<int64_t>(rank) - 1};
  for (size_t d = 1; d + 1 < rank; ++d) perm.push_back(static_cast<int64_t>(d));
  return perm;
}
std::vector<int64_t> ToChannelsLast(size_t rank) {
  std::vector<int64_t> perm = {0};
  for (size_t d = 2; d < rank; ++d) perm.push_back(static_cast<int64_t>(d));
  perm.push_back(1);
  return perm;
}
Shape Permuted(const Shape& s, const std::vector<int64_t>& perm) {
  Shape out;
  for (int64_t p : perm) out.push_back(s[static_cast<size_t>(p)]);
  return out;
}

// The float op of `node` (its attributes; the QLinear-only ones are ignored by it).
Node FloatNode(const QLinearOp& op, const Node& node, size_t num_inputs) {
  Node f;
  f.name = node.name;
  f.op_type = op.float_op;
  f.attributes = node.attributes;
  for (size_t i = 0; i < num_inputs; ++i) f.inputs.push_back(static_cast<ValueId>(i));
  f.outputs = {static_cast<ValueId>(num_inputs)};
  return f;
}

int64_t FloatOpset(const QLinearOp& op, const Node& node) {
  if (std::string(op.float_op) == "Softmax") return node.attributes.GetInt("opset", kFloatOpset);
  return kFloatOpset;
}

Status RequirePerTensorParam(const InferContext& ctx, int i, const char* what) {
  if (i < 0 || !ctx.has_input(static_cast<size_t>(i))) return Status::Ok();
  const Shape& s = ctx.input_type(static_cast<size_t>(i)).shape;
  if (s.size() <= 1 && NumElements(s) == 1) return Status::Ok();
  return OpError(ctx.node, StatusCode::kUnsupported,
                 "{} (input {}) of shape {}: only per-tensor "
                 "quantization is supported",
                 what, i, ShapeToString(s));
}

Status InferQLinear(InferContext& ctx) {
  const QLinearOp& op = FindQLinearOp(ctx.node.op_type);
  const QLinearLayout layout = op.layout(ctx.num_inputs());
  if (std::string(op.float_op) == "Concat" &&
      (ctx.num_inputs() < 5 || (ctx.num_inputs() - 2) % 3 != 0)) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "has {} inputs; it takes Y_scale, Y_zero_point and a (X, X_scale, X_zero_point) "
                   "triple per input",
                   ctx.num_inputs());
  }
  if (layout.inputs.empty() || layout.y_scale < 0 ||
      !ctx.has_input(static_cast<size_t>(layout.y_scale))) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "has no output scale or no input");
  }
  const bool channels_last = ChannelsLast(op, ctx.node);
  std::vector<TensorType> float_types;
  DType quantized = DType::kUndefined;
  for (const FloatOpInput& in : layout.inputs) {
    if (!ctx.has_input(static_cast<size_t>(in.value))) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "input {} is missing", in.value);
    }
    TensorType t = ctx.input_type(static_cast<size_t>(in.value));
    if (in.quantized()) {
      COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, static_cast<size_t>(in.value)));
      COLLAGE_RETURN_IF_ERROR(RequireFloatScale(ctx, static_cast<size_t>(in.scale)));
      COLLAGE_RETURN_IF_ERROR(RequirePerTensorParam(ctx, in.scale, "a scale"));
      COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, static_cast<size_t>(in.zero_point),
                                             static_cast<size_t>(in.scale), t.dtype));
      if (quantized == DType::kUndefined) quantized = t.dtype;
      t.dtype = DType::kFloat32;
    }
    if (channels_last && t.shape.size() >= 3)
      t.shape = Permuted(t.shape, ToChannelsFirst(t.shape.size()));
    float_types.push_back(t);
  }
  COLLAGE_RETURN_IF_ERROR(RequireFloatScale(ctx, static_cast<size_t>(layout.y_scale)));
  COLLAGE_RETURN_IF_ERROR(RequirePerTensorParam(ctx, layout.y_scale, "the output scale"));
  const auto y_zp = static_cast<size_t>(layout.y_zero_point);
  const DType out = ctx.has_input(y_zp) ? ctx.input_type(y_zp).dtype : quantized;
  COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, y_zp, static_cast<size_t>(layout.y_scale), out));
  if (out != quantized) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "the output is {} and the inputs {}; only one quantized type is supported",
                   DTypeName(out), DTypeName(quantized));
  }
  // The float op's own inference checks its geometry and gives the output's shape.
  const Node f = FloatNode(op, ctx.node, float_types.size());
  const OpDef* def = OpRegistry::Global().Find("", op.float_op);
  InferContext inner{f, FloatOpset(op, ctx.node), {}, {}, {}};
  for (const TensorType& t : float_types) {
    inner.input_types.push_back(&t);
    inner.input_values.push_back(nullptr);
  }
  COLLAGE_RETURN_IF_ERROR(InferNodeTypes(*def, inner));
  Shape shape = inner.output_types[0].shape;
  if (channels_last && shape.size() >= 3) shape = Permuted(shape, ToChannelsLast(shape.size()));
  ctx.output_types[0] = TensorType{out, shape};
  return Status::Ok();
}

// Tensor `t` transposed by `perm` (reference Transpose).
StatusOr<Tensor> Transposed(const Node& node, const Tensor& t, const std::vector<int64_t>& perm) {
  Node transpose;
  transpose.name = node.name;
  transpose.op_type = "Transpose";
  transpose.attributes.Set("perm", perm);
  transpose.inputs = {0};
  transpose.outputs = {1};
  COLLAGE_ASSIGN_OR_RETURN(std::vector<Tensor> out, RunReferenceNode(transpose, kFloatOpset, {t}));
  return out[0];
}

// A quantized operand's per-tensor scale and zero point.
struct TensorQuantization {
  float scale = 1;
  float zero_point = 0;
};

TensorQuantization QuantizationOf(const KernelContext& ctx, int scale, int zero_point) {
  const auto zp = static_cast<size_t>(zero_point);
  return {ScaleValues(ctx.inputs[static_cast<size_t>(scale)])[0],
          ZeroPointValues(ctx.has_input(zp) ? &ctx.inputs[zp] : nullptr, 1)[0]};
}

// QLinearAdd and QLinearMul in one pass over the quantized values, without the float tensors
// the general path allocates: the same arithmetic per element (dequantize, the float op,
// quantize), a residual Add of an int8 ResNet several times faster.
Status RunQLinearBinary(KernelContext& ctx, const QLinearLayout& layout, bool add) {
  const TensorQuantization a =
      QuantizationOf(ctx, layout.inputs[0].scale, layout.inputs[0].zero_point);
  const TensorQuantization b =
      QuantizationOf(ctx, layout.inputs[1].scale, layout.inputs[1].zero_point);
  const TensorQuantization y = QuantizationOf(ctx, layout.y_scale, layout.y_zero_point);
  return DispatchQuantized(ctx.node, ctx.outputs[0].dtype(), [&](auto tag) {
    using Q = decltype(tag);
    BroadcastBinary<Q, Q, Q>(ctx.inputs[0], ctx.inputs[3], ctx.outputs[0], 4, [&](Q qa, Q qb) {
      const float fa = (static_cast<float>(qa) - a.zero_point) * a.scale;
      const float fb = (static_cast<float>(qb) - b.zero_point) * b.scale;
      return QuantizeValue<Q>(add ? fa + fb : fa * fb, y.scale, y.zero_point);
    });
  });
}

Status RunQLinear(KernelContext& ctx) {
  const QLinearOp& op = FindQLinearOp(ctx.node.op_type);
  const QLinearLayout layout = op.layout(ctx.inputs.size());
  const std::string float_op = op.float_op;
  if (float_op == "Add" || float_op == "Mul")
    return RunQLinearBinary(ctx, layout, float_op == "Add");
  const bool channels_last = ChannelsLast(op, ctx.node);
  std::vector<Tensor> float_inputs;
  for (const FloatOpInput& in : layout.inputs) {
    const Tensor& v = ctx.inputs[static_cast<size_t>(in.value)];
    Tensor t = v;
    if (in.quantized()) {
      const float scale = ScaleValues(ctx.inputs[static_cast<size_t>(in.scale)])[0];
      const float zp = ZeroPointValues(ctx.has_input(static_cast<size_t>(in.zero_point))
                                           ? &ctx.inputs[static_cast<size_t>(in.zero_point)]
                                           : nullptr,
                                       1)[0];
      t = Tensor(DType::kFloat32, v.shape());
      float* dst = t.data_as<float>();
      COLLAGE_RETURN_IF_ERROR(DispatchQuantized(ctx.node, v.dtype(), [&](auto tag) {
        using Q = decltype(tag);
        MapUnary(v.data_as<Q>(), dst, v.num_elements(), 2,
                 [&](Q q) { return (static_cast<float>(q) - zp) * scale; });
      }));
    }
    if (channels_last && t.rank() >= 3) {
      COLLAGE_ASSIGN_OR_RETURN(t, Transposed(ctx.node, t, ToChannelsFirst(t.shape().size())));
    }
    float_inputs.push_back(std::move(t));
  }
  const Node f = FloatNode(op, ctx.node, float_inputs.size());
  COLLAGE_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                           RunReferenceNode(f, FloatOpset(op, ctx.node), float_inputs));
  Tensor result = outputs[0];
  if (channels_last && result.rank() >= 3) {
    COLLAGE_ASSIGN_OR_RETURN(result,
                             Transposed(ctx.node, result, ToChannelsLast(result.shape().size())));
  }
  const float y_scale = ScaleValues(ctx.inputs[static_cast<size_t>(layout.y_scale)])[0];
  const auto y_zp_index = static_cast<size_t>(layout.y_zero_point);
  const float y_zp =
      ZeroPointValues(ctx.has_input(y_zp_index) ? &ctx.inputs[y_zp_index] : nullptr, 1)[0];
  Tensor& y = ctx.outputs[0];
  return DispatchQuantized(ctx.node, y.dtype(), [&](auto tag) {
    using Q = decltype(tag);
    MapUnary(result.data_as<float>(), y.data_as<Q>(), y.num_elements(), 4,
             [&](float v) { return QuantizeValue<Q>(v, y_scale, y_zp); });
  });
}

// ---- QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C?, y_scale?, y_zp? ---------------------------
// Y = requantize(alpha * a_scale * b_scale / y_scale * (C + (A - a_zp) (B - b_zp))), or without
// y_scale the float alpha * a_scale * b_scale * (C + ...). b's scale and zero point may have
// one value per column of op(B).

// The shape b's per-column values are broadcast in over the stored B.
Shape BColumnParamShape(const GemmParams& g, const Shape& param) {
  if (NumElements(param) == 1) return Shape{};
  return g.trans_b ? Shape{g.n, 1} : Shape{g.n};
}

Status InferQGemm(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 0));
  COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 3));
  const bool has_c = ctx.has_input(6);
  COLLAGE_ASSIGN_OR_RETURN(
      const GemmParams g,
      ReadGemmParams(ctx.node, kFloatOpset, ctx.input_type(0).shape, ctx.input_type(3).shape,
                     has_c ? &ctx.input_type(6).shape : nullptr));
  if (has_c && ctx.input_type(6).dtype != DType::kInt32) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "C must be int32, not {}",
                   DTypeName(ctx.input_type(6).dtype));
  }
  for (size_t scale : {size_t{1}, size_t{4}})
    COLLAGE_RETURN_IF_ERROR(RequireFloatScale(ctx, scale));
  COLLAGE_RETURN_IF_ERROR(RequirePerTensorParam(ctx, 1, "a_scale"));
  const Shape& b_scale = ctx.input_type(4).shape;
  if (NumElements(b_scale) != 1 && b_scale != Shape{g.n}) {
    return OpError(ctx.node, StatusCode::kInvalidModel,
                   "b_scale has shape {}; it must be a scalar or have {} values",
                   ShapeToString(b_scale), g.n);
  }
  COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, 2, 1, ctx.input_type(0).dtype));
  COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, 5, 4, ctx.input_type(3).dtype));
  DType out = DType::kFloat32;
  if (ctx.has_input(7)) {
    COLLAGE_RETURN_IF_ERROR(RequireFloatScale(ctx, 7));
    COLLAGE_RETURN_IF_ERROR(RequirePerTensorParam(ctx, 7, "y_scale"));
    if (!ctx.has_input(8)) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "y_scale is given without y_zero_point");
    }
    COLLAGE_RETURN_IF_ERROR(CheckZeroPoint(ctx, 8, 7, DType::kUndefined));
    out = ctx.input_type(8).dtype;
    COLLAGE_RETURN_IF_ERROR(RequireEightBit(ctx, 8));
  }
  ctx.output_types[0] = TensorType{out, {g.m, g.n}};
  return Status::Ok();
}

Status RunQGemm(KernelContext& ctx) {
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[3];
  const Tensor* c = ctx.has_input(6) ? &ctx.inputs[6] : nullptr;
  COLLAGE_ASSIGN_OR_RETURN(const GemmParams g,
                           ReadGemmParams(ctx.node, kFloatOpset, a.shape(), b.shape(),
                                          c != nullptr ? &c->shape() : nullptr));
  COLLAGE_ASSIGN_OR_RETURN(const Tensor a32, CenteredInt32(ctx.node, a, &ctx.inputs[2], Shape{}));
  COLLAGE_ASSIGN_OR_RETURN(
      const Tensor b32,
      CenteredInt32(ctx.node, b, &ctx.inputs[5], BColumnParamShape(g, ctx.inputs[5].shape())));
  std::vector<int32_t> sums(static_cast<size_t>(g.m * g.n), 0);
  if (c != nullptr) {
    const std::vector<int64_t> strides = BroadcastStrides(c->shape(), Shape{g.m, g.n});
    const int32_t* cv = c->data_as<int32_t>();
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        sums[static_cast<size_t>(i * g.n + j)] = cv[i * strides[0] + j * strides[1]];
      }
    }
  }
  Gemm<int32_t>(g.trans_a, g.trans_b, g.m, g.n, g.k, 1, a32.data_as<int32_t>(), a.dim(1),
                b32.data_as<int32_t>(), b.dim(1), 1, sums.data(), g.n);
  const float a_scale = ScaleValues(ctx.inputs[1])[0];
  const std::vector<float> b_scale = ScaleValues(ctx.inputs[4]);
  std::vector<float> multiplier(static_cast<size_t>(g.n));
  const bool requantize = ctx.has_input(7);
  for (int64_t j = 0; j < g.n; ++j) {
    float m =
        g.alpha * a_scale * (b_scale.size() == 1 ? b_scale[0] : b_scale[static_cast<size_t>(j)]);
    if (requantize) m /= ScaleValues(ctx.inputs[7])[0];
    multiplier[static_cast<size_t>(j)] = m;
  }
  Tensor& y = ctx.outputs[0];
  if (!requantize) {
    float* out = y.data_as<float>();
    for (size_t i = 0; i < sums.size(); ++i) {
      out[i] = static_cast<float>(sums[i]) * multiplier[i % static_cast<size_t>(g.n)];
    }
    return Status::Ok();
  }
  const float y_zp = ZeroPointValues(&ctx.inputs[8], 1)[0];
  return DispatchQuantized(ctx.node, y.dtype(), [&](auto tag) {
    using Q = decltype(tag);
    Q* out = y.data_as<Q>();
    for (size_t i = 0; i < sums.size(); ++i) {
      out[i] = RequantizeValue<Q>(sums[i], multiplier[i % static_cast<size_t>(g.n)], y_zp);
    }
  });
}

}  // namespace

void RegisterQLinearContribOps(OpRegistry& registry) {
  for (const QLinearOp& op : QLinearOps()) {
    const bool variadic = std::string(op.op_type) == "QLinearConcat";
    const QLinearLayout layout = op.layout(9);
    const int fixed = std::max(layout.y_scale, layout.y_zero_point) + 1;
    registry.Register(OpDef{
        op.op_type, kMicrosoftDomain,
        std::string(op.float_op) == "Concat" ? OpKind::kInjective : OpKind::kOpaque,
        variadic ? 5 : fixed - 1, variadic ? 1 << 16 : fixed, 1, 1, InferQLinear, RunQLinear});
  }
  registry.Register(
      OpDef{"QGemm", kMicrosoftDomain, OpKind::kOpaque, 6, 9, 1, 1, InferQGemm, RunQGemm});
}

}  // namespace collage
