#include "lstm_kernel.h"

#include <mkl_vml.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "collage/sdk/errors.h"
#include "mkl_threads.h"
#include "packed_matrix.h"

namespace collage::mkl {
namespace {

// ONNX's input and output slots of LSTM.
constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitialH = 5, kInitialC = 6, kP = 7;
constexpr size_t kY = 0, kYH = 1, kYC = 2;

ValueId Slot(const std::vector<ValueId>& values, size_t slot) {
  return slot < values.size() ? values[slot] : kNoValue;
}

bool StaticFloat32(const Graph& graph, ValueId value) {
  return value != kNoValue && graph.value(value).type.dtype == DType::kFloat32 &&
         graph.value(value).type.is_static();
}

bool ConstantOfShape(const Graph& graph, ValueId value, const Shape& shape) {
  return StaticFloat32(graph, value) && graph.value(value).is_constant() &&
         graph.value(value).type.shape == shape;
}

// What the node asks: sizes, directions, layout and the cell's options.
struct LstmForm {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool reverse = false;      // one direction, right to left
  bool batch_major = false;  // layout = 1: X [B, T, I], Y [B, T, D, H], states [B, D, H]
  float clip = 0;            // 0: none
  bool input_forget = false;
};

std::optional<LstmForm> ReadForm(const Graph& graph, const Node& node) {
  if (node.op_type != "LSTM" || !node.domain.empty()) return std::nullopt;
  const ValueId x = Slot(node.inputs, kX), w = Slot(node.inputs, kW), r = Slot(node.inputs, kR);
  if (!StaticFloat32(graph, x) || !StaticFloat32(graph, w) || !StaticFloat32(graph, r))
    return std::nullopt;
  if (!graph.value(w).is_constant() || !graph.value(r).is_constant()) return std::nullopt;
  if (Slot(node.inputs, kSeqLens) != kNoValue) return std::nullopt;
  LstmForm f;
  const std::string direction = node.attributes.GetString("direction", "forward");
  if (direction == "bidirectional") {
    f.dirs = 2;
  } else if (direction == "reverse") {
    f.reverse = true;
  } else if (direction != "forward") {
    return std::nullopt;
  }
  const int64_t layout = node.attributes.GetInt("layout", 0);
  if (layout != 0 && layout != 1) return std::nullopt;
  f.batch_major = layout == 1;
  const std::vector<std::string> activations = node.attributes.GetStrings("activations");
  if (!activations.empty()) {
    if (activations.size() != static_cast<size_t>(3 * f.dirs)) return std::nullopt;
    for (size_t i = 0; i < activations.size(); ++i) {
      if (activations[i] != (i % 3 == 0 ? "Sigmoid" : "Tanh")) return std::nullopt;
    }
  }
  f.clip = node.attributes.GetFloat("clip", 0.0f);
  if (!(f.clip >= 0)) return std::nullopt;
  const int64_t input_forget = node.attributes.GetInt("input_forget", 0);
  if (input_forget != 0 && input_forget != 1) return std::nullopt;
  f.input_forget = input_forget == 1;

  const Shape& xs = graph.value(x).type.shape;
  const Shape& ws = graph.value(w).type.shape;
  if (xs.size() != 3 || ws.size() != 3) return std::nullopt;
  f.seq = f.batch_major ? xs[1] : xs[0];
  f.batch = f.batch_major ? xs[0] : xs[1];
  f.input = xs[2];
  f.hidden = ws[1] / 4;
  if (f.seq < 1 || f.batch < 1 || f.input < 1 || f.hidden < 1 || ws[1] != 4 * f.hidden ||
      ws[0] != f.dirs || ws[2] != f.input) {
    return std::nullopt;
  }
  if (node.attributes.Has("hidden_size") && node.attributes.GetInt("hidden_size", 0) != f.hidden) {
    return std::nullopt;
  }
  const int64_t d = f.dirs, h = f.hidden, b = f.batch;
  if (!ConstantOfShape(graph, r, {d, 4 * h, h})) return std::nullopt;
  const ValueId bias = Slot(node.inputs, kB), peepholes = Slot(node.inputs, kP);
  if (bias != kNoValue && !ConstantOfShape(graph, bias, {d, 8 * h})) return std::nullopt;
  if (peepholes != kNoValue && !ConstantOfShape(graph, peepholes, {d, 3 * h})) return std::nullopt;
  const Shape state = f.batch_major ? Shape{b, d, h} : Shape{d, b, h};
  for (size_t slot : {kInitialH, kInitialC}) {
    const ValueId v = Slot(node.inputs, slot);
    if (v != kNoValue && (!StaticFloat32(graph, v) || graph.value(v).type.shape != state))
      return std::nullopt;
  }
  for (size_t slot : {kY, kYH, kYC}) {
    const ValueId v = Slot(node.outputs, slot);
    if (v != kNoValue && !StaticFloat32(graph, v)) return std::nullopt;
  }
  if (!FitsMklInt(f.seq * f.batch) || !FitsMklInt(4 * h) || !FitsMklInt(f.input))
    return std::nullopt;
  return f;
}

// Where one tensor the kernel reads lives at Run: a kernel input or a constant of the graph.
struct Source {
  int input = -1;   // kernel input index, or -1 for a constant
  Tensor constant;  // the graph's tensor (shares its buffer, so it outlives the graph)
  const float* Data(const KernelBuffers& buffers) const {
    return input >= 0 ? static_cast<const float*>(buffers.inputs[static_cast<size_t>(input)])
                      : constant.data_as<float>();
  }
};

// The packed weights and the per-gate constants of one direction.
struct Direction {
  std::optional<PackedMatrix> w;  // B operand of X · Wᵀ, rows T·B
  std::optional<PackedMatrix> r;  // B operand of H · Rᵀ, rows B
  std::vector<float> bias;        // Wb + Rb, 4H, gate order i, o, f, c
  std::vector<float> peepholes;   // Pi, Po, Pf (3H), empty when absent
};

class LstmKernel final : public Kernel {
 public:
  Status Run(const KernelBuffers& buffers) const override {
    const int64_t T = form_.seq, B = form_.batch, H = form_.hidden, G = 4 * H;
    // Workspace: XW [T·B, 4H], gates [B, 4H], tanh arguments [B, 3H] and [B, 2H], h and c [B, H].
    float* xw = static_cast<float*>(buffers.workspace);
    float* gates = xw + T * B * G;
    float* first = gates + B * G;
    float* second = first + B * 3 * H;
    float* h = second + B * 2 * H;
    float* c = h + B * H;
    const float* x = x_.Data(buffers);
    float* y = y_ >= 0 ? static_cast<float*>(buffers.outputs[static_cast<size_t>(y_)]) : nullptr;
    float* y_h =
        y_h_ >= 0 ? static_cast<float*>(buffers.outputs[static_cast<size_t>(y_h_)]) : nullptr;
    float* y_c =
        y_c_ >= 0 ? static_cast<float*>(buffers.outputs[static_cast<size_t>(y_c_)]) : nullptr;
    const float* initial_h = initial_h_ ? initial_h_->Data(buffers) : nullptr;
    const float* initial_c = initial_c_ ? initial_c_->Data(buffers) : nullptr;

    for (int64_t d = 0; d < form_.dirs; ++d) {
      const Direction& dir = directions_[static_cast<size_t>(d)];
      {
        MklThreadScope threads(num_threads_);
        cblas_sgemm_compute(CblasRowMajor, CblasNoTrans, CblasPacked, static_cast<MKL_INT>(T * B),
                            static_cast<MKL_INT>(G), static_cast<MKL_INT>(form_.input), x,
                            static_cast<MKL_INT>(form_.input), dir.w->data(),
                            static_cast<MKL_INT>(G), 0.0f, xw, static_cast<MKL_INT>(G));
      }
      for (int64_t b = 0; b < B; ++b) {
        const int64_t state = StateOffset(d, b);
        if (initial_h != nullptr) {
          std::memcpy(h + b * H, initial_h + state, sizeof(float) * H);
        } else {
          std::fill_n(h + b * H, H, 0.0f);
        }
        if (initial_c != nullptr) {
          std::memcpy(c + b * H, initial_c + state, sizeof(float) * H);
        } else {
          std::fill_n(c + b * H, H, 0.0f);
        }
      }
      const bool backward = form_.reverse || d == 1;
      MklThreadScope threads(step_threads_);
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = backward ? T - 1 - s : s;
        cblas_sgemm_compute(CblasRowMajor, CblasNoTrans, CblasPacked, static_cast<MKL_INT>(B),
                            static_cast<MKL_INT>(G), static_cast<MKL_INT>(H), h,
                            static_cast<MKL_INT>(H), dir.r->data(), static_cast<MKL_INT>(G), 0.0f,
                            gates, static_cast<MKL_INT>(G));
        Step(dir, t, xw, gates, first, second, h, c);
        if (y != nullptr) {
          for (int64_t b = 0; b < B; ++b)
            std::memcpy(y + YOffset(t, d, b), h + b * H, sizeof(float) * H);
        }
      }
      for (int64_t b = 0; b < B; ++b) {
        if (y_h != nullptr) std::memcpy(y_h + StateOffset(d, b), h + b * H, sizeof(float) * H);
        if (y_c != nullptr) std::memcpy(y_c + StateOffset(d, b), c + b * H, sizeof(float) * H);
      }
    }
    return Status::Ok();
  }

