// The ONNX recurrent ops LSTM, GRU and RNN on oneDNN's RNN primitives (rules lstm, gru, rnn):
// one layer, both directions at once (bidirectional_concat), time-major (layout 0, tnc) or
// batch-major (layout 1, ntc) input, optional bias, initial states, LSTM peepholes and
// outputs. Weights are constants, reordered once at Compile into the primitive's format.
//
// Refused (the node stays on the reference kernel), as the primitive has no form for them:
// activation functions other than the defaults (LSTM sigmoid/tanh/tanh, GRU sigmoid/tanh;
// RNN: Tanh, Relu or Sigmoid, the same for both directions), `clip`, LSTM input_forget,
// sequence_lens other than seq_length for every batch entry, dtypes other than float32, and
// non-constant W, R, B or P.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <type_traits>
#include <unordered_map>

#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

enum class Cell { kLstm, kGru, kRnn };

// ONNX input and output slots, shared by the three ops (GRU and RNN stop at initial_h / Y_h).
constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitialH = 5, kInitialC = 6, kP = 7;
constexpr size_t kY = 0, kYH = 1, kYC = 2;

const char* OpName(Cell cell) {
  return cell == Cell::kLstm ? "LSTM" : cell == Cell::kGru ? "GRU" : "RNN";
}
int64_t GatesOf(Cell cell) { return cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1; }

// What the node asks, in oneDNN's terms.
struct RnnForm {
  Cell cell = Cell::kLstm;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool reverse = false;      // one direction, right to left
  bool batch_major = false;  // layout = 1
  bool linear_before_reset = false;
  dnnl::algorithm activation = dnnl::algorithm::eltwise_tanh;  // RNN only
};

ValueId InputAt(const Node& node, size_t slot) {
  return slot < node.inputs.size() ? node.inputs[slot] : kNoValue;
}
ValueId OutputAt(const Node& node, size_t slot) {
  return slot < node.outputs.size() ? node.outputs[slot] : kNoValue;
}

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

// Why the primitive cannot run `node`, as Unsupported; the form otherwise.
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

bool RnnSupported(const Graph& graph, const Node& node, Cell cell) {
  return ReadRnnFormOrWhy(graph, node, cell).ok();
}

// ---- Weights in the primitive's format ----------------------------------------------------

// ONNX gate g' feeding oneDNN gate g. LSTM: ONNX i, o, f, c; oneDNN i, f, c~, o. GRU: ONNX
// z, r, h and oneDNN u, r, o are the same order.
int64_t OnnxGate(Cell cell, int64_t g) {
  static const int64_t kLstm[] = {0, 2, 3, 1};
  return cell == Cell::kLstm ? kLstm[g] : g;
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

// ---- The kernel -----------------------------------------------------------------------------

// Swaps the middle axes of [outer, rows, cols, inner]: the copy between an ONNX tensor and the
// primitive's form where no strides express one as the other.
struct Swap {
  int64_t outer = 0, rows = 0, cols = 0, inner = 0;
  void Run(const float* src, float* dst) const {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          std::memcpy(dst + ((o * cols + c) * rows + r) * inner,
                      src + ((o * rows + r) * cols + c) * inner, sizeof(float) * inner);
        }
      }
    }
  }
};

// One tensor the primitive reads or writes, and where it lives in collage's buffers.
struct Port {
  enum class Source { kInput, kOutput, kConstant, kZeros, kDiscarded };
  int arg = 0;  // DNNL_ARG_*
  memory::desc desc;
  Source source = Source::kDiscarded;
  size_t index = 0;             // kernel input / output
  std::vector<float> constant;  // kConstant: an initial state given as a constant
  // The ONNX tensor and the primitive's form differ (inputs: ONNX to primitive; outputs:
  // primitive to ONNX): the primitive's side lives in the workspace.
  std::optional<Swap> swap;
  size_t temp_offset = 0;  // workspace offset of the primitive's side, when not the buffer
  bool in_workspace() const {
    return swap.has_value() || source == Source::kZeros || source == Source::kDiscarded ||
           source == Source::kConstant;
  }
};

