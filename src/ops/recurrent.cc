// The ONNX recurrent ops LSTM, GRU and RNN. They share everything but the cell: input
// layout (time-major, or batch-major with layout=1 since opset 14), directions, per-batch
// sequence lengths, initial states, activation functions with alpha/beta, clipping.
//
// Per direction the input projection of every time step is one GEMM (X · W^T + biases);
// each step then adds the recurrent projection H_{t-1} · R^T (one GEMM over the batch) and
// applies the cell. With sequence_lens, batch entry b runs steps [0, len_b) only (the
// reverse direction starts at len_b - 1); Y is zero past len_b, and Y_h / Y_c hold the state
// after its last step (the initial state when len_b is 0).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "ops/kernels/gemm_kernel.h"
#include "ops/op_helpers.h"
#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

enum class Cell { kRnn, kGru, kLstm };

int GatesOf(Cell cell) { return cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1; }
int ActivationsOf(Cell cell) { return cell == Cell::kLstm ? 3 : cell == Cell::kGru ? 2 : 1; }

// Input slots shared by all three ops; LSTM adds initial_c and P.
constexpr size_t kX = 0, kW = 1, kR = 2, kB = 3, kSeqLens = 4, kInitialH = 5, kInitialC = 6,
                 kP = 7;

// One activation function of the spec's list, with its alpha/beta.
struct Activation {
  enum class Fn {
    kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid,
    kElu, kSoftsign, kSoftplus
  };
  Fn fn = Fn::kSigmoid;
  double alpha = 0.0;
  double beta = 0.0;

