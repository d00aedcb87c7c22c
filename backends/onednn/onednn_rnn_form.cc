#include "onednn_rnn_form.h"

#include <algorithm>
#include <cctype>

#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The activation of an RNN node (one per direction in ONNX, one per primitive in oneDNN).
StatusOr<dnnl::algorithm> RnnActivation(const std::vector<std::string>& names) {
  if (names.empty()) return dnnl::algorithm::eltwise_tanh;
  for (const std::string& name : names) {
    if (Lower(name) != Lower(names[0])) return Unsupported("different activations per direction");
  }
  const std::string fn = Lower(names[0]);
  if (fn == "tanh") return dnnl::algorithm::eltwise_tanh;
  if (fn == "relu") return dnnl::algorithm::eltwise_relu;
  if (fn == "sigmoid") return dnnl::algorithm::eltwise_logistic;
  return Unsupported("activation {} (oneDNN's vanilla RNN has Tanh, Relu and Sigmoid)", names[0]);
}

// LSTM and GRU: oneDNN's cells have the default functions built in.
Status DefaultActivations(const std::vector<std::string>& names, Cell cell) {
  const std::vector<std::string> defaults =
      cell == Cell::kLstm ? std::vector<std::string>{"sigmoid", "tanh", "tanh"}
                          : std::vector<std::string>{"sigmoid", "tanh"};
  for (size_t i = 0; i < names.size(); ++i) {
    if (Lower(names[i]) != defaults[i % defaults.size()]) {
      return Unsupported("activation {} (oneDNN's cell has the default functions only)", names[i]);
    }
  }
  return Status();
}

bool IsFloatConstant(const Graph& graph, ValueId v) {
  return IsFloatValue(graph, v) && graph.value(v).is_constant();
}

// ONNX gate g' feeding oneDNN gate g. LSTM: ONNX i, o, f, c; oneDNN i, f, c~, o. GRU: ONNX
// z, r, h and oneDNN u, r, o are the same order.
int64_t OnnxGate(Cell cell, int64_t g) {
  static const int64_t kLstm[] = {0, 2, 3, 1};
  return cell == Cell::kLstm ? kLstm[g] : g;
}

}  // namespace

StatusOr<RnnForm> ReadRnnFormOrWhy(const Graph& graph, const Node& node, Cell cell) {
  const Attributes& a = node.attributes;
  RnnForm f;
  f.cell = cell;
  if (!node.domain.empty() || node.inputs.size() < 3) return Unsupported("not an ONNX node");
  if (!IsFloatValue(graph, InputAt(node, kX))) return Unsupported("X is not float32");
  if (!IsFloatConstant(graph, InputAt(node, kW)) || !IsFloatConstant(graph, InputAt(node, kR))) {
    return Unsupported("W and R must be float32 constants");
  }
  for (size_t slot : {kB, kP}) {
    const ValueId v = InputAt(node, slot);
    if (v != kNoValue && !IsFloatConstant(graph, v))
      return Unsupported("B and P must be float32 constants");
  }
  for (size_t slot : {kInitialH, kInitialC}) {
    const ValueId v = InputAt(node, slot);
    if (v != kNoValue && !IsFloatValue(graph, v))
      return Unsupported("initial states must be float32");
  }
  if (a.Has("clip")) return Unsupported("clip (oneDNN's cells do not clip)");
  if (a.GetInt("input_forget", 0) != 0) return Unsupported("input_forget (no oneDNN form)");
  const std::vector<std::string> activations = a.GetStrings("activations");
  if (cell == Cell::kRnn) {
    COLLAGE_ASSIGN_OR_RETURN(f.activation, RnnActivation(activations));
  } else {
    COLLAGE_RETURN_IF_ERROR(DefaultActivations(activations, cell));
  }
  const std::string direction = a.GetString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return Unsupported("direction '{}'", direction);
  }
  f.dirs = direction == "bidirectional" ? 2 : 1;
  f.reverse = direction == "reverse";
  const int64_t layout = a.GetInt("layout", 0);
  if (layout != 0 && layout != 1) return Unsupported("layout {}", layout);
  f.batch_major = layout == 1;
  f.linear_before_reset = cell == Cell::kGru && a.GetInt("linear_before_reset", 0) != 0;

  const Shape& x = graph.value(node.inputs[kX]).type.shape;
  const Shape& w = graph.value(node.inputs[kW]).type.shape;
  const Shape& r = graph.value(node.inputs[kR]).type.shape;
  const int64_t gates = GatesOf(cell);
  if (x.size() != 3 || w.size() != 3 || r.size() != 3 || w[1] % gates != 0) {
    return Unsupported("X, W, R shapes {}, {}, {}", ShapeToString(x), ShapeToString(w),
                       ShapeToString(r));
  }
  f.seq = f.batch_major ? x[1] : x[0];
  f.batch = f.batch_major ? x[0] : x[1];
  f.input = x[2];
  f.hidden = w[1] / gates;
  if (w != Shape{f.dirs, gates * f.hidden, f.input} ||
      r != Shape{f.dirs, gates * f.hidden, f.hidden}) {
    return Unsupported("W {} or R {} does not fit X {}", ShapeToString(w), ShapeToString(r),
                       ShapeToString(x));
  }
  if (f.seq < 1 || f.batch < 1 || f.input < 1 || f.hidden < 1)
    return Unsupported("an empty dimension");
  // B and P are read as raw arrays at Compile (type inference checks them too).
  const ValueId b = InputAt(node, kB);
  if (b != kNoValue && graph.value(b).type.shape != Shape{f.dirs, 2 * gates * f.hidden}) {
    return Unsupported("B of shape {}", ShapeToString(graph.value(b).type.shape));
  }
  const ValueId p = cell == Cell::kLstm ? InputAt(node, kP) : kNoValue;
  if (p != kNoValue && graph.value(p).type.shape != Shape{f.dirs, 3 * f.hidden}) {
    return Unsupported("P of shape {}", ShapeToString(graph.value(p).type.shape));
  }

  const ValueId lens = InputAt(node, kSeqLens);
  if (lens != kNoValue) {
    const Value& v = graph.value(lens);
    if (!v.is_constant()) return Unsupported("sequence_lens is not a constant");
    const std::vector<int64_t> values = v.constant->ToVector<int64_t>();
    if (static_cast<int64_t>(values.size()) != f.batch ||
        std::any_of(values.begin(), values.end(), [&](int64_t n) { return n != f.seq; })) {
      return Unsupported("sequence_lens other than seq_length ({}) for every batch entry", f.seq);
    }
  }
  return f;
}