// The primitive with its packed weights and ports. Like every oneDNN kernel it runs on the
// OpenMP team the runtime sized to the execution context's thread count (ApplyThreadPolicy).
// The primitive's side of a port that is not a collage buffer (zeros for an absent state, a
// discarded output, a constant initial state, a swapped copy) lives in the workspace after the
// scratchpad, so that concurrent runs share nothing mutable.
class RnnKernel : public Kernel {
 public:
  RnnKernel(std::string what, dnnl::primitive primitive, memory::desc scratchpad,
            std::vector<std::pair<int, memory>> weights, std::vector<Port> ports, size_t num_inputs,
            size_t num_outputs)
      : what_(std::move(what)),
        primitive_(std::move(primitive)),
        scratchpad_(std::move(scratchpad)),
        weights_(std::move(weights)),
        ports_(std::move(ports)) {
    input_layouts_.assign(num_inputs, Layout::Plain());
    output_layouts_.assign(num_outputs, Layout::Plain());
    auto aligned = [](size_t n) { return (n + 63) / 64 * 64; };
    size_t offset = aligned(scratchpad_.get_size());
    for (Port& p : ports_) {
      if (!p.in_workspace()) continue;
      p.temp_offset = offset;
      offset += aligned(p.desc.get_size());
    }
    workspace_bytes_ = offset;
  }

  Status Run(const KernelBuffers& buffers) const override {
    return Guard(what_, [&]() -> Status {
      auto* workspace = static_cast<char*>(buffers.workspace);
      if (workspace_bytes_ > 0 && workspace == nullptr)
        return Internal("{}: no workspace bound", what_);
      std::unordered_map<int, memory> args;
      for (const auto& [arg, weights] : weights_) args.emplace(arg, weights);
      if (scratchpad_.get_size() > 0)
        args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratchpad_, Engine(), workspace));
      std::vector<std::pair<const Port*, float*>> to_copy_out;
      for (const Port& p : ports_) {
        float* onnx = nullptr;
        if (p.source == Port::Source::kInput) {
          if (p.index >= buffers.inputs.size())
            return Internal("{}: missing input {}", what_, p.index);
          onnx = static_cast<float*>(const_cast<void*>(buffers.inputs[p.index]));
        } else if (p.source == Port::Source::kOutput) {
          if (p.index >= buffers.outputs.size())
            return Internal("{}: missing output {}", what_, p.index);
          onnx = static_cast<float*>(buffers.outputs[p.index]);
        }
        float* data = p.in_workspace() ? reinterpret_cast<float*>(workspace + p.temp_offset) : onnx;
        if (p.source == Port::Source::kZeros) std::memset(data, 0, p.desc.get_size());
        if (p.source == Port::Source::kConstant) {
          const float* from = p.constant.data();
          if (p.swap)
            p.swap->Run(from, data);
          else
            std::copy(p.constant.begin(), p.constant.end(), data);
        }
        if (p.source == Port::Source::kInput && p.swap) p.swap->Run(onnx, data);
        if (p.source == Port::Source::kOutput && p.swap) to_copy_out.emplace_back(&p, onnx);
        args.emplace(p.arg, memory(p.desc, Engine(), data));
      }
      dnnl::stream stream(Engine());
      primitive_.execute(stream, args);
      stream.wait();
      for (const auto& [p, onnx] : to_copy_out) {
        p->swap->Run(reinterpret_cast<const float*>(workspace + p->temp_offset), onnx);
      }
      return Status();
    });
  }

 private:
  std::string what_;
  dnnl::primitive primitive_;
  memory::desc scratchpad_;
  std::vector<std::pair<int, memory>> weights_;  // packed at Compile
  std::vector<Port> ports_;
};

// The primitive's descriptors of the ports, by the node's layout.
struct PortDescs {
  memory::desc src_layer, dst_layer, src_iter, src_iter_c, dst_iter, dst_iter_c;
};

// Builds the ports and says which descriptors the primitive gets (a zero descriptor for
// states neither given nor wanted).
class PortPlanner {
 public:
  PortPlanner(const CompileRequest& request, const Node& node, const RnnForm& f)
      : request_(request), node_(node), f_(f) {}