  template <typename T>
  T operator()(T x) const {
    const T a = static_cast<T>(alpha);
    const T b = static_cast<T>(beta);
    switch (fn) {
      case Fn::kRelu: return std::max(x, T(0));
      case Fn::kTanh: return std::tanh(x);
      case Fn::kSigmoid: return T(1) / (T(1) + std::exp(-x));
      case Fn::kAffine: return a * x + b;
      case Fn::kLeakyRelu: return x >= T(0) ? x : a * x;
      case Fn::kThresholdedRelu: return x > a ? x : T(0);
      case Fn::kScaledTanh: return a * std::tanh(b * x);
      case Fn::kHardSigmoid: return std::clamp(a * x + b, T(0), T(1));
      case Fn::kElu: return x >= T(0) ? x : a * (std::exp(x) - T(1));
      case Fn::kSoftsign: return x / (T(1) + std::abs(x));
      case Fn::kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

struct ActivationInfo {
  const char* name;  // lower case
  Activation::Fn fn;
  bool has_alpha;
  bool has_beta;
  double default_alpha;  // the defaults of the ONNX operators of the same name
  double default_beta;
};

constexpr ActivationInfo kActivations[] = {
    {"relu", Activation::Fn::kRelu, false, false, 0.0, 0.0},
    {"tanh", Activation::Fn::kTanh, false, false, 0.0, 0.0},
    {"sigmoid", Activation::Fn::kSigmoid, false, false, 0.0, 0.0},
    {"affine", Activation::Fn::kAffine, true, true, 1.0, 0.0},
    {"leakyrelu", Activation::Fn::kLeakyRelu, true, false, 0.01, 0.0},
    {"thresholdedrelu", Activation::Fn::kThresholdedRelu, true, false, 1.0, 0.0},
    {"scaledtanh", Activation::Fn::kScaledTanh, true, true, 1.0, 1.0},
    {"hardsigmoid", Activation::Fn::kHardSigmoid, true, true, 0.2, 0.5},
    {"elu", Activation::Fn::kElu, true, false, 1.0, 0.0},
    {"softsign", Activation::Fn::kSoftsign, false, false, 0.0, 0.0},
    {"softplus", Activation::Fn::kSoftplus, false, false, 0.0, 0.0},
};

// Parses `activations` with activation_alpha/beta. As in onnxruntime, the alpha and beta lists
// are consumed in order by the functions that take an alpha (a beta); missing values take the
// operator defaults. A bidirectional op may list one direction's functions for both.
StatusOr<std::vector<Activation>> ParseActivations(const Node& node, Cell cell, int64_t dirs) {
  const size_t per_dir = static_cast<size_t>(ActivationsOf(cell));
  std::vector<std::string> names = node.attributes.GetStrings("activations");
  if (names.empty()) {
    names = cell == Cell::kLstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
            : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                 : std::vector<std::string>{"Tanh"};
  }
  const std::vector<float> alphas = node.attributes.GetFloats("activation_alpha");
  const std::vector<float> betas = node.attributes.GetFloats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (const std::string& name : names) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const ActivationInfo* info = nullptr;
    for (const ActivationInfo& candidate : kActivations) {
      if (lower == candidate.name) info = &candidate;
    }
    if (info == nullptr) {
      return OpError(node, StatusCode::kUnsupported, "activation function '{}' is not supported",
                     name);
    }
    Activation a{info->fn, info->default_alpha, info->default_beta};
    if (info->has_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (info->has_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    out.push_back(a);
  }
  if (dirs == 2 && out.size() == per_dir) {
    for (size_t i = 0; i < per_dir; ++i) out.push_back(out[i]);
  }
  if (out.size() != per_dir * static_cast<size_t>(dirs)) {
    return OpError(node, StatusCode::kInvalidModel,
                   "activations lists {} functions, expected {} per direction for {} direction(s)",
                   names.size(), per_dir, dirs);
  }
  return out;
}

struct Config {
  Cell cell = Cell::kLstm;
  int64_t seq = 0;
  int64_t batch = 0;
  int64_t input = 0;
  int64_t hidden = 0;
  int64_t dirs = 1;
  bool reverse = false;      // direction == "reverse" (one direction, run backwards)
  bool batch_major = false;  // layout == 1
  double clip = 0.0;         // 0: no clipping
  bool input_forget = false;         // LSTM: f = 1 - i
  bool linear_before_reset = false;  // GRU
  std::vector<Activation> activations;  // ActivationsOf(cell) per direction

  // Shapes of Y and of the states (Y_h, Y_c, initial_h, initial_c).
  Shape YShape() const {
    return batch_major ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  }
  Shape StateShape() const {
    return batch_major ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  }
};

// Validates attributes and input shapes (nullptr: absent input) and derives the sizes.
StatusOr<Config> ResolveConfig(const Node& node, Cell cell, const std::vector<const Shape*>& in) {
  auto shape = [&](size_t i) { return i < in.size() ? in[i] : nullptr; };
  auto expect = [&](size_t i, const char* what, const Shape& want) -> Status {
    if (shape(i) == nullptr || *shape(i) == want) return Status::Ok();
    return OpError(node, StatusCode::kInvalidModel, "input {} ({}) has shape {}, expected {}", i,
                   what, ShapeToString(*shape(i)), ShapeToString(want));
  };
  const Attributes& attrs = node.attributes;
  Config c;
  c.cell = cell;
  const std::string direction = attrs.GetString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return OpError(node, StatusCode::kInvalidModel, "direction '{}' is not valid", direction);
  }
  c.dirs = direction == "bidirectional" ? 2 : 1;
  c.reverse = direction == "reverse";
  const int64_t layout = attrs.GetInt("layout", 0);
  if (layout != 0 && layout != 1) {
    return OpError(node, StatusCode::kInvalidModel, "layout {} is not 0 or 1", layout);
  }
  c.batch_major = layout == 1;
  c.clip = attrs.Has("clip") ? attrs.GetFloat("clip", 0.0f) : 0.0;
  if (attrs.Has("clip") && !(c.clip > 0.0)) {
    return OpError(node, StatusCode::kInvalidModel, "clip {} must be positive", c.clip);
  }
  c.input_forget = attrs.GetInt("input_forget", 0) != 0;
  c.linear_before_reset = attrs.GetInt("linear_before_reset", 0) != 0;

  const Shape& x = *shape(kX);
  const Shape& w = *shape(kW);
  if (x.size() != 3 || w.size() != 3 || shape(kR)->size() != 3) {
    return OpError(node, StatusCode::kInvalidModel, "X, W and R must have rank 3 (got {}, {}, {})",
                   ShapeToString(x), ShapeToString(w), ShapeToString(*shape(kR)));
  }
  c.seq = c.batch_major ? x[1] : x[0];
  c.batch = c.batch_major ? x[0] : x[1];
  c.input = x[2];
  const int64_t gates = GatesOf(cell);
  if (w[1] % gates != 0) {
    return OpError(node, StatusCode::kInvalidModel, "W dim 1 ({}) is not a multiple of {}", w[1],
                   gates);
  }
  c.hidden = w[1] / gates;
  if (attrs.Has("hidden_size") && attrs.GetInt("hidden_size", 0) != c.hidden) {
    return OpError(node, StatusCode::kInvalidModel, "hidden_size {} does not match W's {}",
                   attrs.GetInt("hidden_size", 0), c.hidden);
  }
  COLLAGE_RETURN_IF_ERROR(expect(kW, "W", {c.dirs, gates * c.hidden, c.input}));
  COLLAGE_RETURN_IF_ERROR(expect(kR, "R", {c.dirs, gates * c.hidden, c.hidden}));
  COLLAGE_RETURN_IF_ERROR(expect(kB, "B", {c.dirs, 2 * gates * c.hidden}));
  COLLAGE_RETURN_IF_ERROR(expect(kSeqLens, "sequence_lens", {c.batch}));
  COLLAGE_RETURN_IF_ERROR(expect(kInitialH, "initial_h", c.StateShape()));
  if (cell == Cell::kLstm) {
    COLLAGE_RETURN_IF_ERROR(expect(kInitialC, "initial_c", c.StateShape()));
    COLLAGE_RETURN_IF_ERROR(expect(kP, "P", {c.dirs, 3 * c.hidden}));
  }
  COLLAGE_ASSIGN_OR_RETURN(c.activations, ParseActivations(node, cell, c.dirs));
  return c;
}

int MaxInputs(Cell cell) { return cell == Cell::kLstm ? 8 : 6; }
int MaxOutputs(Cell cell) { return cell == Cell::kLstm ? 3 : 2; }

Status InferRecurrent(InferContext& ctx, Cell cell) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, kX, {DType::kFloat32, DType::kFloat64}));
  std::vector<const Shape*> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    shapes.push_back(ctx.has_input(i) ? &ctx.input_type(i).shape : nullptr);
    if (!ctx.has_input(i) || i == kX) continue;
    if (i == kSeqLens) {
      COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, i, {DType::kInt32, DType::kInt64}));
    } else {
      COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, kX, i));
    }
  }
  COLLAGE_ASSIGN_OR_RETURN(Config c, ResolveConfig(ctx.node, cell, shapes));
  const DType dtype = ctx.input_type(kX).dtype;
  ctx.output_types[0] = TensorType{dtype, c.YShape()};
  for (size_t i = 1; i < ctx.output_types.size(); ++i) {
    ctx.output_types[i] = TensorType{dtype, c.StateShape()};
  }
  return Status::Ok();
}