// W [D, G·H, K] (or R with K = H) with its gates in oneDNN's order, reordered into `desc`
// (oneDNN's ldigo dims {1, D, K, G, H}): the ONNX rows are ldgoi.
StatusOr<memory> GateWeights(const RnnForm& f, const Tensor& onnx, int64_t k,
                             const memory::desc& desc) {
  const int64_t gates = GatesOf(f.cell), h = f.hidden;
  std::vector<float> permuted(static_cast<size_t>(onnx.num_elements()));
  const float* src = onnx.data_as<float>();
  for (int64_t d = 0; d < f.dirs; ++d) {
    for (int64_t g = 0; g < gates; ++g) {
      const float* from = src + (d * gates + OnnxGate(f.cell, g)) * h * k;
      std::copy_n(from, h * k, permuted.begin() + (d * gates + g) * h * k);
    }
  }
  const memory::desc source({1, f.dirs, k, gates, h}, memory::data_type::f32, Tag::ldgoi);
  return ConstantMemory(Tensor::FromVector<float>({1, f.dirs, k, gates, h}, permuted), desc,
                        &source);
}

// oneDNN's bias {1, D, G (+1 for lbr_gru), H}: ONNX's Wb + Rb per gate, except that
// linear_before_reset keeps Rb of the candidate apart (inside the reset gate's product).
Tensor GateBias(const RnnForm& f, const Tensor* onnx) {
  const int64_t gates = GatesOf(f.cell), h = f.hidden;
  const int64_t bias_gates = gates + (f.linear_before_reset ? 1 : 0);
  std::vector<float> bias(static_cast<size_t>(f.dirs * bias_gates * h), 0.0f);
  if (onnx != nullptr) {
    const float* b = onnx->data_as<float>();
    for (int64_t d = 0; d < f.dirs; ++d) {
      const float* wb = b + d * 2 * gates * h;
      const float* rb = wb + gates * h;
      float* out = bias.data() + d * bias_gates * h;
      for (int64_t g = 0; g < gates; ++g) {
        const int64_t from = OnnxGate(f.cell, g) * h;
        const bool apart = f.linear_before_reset && g == 2;
        for (int64_t j = 0; j < h; ++j)
          out[g * h + j] = wb[from + j] + (apart ? 0.0f : rb[from + j]);
      }
      if (f.linear_before_reset) std::copy_n(rb + 2 * h, h, out + 3 * h);
    }
  }
  return Tensor::FromVector<float>({1, f.dirs, bias_gates, h}, bias);
}

// ONNX P [D, 3H] holds Pi, Po, Pf; oneDNN's peephole weights {1, D, 3, H} hold i, f, o.
Tensor Peepholes(const RnnForm& f, const Tensor& onnx) {
  const int64_t h = f.hidden;
  static const int64_t kFrom[] = {0, 2, 1};
  std::vector<float> out(static_cast<size_t>(f.dirs * 3 * h));
  for (int64_t d = 0; d < f.dirs; ++d) {
    for (int64_t g = 0; g < 3; ++g) {
      std::copy_n(onnx.data_as<float>() + (d * 3 + kFrom[g]) * h, h, out.begin() + (d * 3 + g) * h);
    }
  }
  return Tensor::FromVector<float>({1, f.dirs, 3, h}, out);
}

}  // namespace collage::onednn