  // X: [seq, batch, input] is tnc, [batch, seq, input] ntc; no copy.
  Status AddX(memory::desc& desc) {
    desc = memory::desc({f_.seq, f_.batch, f_.input}, memory::data_type::f32,
                        f_.batch_major ? Tag::ntc : Tag::tnc);
    return AddRead(DNNL_ARG_SRC_LAYER, node_.inputs[kX], desc, std::nullopt, false);
  }

  // Y: the concatenated directions {seq, batch, D·H} are ONNX's [batch, seq, D, H] (layout 1)
  // and, with one direction, its [seq, 1, batch, H]; layout 0 with two directions is
  // [seq, D, batch, H], which no strides give: the primitive writes the workspace and the
  // kernel copies it out.
  Status AddY(memory::desc& desc) {
    desc = memory::desc({f_.seq, f_.batch, f_.dirs * f_.hidden}, memory::data_type::f32,
                        f_.batch_major ? Tag::ntc : Tag::tnc);
    std::optional<Swap> swap;
    if (!f_.batch_major && f_.dirs == 2) swap = Swap{f_.seq, f_.batch, f_.dirs, f_.hidden};
    return AddWrite(DNNL_ARG_DST_LAYER, OutputAt(node_, kY), desc, swap);
  }

  // A pair of states (h and, for LSTM, c): oneDNN takes both or neither; one given alone
  // gets zeros (inputs) or a discarded buffer (outputs) for the other.
  Status AddStates(bool read, memory::desc& h, memory::desc& c) {
    const ValueId vh = read ? InputAt(node_, kInitialH) : OutputAt(node_, kYH);
    const ValueId vc = f_.cell == Cell::kLstm
                           ? (read ? InputAt(node_, kInitialC) : OutputAt(node_, kYC))
                           : kNoValue;
    const bool used_h = read ? vh != kNoValue : OutputIndex(vh).has_value();
    const bool used_c = read ? vc != kNoValue : OutputIndex(vc).has_value();
    h = c = memory::desc();
    if (!used_h && !used_c) return Status();
    const memory::desc state({1, f_.dirs, f_.batch, f_.hidden}, memory::data_type::f32, Tag::ldnc);
    // ONNX's [D, batch, H] is ldnc; batch-major [batch, D, H] is too with one direction.
    std::optional<Swap> swap;
    if (f_.batch_major && f_.dirs == 2) {
      swap = read ? Swap{1, f_.batch, f_.dirs, f_.hidden} : Swap{1, f_.dirs, f_.batch, f_.hidden};
    }
    h = state;
    const int arg_h = read ? DNNL_ARG_SRC_ITER : DNNL_ARG_DST_ITER;
    const int arg_c = read ? DNNL_ARG_SRC_ITER_C : DNNL_ARG_DST_ITER_C;
    COLLAGE_RETURN_IF_ERROR(read ? AddRead(arg_h, vh, state, swap, true)
                                 : AddWrite(arg_h, vh, state, swap));
    if (f_.cell != Cell::kLstm) return Status();
    c = state;
    return read ? AddRead(arg_c, vc, state, swap, true) : AddWrite(arg_c, vc, state, swap);
  }

  std::vector<Port> TakePorts() { return std::move(ports_); }

 private:
  std::optional<size_t> OutputIndex(ValueId v) const {
    if (v == kNoValue) return std::nullopt;
    auto it = std::find(request_.outputs.begin(), request_.outputs.end(), v);
    if (it == request_.outputs.end()) return std::nullopt;
    return static_cast<size_t>(it - request_.outputs.begin());
  }

  Status AddRead(int arg, ValueId v, const memory::desc& desc, std::optional<Swap> swap,
                 bool optional) {
    Port p;
    p.arg = arg;
    p.desc = desc;
    p.swap = swap;
    if (v == kNoValue) {
      if (!optional)
        return Internal("{} '{}': a required input is absent", OpName(f_.cell), node_.name);
      p.source = Port::Source::kZeros;
    } else if (graph().value(v).is_constant()) {
      p.source = Port::Source::kConstant;
      p.constant = graph().value(v).constant->ToVector<float>();
    } else {
      auto it = std::find(request_.inputs.begin(), request_.inputs.end(), v);
      if (it == request_.inputs.end())
        return Internal("value '{}' is not an input of the group", graph().value(v).name);
      p.source = Port::Source::kInput;
      p.index = static_cast<size_t>(it - request_.inputs.begin());
    }
    ports_.push_back(std::move(p));
    return Status();
  }