// Offsets (elements) of time step t / direction d / batch entry b in Y, and of (d, b) in a
// state tensor, for either layout.
int64_t YOffset(const Config& c, int64_t t, int64_t d, int64_t b) {
  return (c.batch_major ? (b * c.seq + t) * c.dirs + d : (t * c.dirs + d) * c.batch + b) * c.hidden;
}
int64_t StateOffset(const Config& c, int64_t d, int64_t b) {
  return (c.batch_major ? b * c.dirs + d : d * c.batch + b) * c.hidden;
}

template <typename T>
T Clip(const Config& c, T x) {
  return c.clip > 0.0 ? std::clamp(x, static_cast<T>(-c.clip), static_cast<T>(c.clip)) : x;
}

// The inputs and outputs of one run, typed.
template <typename T>
struct Buffers {
  const T* x = nullptr;
  const T* w = nullptr;
  const T* r = nullptr;
  const T* b = nullptr;           // may be null
  const T* initial_h = nullptr;   // may be null
  const T* initial_c = nullptr;   // may be null
  const T* p = nullptr;           // may be null
  std::vector<int64_t> lens;      // per batch entry
  T* y = nullptr;                 // may be null
  T* y_h = nullptr;               // may be null
  T* y_c = nullptr;               // may be null
};

// Runs direction d (backwards when `backward`) over the whole sequence.
template <typename T>
void RunDirection(const Config& c, const Buffers<T>& io, int64_t d, bool backward) {
  const int64_t H = c.hidden, B = c.batch, S = c.seq, I = c.input;
  const int64_t G = GatesOf(c.cell);
  const int64_t GH = G * H;
  const T* w = io.w + d * GH * I;
  const T* r = io.r + d * GH * H;
  const Activation* act = &c.activations[static_cast<size_t>(d * ActivationsOf(c.cell))];

  // Input projection of all steps, time-major: gx[(t·B + b)·GH + gate·H + j].
  std::vector<T> xs(static_cast<size_t>(S * B * I));
  for (int64_t t = 0; t < S; ++t) {
    for (int64_t b = 0; b < B; ++b) {
      const T* src = io.x + (c.batch_major ? b * S + t : t * B + b) * I;
      std::copy(src, src + I, xs.begin() + (t * B + b) * I);
    }
  }
  std::vector<T> gx(static_cast<size_t>(S * B * GH));
  Gemm<T>(false, true, S * B, GH, I, T(1), xs.data(), I, w, I, T(0), gx.data(), GH);
  // Biases: Wb and Rb both join the input projection, except GRU's Rb_h with
  // linear_before_reset, which sits inside the reset gate's product (kept in rb_h).
  std::vector<T> bias_x(static_cast<size_t>(GH), T(0));
  std::vector<T> rb_h(static_cast<size_t>(H), T(0));
  if (io.b != nullptr) {
    const T* wb = io.b + d * 2 * GH;
    const T* rb = wb + GH;
    for (int64_t k = 0; k < GH; ++k) {
      const bool separate = c.cell == Cell::kGru && c.linear_before_reset && k >= 2 * H;
      bias_x[static_cast<size_t>(k)] = wb[k] + (separate ? T(0) : rb[k]);
      if (separate) rb_h[static_cast<size_t>(k - 2 * H)] = rb[k];
    }
  }
  for (int64_t row = 0; row < S * B; ++row) {
    for (int64_t k = 0; k < GH; ++k) gx[static_cast<size_t>(row * GH + k)] += bias_x[static_cast<size_t>(k)];
  }

  // State, one row per batch entry.
  std::vector<T> h(static_cast<size_t>(B * H), T(0));
  std::vector<T> cell(static_cast<size_t>(B * H), T(0));
  for (int64_t b = 0; b < B; ++b) {
    if (io.initial_h != nullptr) {
      std::copy_n(io.initial_h + StateOffset(c, d, b), H, h.begin() + b * H);
    }
    if (io.initial_c != nullptr) {
      std::copy_n(io.initial_c + StateOffset(c, d, b), H, cell.begin() + b * H);
    }
  }
  const T* p_i = io.p != nullptr ? io.p + d * 3 * H : nullptr;
  const T* p_o = p_i != nullptr ? p_i + H : nullptr;
  const T* p_f = p_i != nullptr ? p_i + 2 * H : nullptr;

  std::vector<T> gh(static_cast<size_t>(B * GH));
  std::vector<T> reset_h(static_cast<size_t>(B * H), T(0));  // GRU: r ⊙ H_{t-1}
  std::vector<T> update(static_cast<size_t>(B * H), T(0));   // GRU: z
  const bool gru_reset_first = c.cell == Cell::kGru && !c.linear_before_reset;
  for (int64_t t = 0; t < S; ++t) {
    // Recurrent projection (for GRU without linear_before_reset, the h gate's part needs the
    // reset gate first and is done below).
    Gemm<T>(false, true, B, gru_reset_first ? 2 * H : GH, H, T(1), h.data(), H, r, H, T(0),
            gh.data(), GH);
    auto time_of = [&](int64_t b) { return backward ? io.lens[static_cast<size_t>(b)] - 1 - t : t; };
    if (gru_reset_first) {
      for (int64_t b = 0; b < B; ++b) {
        if (t >= io.lens[static_cast<size_t>(b)]) continue;
        const T* gxb = gx.data() + (time_of(b) * B + b) * GH;
        const T* ghb = gh.data() + b * GH;
        for (int64_t j = 0; j < H; ++j) {
          const T z = act[0](Clip(c, gxb[j] + ghb[j]));
          const T rr = act[0](Clip(c, gxb[H + j] + ghb[H + j]));
          update[static_cast<size_t>(b * H + j)] = z;
          reset_h[static_cast<size_t>(b * H + j)] = rr * h[static_cast<size_t>(b * H + j)];
        }
      }
      Gemm<T>(false, true, B, H, H, T(1), reset_h.data(), H, r + 2 * H * H, H, T(0),
              gh.data() + 2 * H, GH);
    }
    for (int64_t b = 0; b < B; ++b) {
      if (t >= io.lens[static_cast<size_t>(b)]) continue;
      const int64_t time = time_of(b);
      const T* gxb = gx.data() + (time * B + b) * GH;
      const T* ghb = gh.data() + b * GH;
      T* hb = h.data() + b * H;
      T* cb = cell.data() + b * H;
      for (int64_t j = 0; j < H; ++j) {
        if (c.cell == Cell::kRnn) {
          hb[j] = act[0](Clip(c, gxb[j] + ghb[j]));
        } else if (c.cell == Cell::kGru) {
          T z, hh;
          if (gru_reset_first) {
            z = update[static_cast<size_t>(b * H + j)];
            hh = act[1](Clip(c, gxb[2 * H + j] + ghb[2 * H + j]));
          } else {
            z = act[0](Clip(c, gxb[j] + ghb[j]));
            const T rr = act[0](Clip(c, gxb[H + j] + ghb[H + j]));
            hh = act[1](Clip(c, gxb[2 * H + j] + rr * (ghb[2 * H + j] + rb_h[static_cast<size_t>(j)])));
          }
          hb[j] = (T(1) - z) * hh + z * hb[j];
        } else {
          // LSTM, gate order i, o, f, c; peepholes P = [Pi, Po, Pf].
          const T c_prev = cb[j];
          T pre_i = gxb[j] + ghb[j];
          T pre_f = gxb[2 * H + j] + ghb[2 * H + j];
          if (p_i != nullptr) {
            pre_i += p_i[j] * c_prev;
            pre_f += p_f[j] * c_prev;
          }
          const T i_gate = act[0](Clip(c, pre_i));
          const T f_gate = c.input_forget ? T(1) - i_gate : act[0](Clip(c, pre_f));
          const T g_gate = act[1](Clip(c, gxb[3 * H + j] + ghb[3 * H + j]));
          const T c_new = f_gate * c_prev + i_gate * g_gate;
          T pre_o = gxb[H + j] + ghb[H + j];
          if (p_o != nullptr) pre_o += p_o[j] * c_new;
          const T o_gate = act[0](Clip(c, pre_o));
          cb[j] = c_new;
          hb[j] = o_gate * act[2](c_new);
        }
      }
      if (io.y != nullptr) std::copy_n(hb, H, io.y + YOffset(c, time, d, b));
    }
  }
  for (int64_t b = 0; b < B; ++b) {
    if (io.y_h != nullptr) std::copy_n(h.begin() + b * H, H, io.y_h + StateOffset(c, d, b));
    if (io.y_c != nullptr) std::copy_n(cell.begin() + b * H, H, io.y_c + StateOffset(c, d, b));
  }
}