  LstmForm form_;
  int num_threads_ = 1;
  int step_threads_ = 1;
  Source x_;
  std::optional<Source> initial_h_, initial_c_;
  int y_ = -1, y_h_ = -1, y_c_ = -1;  // kernel output indices
  std::vector<Direction> directions_;

  void SetLayoutsAndWorkspace(size_t inputs, size_t outputs) {
    input_layouts_.assign(inputs, Layout::Plain());
    output_layouts_.assign(outputs, Layout::Plain());
    const int64_t T = form_.seq, B = form_.batch, H = form_.hidden;
    workspace_bytes_ = sizeof(float) * static_cast<size_t>(T * B * 4 * H + B * 4 * H + B * 3 * H +
                                                           B * 2 * H + 2 * B * H);
  }

 private:
  int64_t YOffset(int64_t t, int64_t d, int64_t b) const {
    const LstmForm& f = form_;
    return (f.batch_major ? (b * f.seq + t) * f.dirs + d : (t * f.dirs + d) * f.batch + b) *
           f.hidden;
  }
  int64_t StateOffset(int64_t d, int64_t b) const {
    const LstmForm& f = form_;
    return (f.batch_major ? b * f.dirs + d : d * f.batch + b) * f.hidden;
  }
  // The row of X (and so of XW) holding time t of batch entry b.
  int64_t Row(int64_t t, int64_t b) const {
    return form_.batch_major ? b * form_.seq + t : t * form_.batch + b;
  }
  float Clip(float v) const { return form_.clip > 0 ? std::clamp(v, -form_.clip, form_.clip) : v; }