  Status AddWrite(int arg, ValueId v, const memory::desc& desc, std::optional<Swap> swap) {
    Port p;
    p.arg = arg;
    p.desc = desc;
    if (std::optional<size_t> index = OutputIndex(v)) {
      p.source = Port::Source::kOutput;
      p.index = *index;
      p.swap = swap;
    }
    ports_.push_back(std::move(p));
    return Status();
  }

  const Graph& graph() const { return *request_.graph; }

  const CompileRequest& request_;
  const Node& node_;
  const RnnForm& f_;
  std::vector<Port> ports_;
};

// The op descriptor of the node's cell.
template <typename Desc>
Desc MakeDesc(const RnnForm& f, const PortDescs& d, const memory::desc& wl, const memory::desc& wi,
              const memory::desc& bias, const memory::desc& peephole, dnnl::rnn_direction dir) {
  const auto prop = dnnl::prop_kind::forward_inference;
  if constexpr (std::is_same_v<Desc, dnnl::lstm_forward::desc>) {
    return Desc(prop, dir, d.src_layer, d.src_iter, d.src_iter_c, wl, wi, peephole, memory::desc(),
                bias, d.dst_layer, d.dst_iter, d.dst_iter_c);
  } else if constexpr (std::is_same_v<Desc, dnnl::vanilla_rnn_forward::desc>) {
    return Desc(prop, f.activation, dir, d.src_layer, d.src_iter, wl, wi, bias, d.dst_layer,
                d.dst_iter);
  } else {
    return Desc(prop, dir, d.src_layer, d.src_iter, wl, wi, bias, d.dst_layer, d.dst_iter);
  }
}

template <typename Forward>
StatusOr<std::unique_ptr<Kernel>> BuildKernel(const CompileRequest& request, const Node& node,
                                              const RnnForm& f, const std::string& what) {
  const Graph& graph = *request.graph;
  PortPlanner planner(request, node, f);
  PortDescs d;
  COLLAGE_RETURN_IF_ERROR(planner.AddX(d.src_layer));
  COLLAGE_RETURN_IF_ERROR(planner.AddY(d.dst_layer));
  COLLAGE_RETURN_IF_ERROR(planner.AddStates(true, d.src_iter, d.src_iter_c));
  COLLAGE_RETURN_IF_ERROR(planner.AddStates(false, d.dst_iter, d.dst_iter_c));

  const int64_t gates = GatesOf(f.cell);
  const auto f32 = memory::data_type::f32;
  const memory::desc wl({1, f.dirs, f.input, gates, f.hidden}, f32, Tag::any);
  const memory::desc wi({1, f.dirs, f.hidden, gates, f.hidden}, f32, Tag::any);
  const ValueId b = InputAt(node, kB);
  const Tensor bias = GateBias(f, b != kNoValue ? &*graph.value(b).constant : nullptr);
  const memory::desc bias_desc = PlainDesc(bias.shape());
  const ValueId p = f.cell == Cell::kLstm ? InputAt(node, kP) : kNoValue;
  std::optional<Tensor> peephole;
  if (p != kNoValue) peephole = Peepholes(f, *graph.value(p).constant);
  const memory::desc peephole_desc = peephole ? PlainDesc(peephole->shape()) : memory::desc();

  // Both directions in one primitive: one call runs both, and its concatenated output is
  // ONNX's batch-major Y as it is (two l2r / r2l primitives would each need a strided Y).
  const dnnl::rnn_direction dir = f.dirs == 2 ? dnnl::rnn_direction::bidirectional_concat
                                  : f.reverse ? dnnl::rnn_direction::unidirectional_right2left
                                              : dnnl::rnn_direction::unidirectional_left2right;
  const auto desc = MakeDesc<typename Forward::desc>(f, d, wl, wi, bias_desc, peephole_desc, dir);
  typename Forward::primitive_desc pd(desc, BaseAttr(), Engine());

  std::vector<std::pair<int, memory>> weights;
  COLLAGE_ASSIGN_OR_RETURN(memory w, GateWeights(f, *graph.value(node.inputs[kW]).constant, f.input,
                                                 pd.weights_layer_desc()));
  COLLAGE_ASSIGN_OR_RETURN(memory r, GateWeights(f, *graph.value(node.inputs[kR]).constant,
                                                 f.hidden, pd.weights_iter_desc()));
  COLLAGE_ASSIGN_OR_RETURN(memory bias_memory, ConstantMemory(bias, pd.bias_desc(), &bias_desc));
  weights.emplace_back(DNNL_ARG_WEIGHTS_LAYER, std::move(w));
  weights.emplace_back(DNNL_ARG_WEIGHTS_ITER, std::move(r));
  weights.emplace_back(DNNL_ARG_BIAS, std::move(bias_memory));
  if (peephole) {
    COLLAGE_ASSIGN_OR_RETURN(memory pm, ConstantMemory(*peephole, peephole_desc));
    weights.emplace_back(DNNL_ARG_WEIGHTS_PEEPHOLE, std::move(pm));
  }
  std::vector<Port> ports = planner.TakePorts();
  std::vector<bool> read(request.inputs.size(), false);
  for (const Port& port : ports) {
    if (port.source == Port::Source::kInput) read[port.index] = true;
  }
  for (size_t i = 0; i < read.size(); ++i) {
    if (!read[i])
      return Unsupported("group input '{}' is not read by {} '{}'",
                         graph.value(request.inputs[i]).name, OpName(f.cell), node.name);
  }
  std::unique_ptr<Kernel> kernel = std::make_unique<RnnKernel>(
      what + " " + pd.impl_info_str(), Forward(pd), pd.scratchpad_desc(), std::move(weights),
      std::move(ports), request.inputs.size(), request.outputs.size());
  return kernel;
}