template <typename T>
Status RunTyped(KernelContext& ctx, const Config& c) {
  auto in = [&](size_t i) { return ctx.has_input(i) ? ctx.inputs[i].data_as<T>() : nullptr; };
  auto out = [&](size_t i) -> T* {
    return i < ctx.outputs.size() && !ctx.outputs[i].empty() ? ctx.outputs[i].data_as<T>()
                                                            : nullptr;
  };
  Buffers<T> io;
  io.x = in(kX);
  io.w = in(kW);
  io.r = in(kR);
  io.b = in(kB);
  io.initial_h = in(kInitialH);
  if (c.cell == Cell::kLstm) {
    io.initial_c = in(kInitialC);
    io.p = in(kP);
  }
  io.y = out(0);
  io.y_h = out(1);
  io.y_c = c.cell == Cell::kLstm ? out(2) : nullptr;
  if (ctx.has_input(kSeqLens)) {
    io.lens = ctx.inputs[kSeqLens].ToVector<int64_t>();
    for (int64_t len : io.lens) {
      if (len < 0 || len > c.seq) {
        return OpError(ctx.node, StatusCode::kInvalidArgument,
                       "sequence_lens has {}, outside [0, {}]", len, c.seq);
      }
    }
  } else {
    io.lens.assign(static_cast<size_t>(c.batch), c.seq);
  }
  // Steps past a batch entry's length are zero in Y (outputs may be uninitialized memory).
  if (io.y != nullptr) std::fill_n(io.y, NumElements(c.YShape()), T(0));
  for (int64_t d = 0; d < c.dirs; ++d) RunDirection<T>(c, io, d, c.reverse || d == 1);
  return Status::Ok();
}