  // One time step's gates, ONNX's order i, o, f, c, from the products; updates h and c.
  void Step(const Direction& dir, int64_t t, const float* xw, const float* gates, float* first,
            float* second, float* h, float* c) const {
    const int64_t B = form_.batch, H = form_.hidden, G = 4 * H;
    const float* bias = dir.bias.data();
    const float* p_i = dir.peepholes.empty() ? nullptr : dir.peepholes.data();
    const float* p_o = p_i != nullptr ? p_i + H : nullptr;
    const float* p_f = p_i != nullptr ? p_i + 2 * H : nullptr;
    // i, f and the candidate: tanh's arguments (half the pre-activation for a sigmoid).
    for (int64_t b = 0; b < B; ++b) {
      const float* xr = xw + Row(t, b) * G;
      const float* gr = gates + b * G;
      const float* cb = c + b * H;
      float* out = first + b * 3 * H;
      for (int64_t j = 0; j < H; ++j) {
        float pre_i = xr[j] + gr[j] + bias[j];
        float pre_f = xr[2 * H + j] + gr[2 * H + j] + bias[2 * H + j];
        if (p_i != nullptr) {
          pre_i += p_i[j] * cb[j];
          pre_f += p_f[j] * cb[j];
        }
        out[j] = 0.5f * Clip(pre_i);
        out[H + j] = 0.5f * Clip(pre_f);
        out[2 * H + j] = Clip(xr[3 * H + j] + gr[3 * H + j] + bias[3 * H + j]);
      }
    }
    vmsTanh(static_cast<MKL_INT>(B * 3 * H), first, first, VML_LA);
    // The new cell state; the output gate's argument and the state for tanh.
    for (int64_t b = 0; b < B; ++b) {
      const float* xr = xw + Row(t, b) * G;
      const float* gr = gates + b * G;
      const float* in = first + b * 3 * H;
      float* cb = c + b * H;
      float* out = second + b * 2 * H;
      for (int64_t j = 0; j < H; ++j) {
        const float i_gate = 0.5f * in[j] + 0.5f;
        const float f_gate = form_.input_forget ? 1.0f - i_gate : 0.5f * in[H + j] + 0.5f;
        const float c_new = f_gate * cb[j] + i_gate * in[2 * H + j];
        float pre_o = xr[H + j] + gr[H + j] + bias[H + j];
        if (p_o != nullptr) pre_o += p_o[j] * c_new;
        cb[j] = c_new;
        out[j] = 0.5f * Clip(pre_o);
        out[H + j] = c_new;
      }
    }
    vmsTanh(static_cast<MKL_INT>(B * 2 * H), second, second, VML_LA);
    for (int64_t b = 0; b < B; ++b) {
      const float* in = second + b * 2 * H;
      float* hb = h + b * H;
      for (int64_t j = 0; j < H; ++j) hb[j] = (0.5f * in[j] + 0.5f) * in[H + j];
    }
  }
};

}  // namespace