StatusOr<std::unique_ptr<Kernel>> CompileRnn(const CompileRequest& request, const Match& match,
                                             Cell cell) {
  const Node& node = match.root_node();
  StatusOr<RnnForm> form = ReadRnnFormOrWhy(*request.graph, node, cell);
  if (!form.ok()) {
    return Unsupported("{} '{}' on oneDNN: {}", OpName(cell), node.name, form.status().message());
  }
  const std::string what = cell == Cell::kLstm         ? "lstm"
                           : cell == Cell::kRnn        ? "vanilla_rnn"
                           : form->linear_before_reset ? "lbr_gru"
                                                       : "gru";
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard(what, [&]() -> Status {
    StatusOr<std::unique_ptr<Kernel>> built =
        cell == Cell::kLstm  ? BuildKernel<dnnl::lstm_forward>(request, node, *form, what)
        : cell == Cell::kRnn ? BuildKernel<dnnl::vanilla_rnn_forward>(request, node, *form, what)
        : form->linear_before_reset ? BuildKernel<dnnl::lbr_gru_forward>(request, node, *form, what)
                                    : BuildKernel<dnnl::gru_forward>(request, node, *form, what);
    if (!built.ok()) return built.status();
    kernel = std::move(*built);
    return Status();
  }));
  return kernel;
}

Rule RnnRule(const std::string& name, Cell cell) {
  const std::string op = OpName(cell);
  // X, W, R, B, sequence_lens, initial_h (, initial_c, P).
  std::vector<Pattern> inputs = {
      Any(), Const(), Const(), Optional(Const()), Optional(Const()), Optional(Any())};
  if (cell == Cell::kLstm) {
    inputs.push_back(Optional(Any()));
    inputs.push_back(Optional(Const()));
  }
  const Pattern pattern =
      Op(op).WithInputs(std::move(inputs)).If([cell](const Graph& g, const Node& n) {
        return RnnSupported(g, n, cell);
      });
  return Rule(name, pattern).Compiles([cell](const CompileRequest& r, const Match& m) {
    return CompileRnn(r, m, cell);
  });
}

}  // namespace

void AddRnnRules(std::vector<RuleEntry>& rules) {
  rules.push_back({RnnRule("lstm", Cell::kLstm), false});
  rules.push_back({RnnRule("gru", Cell::kGru), false});
  rules.push_back({RnnRule("rnn", Cell::kRnn), false});
}

}  // namespace collage::onednn