Status RunRecurrent(KernelContext& ctx, Cell cell) {
  std::vector<const Shape*> shapes;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    shapes.push_back(ctx.has_input(i) ? &ctx.inputs[i].shape() : nullptr);
  }
  COLLAGE_ASSIGN_OR_RETURN(Config c, ResolveConfig(ctx.node, cell, shapes));
  Status status;
  COLLAGE_RETURN_IF_ERROR(DispatchFloat(ctx.node, ctx.inputs[kX].dtype(), [&](auto t) {
    status = RunTyped<decltype(t)>(ctx, c);
  }));
  return status;
}

void RegisterCell(OpRegistry& registry, const char* op_type, Cell cell) {
  registry.Register(OpDef{.op_type = op_type,
                          .domain = "",
                          .kind = OpKind::kOpaque,
                          .min_inputs = 3,
                          .max_inputs = MaxInputs(cell),
                          .min_outputs = 0,
                          .max_outputs = MaxOutputs(cell),
                          .infer = [cell](InferContext& ctx) { return InferRecurrent(ctx, cell); },
                          .run = [cell](KernelContext& ctx) { return RunRecurrent(ctx, cell); }});
}

}  // namespace

void RegisterRecurrentOps(OpRegistry& registry) {
  RegisterCell(registry, "LSTM", Cell::kLstm);
  RegisterCell(registry, "GRU", Cell::kGru);
  RegisterCell(registry, "RNN", Cell::kRnn);
}

}  // namespace collage