bool LstmSupported(const Graph& graph, const Node& node) {
  return ReadForm(graph, node).has_value();
}

StatusOr<std::unique_ptr<Kernel>> CompileLstm(const CompileRequest& request, bool serial_steps) {
  const Graph& graph = *request.graph;
  const std::vector<NodeId> nodes = request.node_ids();
  if (nodes.size() != 1) return Unsupported("an MKL LSTM kernel runs one LSTM node");
  const Node& node = graph.node(nodes[0]);
  const std::optional<LstmForm> form = ReadForm(graph, node);
  if (!form) {
    return Unsupported(
        "LSTM '{}': only float32, no sequence_lens, the default activations and "
        "constant W, R, B and P run on MKL",
        node.name);
  }
  auto kernel = std::make_unique<LstmKernel>();
  kernel->form_ = *form;
  kernel->num_threads_ = std::max(1, request.num_threads());
  kernel->step_threads_ = serial_steps ? 1 : kernel->num_threads_;

  auto source = [&](ValueId value) -> StatusOr<Source> {
    Source s;
    const Value& v = graph.value(value);
    if (v.is_constant()) {
      s.constant = *v.constant;
      return s;
    }
    s.input = request.input_index(value);
    if (s.input < 0) return Internal("LSTM '{}': '{}' is not a kernel input", node.name, v.name);
    return s;
  };
  COLLAGE_ASSIGN_OR_RETURN(kernel->x_, source(node.inputs[kX]));
  for (auto [slot, state] :
       {std::pair{kInitialH, &kernel->initial_h_}, std::pair{kInitialC, &kernel->initial_c_}}) {
    if (Slot(node.inputs, slot) == kNoValue) continue;
    COLLAGE_ASSIGN_OR_RETURN(Source s, source(node.inputs[slot]));
    *state = std::move(s);
  }
  for (auto [slot, index] :
       {std::pair{kY, &kernel->y_}, std::pair{kYH, &kernel->y_h_}, std::pair{kYC, &kernel->y_c_}}) {
    const ValueId out = Slot(node.outputs, slot);
    if (out == kNoValue) continue;
    auto it = std::find(request.outputs.begin(), request.outputs.end(), out);
    if (it != request.outputs.end()) *index = static_cast<int>(it - request.outputs.begin());
  }

  const int64_t T = form->seq, B = form->batch, I = form->input, H = form->hidden, G = 4 * H;
  const Tensor& w = *graph.value(node.inputs[kW]).constant;
  const Tensor& r = *graph.value(node.inputs[kR]).constant;
  const ValueId bias = Slot(node.inputs, kB), peepholes = Slot(node.inputs, kP);
  for (int64_t d = 0; d < form->dirs; ++d) {
    Direction dir;
    COLLAGE_ASSIGN_OR_RETURN(
        dir.w, PackedMatrix::Pack(CblasBMatrix, CblasTrans, GemmDims{T * B, G, I}, 1.0f,
                                  w.data_as<float>() + d * G * I, I, kernel->num_threads_));
    COLLAGE_ASSIGN_OR_RETURN(
        dir.r, PackedMatrix::Pack(CblasBMatrix, CblasTrans, GemmDims{B, G, H}, 1.0f,
                                  r.data_as<float>() + d * G * H, H, kernel->step_threads_));
    dir.bias.assign(static_cast<size_t>(G), 0.0f);
    if (bias != kNoValue) {
      const float* wb = graph.value(bias).constant->data_as<float>() + d * 2 * G;
      for (int64_t k = 0; k < G; ++k) dir.bias[static_cast<size_t>(k)] = wb[k] + wb[G + k];
    }
    if (peepholes != kNoValue) {
      const float* p = graph.value(peepholes).constant->data_as<float>() + d * 3 * H;
      dir.peepholes.assign(p, p + 3 * H);
    }
    kernel->directions_.push_back(std::move(dir));
  }
  kernel->SetLayoutsAndWorkspace(request.inputs.size(), request.outputs.size());
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace collage::mkl
