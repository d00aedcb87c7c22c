// LSTM (and GRU, RNN, which share its driver) on the reference kernel: a one-step hand
// computation, and sequences (both directions, sequence_lens, initial states, peepholes,
// clip, input_forget, custom activations, batch-major layout) against a direct per-batch,
// per-step evaluation of the ONNX equations.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "elementwise_test_util.h"
#include "collage/sdk/op_registry.h"

namespace collage::testing {
namespace {

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(LstmTest, OneStepByHand) {
  // input_size = hidden_size = batch = seq = 1; gate order i, o, f, c.
  const Tensor x = T1<float>({1, 1, 1}, {1.0f});
  const Tensor w = T1<float>({1, 4, 1}, {0.5f, 0.25f, -0.5f, 1.0f});
  const Tensor r = T1<float>({1, 4, 1}, {0.1f, 0.2f, 0.3f, 0.4f});
  // Wb_i = 0.1 and Rb_f = 0.1, the rest 0.
  const Tensor b = T1<float>({1, 8}, {0.1f, 0, 0, 0, 0, 0, 0.1f, 0});
  const Tensor h0 = T1<float>({1, 1, 1}, {0.5f});
  const Tensor c0 = T1<float>({1, 1, 1}, {0.2f});
  const double i = Sigmoid(0.5 + 0.1 * 0.5 + 0.1);
  const double o = Sigmoid(0.25 + 0.2 * 0.5);
  const double f = Sigmoid(-0.5 + 0.3 * 0.5 + 0.1);
  const double g = std::tanh(1.0 + 0.4 * 0.5);
  const double c1 = f * 0.2 + i * g;
  const double h1 = o * std::tanh(c1);

  Node node = MakeNode("LSTM", 7, {true, true, true}, Attrs({{"hidden_size", int64_t{1}}}));
  auto result = RunReferenceNode(node, 14, {x, w, r, b, Tensor(), h0, c0});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ExpectTensor<float>((*result)[0], {1, 1, 1, 1}, {static_cast<float>(h1)}, 1e-6);
  ExpectTensor<float>((*result)[1], {1, 1, 1}, {static_cast<float>(h1)}, 1e-6);
  ExpectTensor<float>((*result)[2], {1, 1, 1}, {static_cast<float>(c1)}, 1e-6);

  // Only Y_c requested: the other outputs are not produced.
  Node only_c = MakeNode("LSTM", 7, {false, false, true});
  auto result_c = RunReferenceNode(only_c, 14, {x, w, r, b, Tensor(), h0, c0});
  ASSERT_TRUE(result_c.ok()) << result_c.status().ToString();
  EXPECT_TRUE((*result_c)[0].empty());
  ExpectTensor<float>((*result_c)[2], {1, 1, 1}, {static_cast<float>(c1)}, 1e-6);
}

struct Fn {
  std::string name;
  double alpha = 0, beta = 0;
  double operator()(double x) const {
    if (name == "Sigmoid") return Sigmoid(x);
    if (name == "Tanh") return std::tanh(x);
    if (name == "Relu") return x > 0 ? x : 0;
    if (name == "HardSigmoid") return std::max(0.0, std::min(1.0, alpha * x + beta));
    if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
    if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
    if (name == "Softsign") return x / (1 + std::abs(x));
    if (name == "Elu") return x >= 0 ? x : alpha * (std::exp(x) - 1);
    ADD_FAILURE() << "no test activation " << name;
    return 0;
  }
};

struct Case {
  std::string op = "LSTM";
  int64_t seq = 4, batch = 3, input = 2, hidden = 3;
  std::string direction = "forward";
  bool bias = true, init_h = false, init_c = false, peepholes = false;
  std::vector<int32_t> lens;  // empty: no sequence_lens input
  double clip = 0;
  bool input_forget = false, linear_before_reset = false;
  std::vector<Fn> fns;  // per direction (duplicated for the reverse one); empty: defaults
  bool batch_major = false;
};

int Gates(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

struct Data {
  std::vector<float> x, w, r, b, h0, c0, p;
};

// Y [S, D, B, H] (time-major) with Y_h, Y_c [D, B, H], evaluated literally.
struct Expected {
  std::vector<double> y, y_h, y_c;
};

Expected Naive(const Case& c, const Data& d) {
  const int64_t S = c.seq, B = c.batch, I = c.input, H = c.hidden, G = Gates(c.op);
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  Expected e;
  e.y.assign(static_cast<size_t>(S * D * B * H), 0.0);
  e.y_h.assign(static_cast<size_t>(D * B * H), 0.0);
  e.y_c.assign(static_cast<size_t>(D * B * H), 0.0);
  std::vector<Fn> fns = c.fns;
  if (fns.empty()) {
    fns = c.op == "LSTM" ? std::vector<Fn>{{"Sigmoid"}, {"Tanh"}, {"Tanh"}}
          : c.op == "GRU" ? std::vector<Fn>{{"Sigmoid"}, {"Tanh"}}
                          : std::vector<Fn>{{"Tanh"}};
  }
  const size_t per_dir = c.op == "LSTM" ? 3 : c.op == "GRU" ? 2 : 1;
  if (D == 2 && fns.size() == per_dir) {
    const std::vector<Fn> forward = fns;
    fns.insert(fns.end(), forward.begin(), forward.end());
  }
  auto clip = [&](double v) { return c.clip > 0 ? std::max(-c.clip, std::min(c.clip, v)) : v; };
  auto at = [](const std::vector<float>& v, int64_t i) { return static_cast<double>(v[static_cast<size_t>(i)]); };
  for (int64_t dir = 0; dir < D; ++dir) {
    const bool backward = c.direction == "reverse" || dir == 1;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = c.lens.empty() ? S : c.lens[static_cast<size_t>(b)];
      std::vector<double> h(static_cast<size_t>(H), 0.0), cell(static_cast<size_t>(H), 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (c.init_h) h[static_cast<size_t>(j)] = at(d.h0, (dir * B + b) * H + j);
        if (c.init_c) cell[static_cast<size_t>(j)] = at(d.c0, (dir * B + b) * H + j);
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = backward ? len - 1 - step : step;
        // W·x + Wb and R·h + Rb per gate row, kept apart (GRU needs them apart).
        auto wx = [&](int64_t row) {
          double s = c.bias ? at(d.b, dir * 2 * G * H + row) : 0.0;
          for (int64_t k = 0; k < I; ++k) s += at(d.w, (dir * G * H + row) * I + k) * at(d.x, (t * B + b) * I + k);
          return s;
        };
        auto rh = [&](int64_t row, const std::vector<double>& hv) {
          double s = c.bias ? at(d.b, dir * 2 * G * H + G * H + row) : 0.0;
          for (int64_t k = 0; k < H; ++k) s += at(d.r, (dir * G * H + row) * H + k) * hv[static_cast<size_t>(k)];
          return s;
        };
        std::vector<double> nh(static_cast<size_t>(H)), nc(static_cast<size_t>(H));
        const Fn* fn = &fns[static_cast<size_t>(dir) * per_dir];
        for (int64_t j = 0; j < H; ++j) {
          if (c.op == "RNN") {
            nh[static_cast<size_t>(j)] = fn[0](clip(wx(j) + rh(j, h)));
          } else if (c.op == "GRU") {
            const double z = fn[0](clip(wx(j) + rh(j, h)));
            const double rr = fn[0](clip(wx(H + j) + rh(H + j, h)));
            double hh;
            if (c.linear_before_reset) {
              hh = fn[1](clip(wx(2 * H + j) + rr * rh(2 * H + j, h)));
            } else {
              std::vector<double> reset(static_cast<size_t>(H));
              for (int64_t k = 0; k < H; ++k) {
                reset[static_cast<size_t>(k)] =
                    fn[0](clip(wx(H + k) + rh(H + k, h))) * h[static_cast<size_t>(k)];
              }
              hh = fn[1](clip(wx(2 * H + j) + rh(2 * H + j, reset)));
            }
            nh[static_cast<size_t>(j)] = (1 - z) * hh + z * h[static_cast<size_t>(j)];
          } else {
            const double cp = cell[static_cast<size_t>(j)];
            const double pi = c.peepholes ? at(d.p, dir * 3 * H + j) : 0.0;
            const double po = c.peepholes ? at(d.p, dir * 3 * H + H + j) : 0.0;
            const double pf = c.peepholes ? at(d.p, dir * 3 * H + 2 * H + j) : 0.0;
            const double i = fn[0](clip(wx(j) + rh(j, h) + pi * cp));
            const double f =
                c.input_forget ? 1 - i : fn[0](clip(wx(2 * H + j) + rh(2 * H + j, h) + pf * cp));
            const double g = fn[1](clip(wx(3 * H + j) + rh(3 * H + j, h)));
            const double cn = f * cp + i * g;
            const double o = fn[0](clip(wx(H + j) + rh(H + j, h) + po * cn));
            nc[static_cast<size_t>(j)] = cn;
            nh[static_cast<size_t>(j)] = o * fn[2](cn);
          }
        }
        h = nh;
        if (c.op == "LSTM") cell = nc;
        for (int64_t j = 0; j < H; ++j) {
          e.y[static_cast<size_t>(((t * D + dir) * B + b) * H + j)] = h[static_cast<size_t>(j)];
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        e.y_h[static_cast<size_t>((dir * B + b) * H + j)] = h[static_cast<size_t>(j)];
        e.y_c[static_cast<size_t>((dir * B + b) * H + j)] = cell[static_cast<size_t>(j)];
      }
    }
  }
  return e;
}

// Swaps the first two dims of a row-major [a, b, rest...] buffer.
std::vector<float> SwapLeading(const std::vector<float>& v, int64_t a, int64_t b, int64_t rest) {
  std::vector<float> out(v.size());
  for (int64_t i = 0; i < a; ++i) {
    for (int64_t j = 0; j < b; ++j) {
      for (int64_t k = 0; k < rest; ++k) {
        out[static_cast<size_t>((j * a + i) * rest + k)] = v[static_cast<size_t>((i * b + j) * rest + k)];
      }
    }
  }
  return out;
}

// Y [S, D, B, H] → [B, S, D, H].
std::vector<double> YToBatchMajor(const std::vector<double>& y, int64_t S, int64_t D, int64_t B,
                                  int64_t H) {
  std::vector<double> out(y.size());
  for (int64_t t = 0; t < S; ++t)
    for (int64_t d = 0; d < D; ++d)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j)
          out[static_cast<size_t>(((b * S + t) * D + d) * H + j)] =
              y[static_cast<size_t>(((t * D + d) * B + b) * H + j)];
  return out;
}

void RunCase(const Case& c, uint32_t seed) {
  const int64_t S = c.seq, B = c.batch, I = c.input, H = c.hidden, G = Gates(c.op);
  const int64_t D = c.direction == "bidirectional" ? 2 : 1;
  Data d;
  d.x = RandomFloats(static_cast<size_t>(S * B * I), seed, -1.5f, 1.5f);
  d.w = RandomFloats(static_cast<size_t>(D * G * H * I), seed + 1, -0.8f, 0.8f);
  d.r = RandomFloats(static_cast<size_t>(D * G * H * H), seed + 2, -0.8f, 0.8f);
  d.b = RandomFloats(static_cast<size_t>(D * 2 * G * H), seed + 3, -0.5f, 0.5f);
  d.h0 = RandomFloats(static_cast<size_t>(D * B * H), seed + 4, -1.0f, 1.0f);
  d.c0 = RandomFloats(static_cast<size_t>(D * B * H), seed + 5, -1.0f, 1.0f);
  d.p = RandomFloats(static_cast<size_t>(D * 3 * H), seed + 6, -0.5f, 0.5f);
  const Expected e = Naive(c, d);

  Attributes attrs = Attrs({{"hidden_size", H}, {"direction", c.direction}});
  if (c.clip > 0) attrs.Set("clip", static_cast<float>(c.clip));
  if (c.input_forget) attrs.Set("input_forget", int64_t{1});
  if (c.linear_before_reset) attrs.Set("linear_before_reset", int64_t{1});
  if (c.batch_major) attrs.Set("layout", int64_t{1});
  if (!c.fns.empty()) {
    // Alphas and betas are listed in order for the functions that take them.
    std::vector<std::string> names;
    std::vector<float> alphas, betas;
    for (const Fn& fn : c.fns) {
      names.push_back(fn.name);
      if (fn.name == "HardSigmoid" || fn.name == "LeakyRelu" || fn.name == "ScaledTanh" ||
          fn.name == "Elu") {
        alphas.push_back(static_cast<float>(fn.alpha));
      }
      if (fn.name == "HardSigmoid" || fn.name == "ScaledTanh") betas.push_back(static_cast<float>(fn.beta));
    }
    attrs.Set("activations", names);
    if (!alphas.empty()) attrs.Set("activation_alpha", alphas);
    if (!betas.empty()) attrs.Set("activation_beta", betas);
  }
  const bool lstm = c.op == "LSTM";
  std::vector<Tensor> inputs(lstm ? 8 : 6);
  inputs[0] = c.batch_major ? T1<float>({B, S, I}, SwapLeading(d.x, S, B, I))
                            : T1<float>({S, B, I}, d.x);
  inputs[1] = T1<float>({D, G * H, I}, d.w);
  inputs[2] = T1<float>({D, G * H, H}, d.r);
  if (c.bias) inputs[3] = T1<float>({D, 2 * G * H}, d.b);
  if (!c.lens.empty()) inputs[4] = T1<int32_t>({B}, c.lens);
  auto state = [&](const std::vector<float>& v) {
    return c.batch_major ? T1<float>({B, D, H}, SwapLeading(v, D, B, H)) : T1<float>({D, B, H}, v);
  };
  if (c.init_h) inputs[5] = state(d.h0);
  if (lstm && c.init_c) inputs[6] = state(d.c0);
  if (lstm && c.peepholes) inputs[7] = T1<float>({D, 3 * H}, d.p);
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();

  Node node = MakeNode(c.op, inputs.size(), lstm ? std::vector<bool>{true, true, true}
                                                 : std::vector<bool>{true, true},
                       attrs);
  auto result = RunReferenceNode(node, 14, inputs);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  auto to_float = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  auto state_expected = [&](const std::vector<double>& v) {
    if (!c.batch_major) return to_float(v);
    return SwapLeading(to_float(v), D, B, H);
  };
  const Shape y_shape = c.batch_major ? Shape{B, S, D, H} : Shape{S, D, B, H};
  const Shape state_shape = c.batch_major ? Shape{B, D, H} : Shape{D, B, H};
  ExpectTensor<float>((*result)[0], y_shape,
                      to_float(c.batch_major ? YToBatchMajor(e.y, S, D, B, H) : e.y), 1e-5);
  ExpectTensor<float>((*result)[1], state_shape, state_expected(e.y_h), 1e-5);
  if (lstm) ExpectTensor<float>((*result)[2], state_shape, state_expected(e.y_c), 1e-5);
}

TEST(LstmTest, BidirectionalWithSequenceLens) {
  Case c;
  c.direction = "bidirectional";
  c.lens = {4, 2, 0};  // a full, a short and an empty sequence
  c.init_h = true;
  c.init_c = true;
  RunCase(c, 11);
}

TEST(LstmTest, ForwardReverseAndDefaults) {
  Case c;
  c.bias = false;
  RunCase(c, 21);
  c.direction = "reverse";
  c.lens = {3, 4, 1};
  RunCase(c, 22);
}

TEST(LstmTest, PeepholesClipAndInputForget) {
  Case c;
  c.direction = "bidirectional";
  c.peepholes = true;
  c.init_c = true;
  c.clip = 0.6;
  RunCase(c, 31);
  c.input_forget = true;
  c.lens = {2, 4, 3};
  RunCase(c, 32);
}

TEST(LstmTest, CustomActivationsConsumeAlphaBetaInOrder) {
  Case c;
  c.direction = "bidirectional";
  c.fns = {{"HardSigmoid", 0.3, 0.6}, {"LeakyRelu", 0.05}, {"Softsign"},
           {"Sigmoid"},               {"ScaledTanh", 0.9, 1.2}, {"Elu", 0.7}};
  RunCase(c, 41);
}

TEST(LstmTest, BatchMajorLayout) {
  Case c;
  c.direction = "bidirectional";
  c.batch_major = true;
  c.lens = {1, 4, 3};
  c.init_h = true;
  c.init_c = true;
  c.peepholes = true;
  RunCase(c, 51);
}

TEST(LstmTest, GruAndRnnShareTheDriver) {
  for (bool lbr : {false, true}) {
    Case c;
    c.op = "GRU";
    c.direction = "bidirectional";
    c.linear_before_reset = lbr;
    c.lens = {4, 1, 3};
    c.init_h = true;
    RunCase(c, lbr ? 61 : 62);
  }
  Case gru;
  gru.op = "GRU";
  gru.batch_major = true;
  gru.clip = 0.5;
  gru.fns = {{"HardSigmoid", 0.25, 0.5}, {"Relu"}};
  RunCase(gru, 63);
  Case rnn;
  rnn.op = "RNN";
  rnn.direction = "reverse";
  rnn.lens = {2, 3, 4};
  rnn.init_h = true;
  RunCase(rnn, 71);
  rnn.direction = "bidirectional";
  rnn.fns = {{"Relu"}, {"Tanh"}};
  RunCase(rnn, 72);
}

TEST(LstmTest, RefusesWhatItCannotRun) {
  const Tensor x = T1<float>({1, 1, 1}, {1});
  const Tensor w = T1<float>({1, 4, 1}, {1, 1, 1, 1});
  const Tensor r = T1<float>({1, 4, 1}, {1, 1, 1, 1});
  EXPECT_EQ(RunStatus("LSTM", 14, {x, w, r},
                      Attrs({{"activations", std::vector<std::string>{"Sigmoid", "Gelu", "Tanh"}}}),
                      {true, true, true})
                .code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("LSTM", 14, {x, w, r},
                      Attrs({{"activations", std::vector<std::string>{"Sigmoid", "Tanh"}}}),
                      {true, true, true})
                .code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("LSTM", 14, {x, w, T1<float>({1, 4, 2}, std::vector<float>(8, 1))}, {},
                      {true, true, true})
                .code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("LSTM", 14, {x, w, r}, Attrs({{"hidden_size", int64_t{2}}}),
                      {true, true, true})
                .code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("LSTM", 14, {x, w, r}, Attrs({{"direction", std::string("bidirectional")}}),
                      {true, true, true})
                .code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("LSTM", 14, {x, w, r, Tensor(), T1<int32_t>({1}, {2})}, {}, {true, true, true})
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(RunStatus("LSTM", 14,
                      {T1<int32_t>({1, 1, 1}, {1}), T1<int32_t>({1, 4, 1}, {1, 1, 1, 1}),
                       T1<int32_t>({1, 4, 1}, {1, 1, 1, 1})},
                      {}, {true, true, true})
                .code(),
            StatusCode::kUnsupported);
  const OpDef* def = OpRegistry::Global().Find("", "LSTM");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->kind, OpKind::kOpaque);
}

}  // namespace
}  // namespace collage::testing
