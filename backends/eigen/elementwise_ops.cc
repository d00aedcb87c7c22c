#include "elementwise_ops.h"

#include "collage/sdk/op_params.h"

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include <map>

namespace collage::eigen {
namespace {

using ConstArray = Eigen::Map<const Eigen::ArrayXf>;
using Array = Eigen::Map<Eigen::ArrayXf>;

bool IsFloat32(const TensorType& type) { return type.dtype == DType::kFloat32 && type.is_static(); }

// The data operands of a node: Clip's bounds are parameters, not operands.
size_t NumDataInputs(ElementwiseOp op) { return IsBinary(op) ? 2 : 1; }

}  // namespace

std::optional<ElementwiseOp> LookupElementwiseOp(const std::string& op_type) {
  static const std::map<std::string, ElementwiseOp> kOps = {
      {"Relu", ElementwiseOp::kRelu},   {"LeakyRelu", ElementwiseOp::kLeakyRelu},
      {"Sigmoid", ElementwiseOp::kSigmoid}, {"Tanh", ElementwiseOp::kTanh},
      {"Exp", ElementwiseOp::kExp},     {"Log", ElementwiseOp::kLog},
      {"Sqrt", ElementwiseOp::kSqrt},   {"Abs", ElementwiseOp::kAbs},
      {"Neg", ElementwiseOp::kNeg},     {"Reciprocal", ElementwiseOp::kReciprocal},
      {"Erf", ElementwiseOp::kErf},     {"Clip", ElementwiseOp::kClip},
      {"Add", ElementwiseOp::kAdd},     {"Sub", ElementwiseOp::kSub},
      {"Mul", ElementwiseOp::kMul},     {"Div", ElementwiseOp::kDiv},
  };
  auto it = kOps.find(op_type);
  if (it == kOps.end()) return std::nullopt;
  return it->second;
}

bool IsBinary(ElementwiseOp op) {
  return op == ElementwiseOp::kAdd || op == ElementwiseOp::kSub || op == ElementwiseOp::kMul ||
         op == ElementwiseOp::kDiv;
}

std::optional<BroadcastBlock> BlockOf(const Shape& operand, const Shape& out) {
  if (operand.size() > out.size()) return std::nullopt;
  Shape padded(out.size() - operand.size(), 1);
  padded.insert(padded.end(), operand.begin(), operand.end());
  size_t first = padded.size();
  size_t last = 0;
  for (size_t d = 0; d < padded.size(); ++d) {
    if (padded[d] != 1) {
      first = std::min(first, d);
      last = d;
    }
  }
  BroadcastBlock block;
  if (first == padded.size()) return block;  // every dim is 1: a scalar
  for (size_t d = first; d <= last; ++d) {
    if (padded[d] != out[d]) return std::nullopt;  // a broadcast dim inside the run
    block.len *= out[d];
  }
  for (size_t d = last + 1; d < out.size(); ++d) block.inner *= out[d];
  return block;
}

bool ChainSupportsNode(const Graph& graph, const Node& node) {
  if (!node.domain.empty() || graph.opset() < 7) return false;
  const std::optional<ElementwiseOp> op = LookupElementwiseOp(node.op_type);
  if (!op || node.outputs.size() != 1 || node.outputs[0] == kNoValue) return false;
  const TensorType& out = graph.value(node.outputs[0]).type;
  if (!IsFloat32(out)) return false;
  const size_t data_inputs = NumDataInputs(*op);
  if (node.inputs.size() < data_inputs) return false;
  // Clip's optional min / max are parameters: constants (ReadClipBounds says which).
  if (*op == ElementwiseOp::kClip && !ReadClipBounds(graph, node).ok()) return false;
  for (size_t i = 0; i < data_inputs; ++i) {
    const ValueId id = node.inputs[i];
    if (id == kNoValue) return false;
    const Value& v = graph.value(id);
    if (!IsFloat32(v.type)) return false;
    if (v.is_constant() ? !BlockOf(v.type.shape, out.shape) : v.type.shape != out.shape) {
      return false;
    }
  }
  return true;
}

StatusOr<ElementwiseParams> ReadParams(const Graph& graph, const Node& node, ElementwiseOp op) {
  ElementwiseParams p;
  if (op == ElementwiseOp::kLeakyRelu) p.alpha = node.attributes.GetFloat("alpha", 0.01f);
  if (op == ElementwiseOp::kClip) {
    // An absent bound is an infinity, which leaves +-inf inputs alone (as the reference).
    COLLAGE_ASSIGN_OR_RETURN(const ClipBounds<float> bounds, ReadClipBounds(graph, node));
    p.lo = bounds.lo;
    p.hi = bounds.hi;
  }
  return p;
}

void EvalUnary(ElementwiseOp op, const ElementwiseParams& params, const float* x, float* y,
               int64_t n) {
  ConstArray a(x, n);
  Array out(y, n);
  // Comparisons are written so that NaN propagates, as in the reference kernels
  // (x < 0 is false for NaN).
  switch (op) {
    case ElementwiseOp::kRelu: out = (a < 0.0f).select(0.0f, a); break;
    case ElementwiseOp::kLeakyRelu: out = (a < 0.0f).select(a * params.alpha, a); break;
    case ElementwiseOp::kSigmoid: out = a.logistic(); break;
    case ElementwiseOp::kTanh: out = a.tanh(); break;
    case ElementwiseOp::kExp: out = a.exp(); break;
    case ElementwiseOp::kLog: out = a.log(); break;
    case ElementwiseOp::kSqrt: out = a.sqrt(); break;
    case ElementwiseOp::kAbs: out = a.abs(); break;
    case ElementwiseOp::kNeg: out = -a; break;
    case ElementwiseOp::kReciprocal: out = a.inverse(); break;
    case ElementwiseOp::kErf: out = a.erf(); break;
    case ElementwiseOp::kClip:
      // min(max(x, lo), hi) with std::max/std::min's NaN behaviour.
      out = (a < params.lo).select(params.lo, a);
      out = (out > params.hi).select(params.hi, out);
      break;
    default: break;  // binary ops go through EvalBinary
  }
}

void EvalBinary(ElementwiseOp op, const float* a, const float* b, float* y, int64_t n) {
  ConstArray x(a, n);
  ConstArray z(b, n);
  Array out(y, n);
  switch (op) {
    case ElementwiseOp::kAdd: out = x + z; break;
    case ElementwiseOp::kSub: out = x - z; break;
    case ElementwiseOp::kMul: out = x * z; break;
    case ElementwiseOp::kDiv: out = x / z; break;
    default: break;
  }
}

void EvalBinaryScalar(ElementwiseOp op, const float* a, float s, bool scalar_left, float* y,
                      int64_t n) {
  ConstArray x(a, n);
  Array out(y, n);
  switch (op) {
    case ElementwiseOp::kAdd: out = x + s; break;
    case ElementwiseOp::kMul: out = x * s; break;
    case ElementwiseOp::kSub:
      if (scalar_left) out = s - x; else out = x - s;
      break;
    case ElementwiseOp::kDiv:
      if (scalar_left) out = s / x; else out = x / s;
      break;
    default: break;
  }
}

}  // namespace collage::eigen
