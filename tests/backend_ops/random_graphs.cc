#include "random_graphs.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "ops/graph_builder.h"
#include "collage/sdk/op_registry.h"

namespace collage::backend_ops {
namespace {

using Ints = std::vector<int64_t>;

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  int64_t Uniform(int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  T Pick(const std::vector<T>& options) {
    return options[static_cast<size_t>(Uniform(0, static_cast<int64_t>(options.size()) - 1))];
  }
  Shape RandomShape(int rank, int64_t lo, int64_t hi) {
    Shape shape;
    for (int i = 0; i < rank; ++i) shape.push_back(Uniform(lo, hi));
    return shape;
  }
  uint64_t NextSeed() { return rng_(); }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

// A random weight scaled like a trained layer's (unit-variance outputs for unit inputs).
ValueId Weight(GraphBuilder& b, const std::string& name, const Shape& shape, int64_t fan_in) {
  return b.RandomNormal(name, shape, 1.0f / std::sqrt(static_cast<float>(std::max<int64_t>(1, fan_in))));
}

// An elementwise epilogue after a heavy op, as networks have them.
ValueId Epilogue(Generator& gen, GraphBuilder& b, ValueId y) {
  // A node the builder refused (e.g. a drawn geometry with no valid output) has no type.
  if (!b.ok()) return y;
  switch (gen.Uniform(0, 6)) {
    case 0: return b.Node("Relu", {y});
    case 1: {
      ValueId lo = b.Scalar<float>("clip_min", 0.0f);
      ValueId hi = b.Scalar<float>("clip_max", 6.0f);
      return b.Node("Clip", {y, lo, hi});
    }
    case 2: {  // residual: another input of the same shape
      ValueId r = b.Input("residual", b.type(y).dtype, b.shape(y));
      return b.Node("Add", {y, r});
    }
    case 3: return b.Node("Sigmoid", {y});
    case 4: return b.Node("Add", {b.Node("Relu", {y}), b.Input("residual", b.type(y).dtype, b.shape(y))});
    default: return y;
  }
}

// Pads for one spatial dim, never reaching a full (dilated) window.
void AddPads(Generator& gen, int64_t window, Ints& begin, Ints& end) {
  int64_t max_pad = std::max<int64_t>(0, (window - 1) / 2 + (gen.Chance(0.3) ? 1 : 0));
  max_pad = std::min(max_pad, window - 1);
  int64_t p = gen.Uniform(0, max_pad);
  begin.push_back(p);
  end.push_back(gen.Chance(0.3) ? gen.Uniform(0, max_pad) : p);
}

ValueId Conv(Generator& gen, GraphBuilder& b, int spatial) {
  const int64_t cin = gen.Pick<int64_t>(spatial == 3 ? Ints{1, 2, 4, 8} : Ints{1, 3, 4, 8, 16, 24, 32});
  int64_t group = 1;
  int64_t cout = gen.Pick<int64_t>({4, 8, 16, 24});
  switch (gen.Uniform(0, 3)) {
    case 0:  // depthwise, channel multiplier 1 or 2
      group = cin;
      cout = cin * gen.Pick<int64_t>({1, 1, 2});
      break;
    case 1:
      if (cin % 2 == 0) {
        group = 2;
        cout = 2 * gen.Pick<int64_t>({2, 4, 8});
      }
      break;
    default: break;
  }
  const int64_t k = spatial == 3 ? gen.Pick<int64_t>({1, 3}) : gen.Pick<int64_t>({1, 3, 5});
  const int64_t stride = gen.Pick<int64_t>({1, 1, 2});
  const int64_t dilation = k > 1 && gen.Chance(0.25) ? 2 : 1;
  const bool same = gen.Chance(0.1);
  Ints kernel, strides, dilations, pads_begin, pads_end;
  Shape in_shape{gen.Pick<int64_t>({1, 1, 2}), cin};
  for (int d = 0; d < spatial; ++d) {
    const int64_t window = (k - 1) * dilation + 1;
    kernel.push_back(k);
    strides.push_back(stride);
    dilations.push_back(dilation);
    AddPads(gen, window, pads_begin, pads_end);
    const int64_t lo = std::max<int64_t>(1, window - pads_begin.back() - pads_end.back());
    in_shape.push_back(lo + gen.Uniform(0, spatial == 3 ? 5 : 14));
  }
  ValueId x = b.Input("x", DType::kFloat32, in_shape);
  Shape w_shape{cout, cin / group};
  w_shape.insert(w_shape.end(), kernel.begin(), kernel.end());
  const int64_t fan_in = NumElements(w_shape) / cout;
  std::vector<ValueId> inputs{x, Weight(b, "w", w_shape, fan_in)};
  if (gen.Chance(0.6)) inputs.push_back(b.RandomNormal("bias", {cout}, 0.5f));
  NamedAttributes attrs;
  if (gen.Chance(0.7)) attrs.emplace_back("kernel_shape", Attribute(kernel));
  if (stride != 1 || gen.Chance(0.3)) attrs.emplace_back("strides", Attribute(strides));
  if (dilation != 1 || gen.Chance(0.2)) attrs.emplace_back("dilations", Attribute(dilations));
  if (group != 1 || gen.Chance(0.2)) attrs.emplace_back("group", Attribute(group));
  if (same) {
    attrs.emplace_back("auto_pad", Attribute(std::string(gen.Pick<std::string>({"SAME_UPPER", "SAME_LOWER"}))));
  } else {
    Ints pads = pads_begin;
    pads.insert(pads.end(), pads_end.begin(), pads_end.end());
    if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }) || gen.Chance(0.3)) {
      attrs.emplace_back("pads", Attribute(pads));
    }
  }
  return Epilogue(gen, b, b.Node("Conv", inputs, attrs));
}

ValueId ConvTranspose(Generator& gen, GraphBuilder& b) {
  const int64_t group = gen.Chance(0.25) ? 2 : 1;
  const int64_t cin = group * gen.Pick<int64_t>({1, 2, 4, 8});
  const int64_t cout_per_group = gen.Pick<int64_t>({1, 2, 4, 8});
  const int64_t k = gen.Pick<int64_t>({1, 2, 3, 4});
  const int64_t stride = gen.Pick<int64_t>({1, 2, 2});
  const int64_t dilation = k > 1 && gen.Chance(0.15) ? 2 : 1;
  Ints kernel{k, k}, strides{stride, stride}, dilations{dilation, dilation}, pads, out_pad;
  for (int side = 0; side < 4; ++side) pads.push_back(gen.Uniform(0, std::max<int64_t>(0, k - 1)));
  for (int d = 0; d < 2; ++d) {
    out_pad.push_back(stride > 1 && gen.Chance(0.3) ? gen.Uniform(0, stride - 1) : 0);
  }
  Shape in_shape{1, cin, gen.Uniform(2, 9), gen.Uniform(2, 9)};
  ValueId x = b.Input("x", DType::kFloat32, in_shape);
  Shape w_shape{cin, cout_per_group, k, k};
  std::vector<ValueId> inputs{x, Weight(b, "w", w_shape, cin / group * k * k)};
  if (gen.Chance(0.5)) inputs.push_back(b.RandomNormal("bias", {cout_per_group * group}, 0.5f));
  NamedAttributes attrs{{"kernel_shape", Attribute(kernel)}, {"strides", Attribute(strides)},
                        {"pads", Attribute(pads)}};
  if (dilation != 1) attrs.emplace_back("dilations", Attribute(dilations));
  if (group != 1) attrs.emplace_back("group", Attribute(group));
  if (out_pad[0] != 0 || out_pad[1] != 0) attrs.emplace_back("output_padding", Attribute(out_pad));
  return Epilogue(gen, b, b.Node("ConvTranspose", inputs, attrs));
}

ValueId MatMul(Generator& gen, GraphBuilder& b) {
  const int64_t m = gen.Uniform(1, 48), k = gen.Uniform(1, 64), n = gen.Uniform(1, 48);
  const bool const_b = gen.Chance(0.5);
  Shape a_shape, b_shape;
  switch (gen.Uniform(0, 6)) {
    case 0: a_shape = {m, k}; b_shape = {k, n}; break;
    case 1: { int64_t batch = gen.Uniform(1, 4); a_shape = {batch, m, k}; b_shape = {batch, k, n}; break; }
    case 2: a_shape = {2, 1, m, k}; b_shape = {3, k, n}; break;      // broadcast batch dims
    case 3: a_shape = {k}; b_shape = {k, n}; break;                   // vector × matrix
    case 4: a_shape = {gen.Uniform(1, 3), m, k}; b_shape = {k}; break; // matrix × vector
    case 5: a_shape = {gen.Uniform(1, 3), m, k}; b_shape = {k, n}; break;  // shared weight
    default: a_shape = {1, gen.Uniform(1, 3), m, k}; b_shape = {1, 1, k, n}; break;
  }
  ValueId a = b.Input("a", DType::kFloat32, a_shape);
  ValueId bv = const_b ? Weight(b, "b", b_shape, k) : b.Input("b", DType::kFloat32, b_shape);
  ValueId y = b.Node("MatMul", {a, bv});
  if (b.ok() && gen.Chance(0.4) && !b.shape(y).empty()) {  // bias over the last dim
    y = b.Node("Add", {y, b.RandomNormal("bias", {b.shape(y).back()}, 0.5f)});
  }
  return gen.Chance(0.5) ? Epilogue(gen, b, y) : y;
}

ValueId Gemm(Generator& gen, GraphBuilder& b) {
  const int64_t m = gen.Uniform(1, 48), k = gen.Uniform(1, 64), n = gen.Uniform(1, 48);
  const bool trans_a = gen.Chance(0.3), trans_b = gen.Chance(0.5);
  ValueId a = b.Input("a", DType::kFloat32, trans_a ? Shape{k, m} : Shape{m, k});
  ValueId bv = gen.Chance(0.8) ? Weight(b, "b", trans_b ? Shape{n, k} : Shape{k, n}, k)
                               : b.Input("b", DType::kFloat32, trans_b ? Shape{n, k} : Shape{k, n});
  std::vector<ValueId> inputs{a, bv};
  switch (gen.Uniform(0, 6)) {
    case 0: break;
    case 1: inputs.push_back(b.RandomNormal("c", {n}, 0.5f)); break;
    case 2: inputs.push_back(b.RandomNormal("c", {1, n}, 0.5f)); break;
    case 3: inputs.push_back(b.RandomNormal("c", {m, 1}, 0.5f)); break;
    case 4: inputs.push_back(b.RandomNormal("c", {m, n}, 0.5f)); break;
    case 5: inputs.push_back(b.RandomNormal("c", {}, 0.5f)); break;
    default: inputs.push_back(b.Input("c", DType::kFloat32, {m, n})); break;
  }
  NamedAttributes attrs;
  if (trans_a) attrs.emplace_back("transA", 1);
  if (trans_b) attrs.emplace_back("transB", 1);
  if (gen.Chance(0.3)) attrs.emplace_back("alpha", gen.Pick<float>({0.5f, 2.0f, -1.0f}));
  if (inputs.size() == 3 && gen.Chance(0.3)) attrs.emplace_back("beta", gen.Pick<float>({0.0f, 0.5f, 2.0f}));
  ValueId y = b.Node("Gemm", inputs, attrs);
  return gen.Chance(0.4) ? Epilogue(gen, b, y) : y;
}

ValueId Pool(Generator& gen, GraphBuilder& b) {
  const bool max_pool = gen.Chance(0.5);
  const int spatial = gen.Pick<int>({1, 2, 2, 2, 3});
  const int64_t k = gen.Pick<int64_t>({1, 2, 3, 3});
  const int64_t stride = gen.Pick<int64_t>({1, 2, 2});
  const int64_t dilation = max_pool && k > 1 && gen.Chance(0.2) ? 2 : 1;
  Ints kernel, strides, dilations, pads_begin, pads_end;
  Shape in_shape{gen.Pick<int64_t>({1, 2}), gen.Pick<int64_t>({1, 3, 8, 16})};
  for (int d = 0; d < spatial; ++d) {
    const int64_t window = (k - 1) * dilation + 1;
    kernel.push_back(k);
    strides.push_back(stride);
    dilations.push_back(dilation);
    // Pads must stay below the kernel (ONNX); reference implementations agree up to there.
    int64_t max_pad = std::min<int64_t>(k - 1, window / 2);
    pads_begin.push_back(gen.Uniform(0, max_pad));
    pads_end.push_back(gen.Chance(0.3) ? gen.Uniform(0, max_pad) : pads_begin.back());
    in_shape.push_back(window + gen.Uniform(0, spatial == 3 ? 5 : 12));
  }
  ValueId x = b.Input("x", DType::kFloat32, in_shape);
  Ints pads = pads_begin;
  pads.insert(pads.end(), pads_end.begin(), pads_end.end());
  NamedAttributes attrs{{"kernel_shape", Attribute(kernel)}};
  if (stride != 1 || gen.Chance(0.3)) attrs.emplace_back("strides", Attribute(strides));
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; })) {
    attrs.emplace_back("pads", Attribute(pads));
  }
  if (gen.Chance(0.3)) attrs.emplace_back("ceil_mode", 1);
  if (max_pool && dilation != 1) attrs.emplace_back("dilations", Attribute(dilations));
  if (!max_pool && gen.Chance(0.5)) attrs.emplace_back("count_include_pad", 1);
  if (gen.Chance(0.08)) {
    attrs = {{"kernel_shape", Attribute(kernel)}, {"strides", Attribute(strides)},
             {"auto_pad", gen.Pick<const char*>({"SAME_UPPER", "VALID"})}};
  }
  ValueId y = b.Node(max_pool ? "MaxPool" : "AveragePool", {x}, attrs);
  return gen.Chance(0.2) ? b.Node("Relu", {y}) : y;
}

ValueId GlobalPool(Generator& gen, GraphBuilder& b) {
  const int rank = gen.Pick<int>({3, 4, 4, 5});
  Shape shape{gen.Pick<int64_t>({1, 2}), gen.Pick<int64_t>({1, 3, 16, 64})};
  for (int d = 2; d < rank; ++d) shape.push_back(gen.Uniform(1, rank == 5 ? 5 : 14));
  ValueId x = b.Input("x", DType::kFloat32, shape);
  return b.Node(gen.Chance(0.7) ? "GlobalAveragePool" : "GlobalMaxPool", {x});
}

// One inference BatchNormalization of random rank, channels and epsilon.
ValueId BatchNormNode(Generator& gen, GraphBuilder& b) {
  const int rank = gen.Pick<int>({2, 3, 4, 4, 5});
  const int64_t c = gen.Pick<int64_t>({1, 3, 8, 16, 32});
  Shape shape{gen.Pick<int64_t>({1, 2}), c};
  for (int d = 2; d < rank; ++d) shape.push_back(gen.Uniform(1, rank == 5 ? 5 : 12));
  ValueId x = b.Input("x", DType::kFloat32, shape);
  ValueId scale = b.RandomNormal("scale", {c}, 0.5f, 1.0f);
  ValueId bias = b.RandomNormal("bias", {c}, 0.5f);
  ValueId mean = b.RandomNormal("mean", {c}, 0.5f);
  ValueId var = b.RandomUniform("var", {c}, 0.5f, 2.0f);
  NamedAttributes attrs;
  if (gen.Chance(0.5)) attrs.emplace_back("epsilon", gen.Pick<float>({1e-5f, 1e-3f, 0.1f}));
  return b.Node("BatchNormalization", {x, scale, bias, mean, var}, attrs);
}

ValueId BatchNorm(Generator& gen, GraphBuilder& b) {
  ValueId y = BatchNormNode(gen, b);
  return gen.Chance(0.4) ? Epilogue(gen, b, y) : y;
}

// Pre-activation BatchNormalization as DenseNet has it: graph `index` ends in Relu, LeakyRelu
// or Clip by index % 3.
ValueId BatchNormAct(Generator& gen, GraphBuilder& b, int index) {
  ValueId y = BatchNormNode(gen, b);
  switch (index % 3) {
    case 0: return b.Node("Relu", {y});
    case 1: return b.Node("LeakyRelu", {y}, {{"alpha", gen.Pick<float>({0.01f, 0.2f})}});
    default:
      return b.Node("Clip",
                    {y, b.Scalar<float>("clip_min", 0.0f), b.Scalar<float>("clip_max", 6.0f)});
  }
}

// Concat of one to four float32 inputs along a random axis (negative a third of the time);
// images are mostly joined along channels, with counts in and out of oneDNN's 8 and 16 blocks.
ValueId Concat(Generator& gen, GraphBuilder& b) {
  const int rank = gen.Pick<int>({1, 2, 3, 4, 4, 4, 5});
  const Shape base = gen.RandomShape(rank, 1, 7);
  const int64_t axis = rank >= 4 && gen.Chance(0.6) ? 1 : gen.Uniform(0, rank - 1);
  const int64_t inputs = gen.Uniform(1, 4);
  std::vector<ValueId> xs;
  for (int64_t i = 0; i < inputs; ++i) {
    Shape shape = base;
    shape[static_cast<size_t>(axis)] =
        axis == 1 && rank >= 4 ? gen.Pick<int64_t>({3, 8, 12, 16, 32}) : gen.Uniform(1, 7);
    xs.push_back(b.Input("x" + std::to_string(i), DType::kFloat32, shape));
  }
  return b.Node("Concat", xs, {{"axis", gen.Chance(0.33) ? axis - rank : axis}});
}

// Pre-activation on a join, as DenseNet has it: a channel Concat of one to four inputs (a
// value repeated now and then), an inference BatchNormalization, then Relu, LeakyRelu, Clip
// or nothing by index % 4.
ValueId ConcatBatchNormAct(Generator& gen, GraphBuilder& b, int index) {
  const int rank = gen.Pick<int>({2, 3, 4, 4, 5});
  Shape base{gen.Pick<int64_t>({1, 2}), 1};
  for (int d = 2; d < rank; ++d) base.push_back(gen.Uniform(1, rank == 5 ? 4 : 9));
  std::vector<ValueId> xs;
  int64_t channels = 0;
  int64_t first_channels = 0;
  const int64_t inputs = gen.Uniform(1, 4);
  for (int64_t i = 0; i < inputs; ++i) {
    if (i > 0 && gen.Chance(0.2)) {
      xs.push_back(xs.front());
      channels += first_channels;
      continue;
    }
    Shape shape = base;
    shape[1] = gen.Pick<int64_t>({1, 3, 8, 16, 32});
    if (i == 0) first_channels = shape[1];
    channels += shape[1];
    xs.push_back(b.Input("x" + std::to_string(i), DType::kFloat32, shape));
  }
  ValueId joined =
      b.Node("Concat", xs, {{"axis", gen.Chance(0.33) ? int64_t{1} - rank : int64_t{1}}});
  ValueId scale = b.RandomNormal("scale", {channels}, 0.5f, 1.0f);
  ValueId bias = b.RandomNormal("bias", {channels}, 0.5f);
  ValueId mean = b.RandomNormal("mean", {channels}, 0.5f);
  ValueId var = b.RandomUniform("var", {channels}, 0.5f, 2.0f);
  NamedAttributes attrs;
  if (gen.Chance(0.5)) attrs.emplace_back("epsilon", gen.Pick<float>({1e-5f, 1e-3f}));
  ValueId y = b.Node("BatchNormalization", {joined, scale, bias, mean, var}, attrs);
  switch (index % 4) {
    case 0: return b.Node("Relu", {y});
    case 1: return b.Node("LeakyRelu", {y}, {{"alpha", gen.Pick<float>({0.01f, 0.2f})}});
    case 2:
      return b.Node("Clip",
                    {y, b.Scalar<float>("clip_min", 0.0f), b.Scalar<float>("clip_max", 6.0f)});
    default: return y;
  }
}

ValueId LayerNorm(Generator& gen, GraphBuilder& b) {
  const int rank = gen.Pick<int>({2, 3, 3, 4});
  Shape shape = gen.RandomShape(rank, 1, 12);
  shape.back() = gen.Pick<int64_t>({7, 16, 32, 64, 96});
  const int64_t axis = gen.Chance(0.6) ? -1 : gen.Uniform(-rank, rank - 1);
  const int64_t a = axis < 0 ? axis + rank : axis;
  Shape norm_shape(shape.begin() + a, shape.end());
  ValueId x = b.Input("x", DType::kFloat32, shape);
  std::vector<ValueId> inputs{x, b.RandomNormal("scale", norm_shape, 0.5f, 1.0f)};
  if (gen.Chance(0.7)) inputs.push_back(b.RandomNormal("bias", norm_shape, 0.5f));
  NamedAttributes attrs;
  if (axis != -1 || gen.Chance(0.3)) attrs.emplace_back("axis", axis);
  if (gen.Chance(0.5)) attrs.emplace_back("epsilon", gen.Pick<float>({1e-5f, 1e-12f, 1e-2f}));
  return b.Node("LayerNormalization", inputs, attrs);
}

ValueId Softmax(Generator& gen, GraphBuilder& b) {
  const int rank = gen.Pick<int>({1, 2, 3, 4});
  ValueId x = b.Input("x", DType::kFloat32, gen.RandomShape(rank, 1, 24));
  NamedAttributes attrs;
  if (gen.Chance(0.6)) attrs.emplace_back("axis", gen.Uniform(-rank, rank - 1));
  return b.Node(gen.Chance(0.8) ? "Softmax" : "LogSoftmax", {x}, attrs);
}

const std::vector<std::string>& UnaryOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> all{"Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Sqrt", "Erf",
                                 "Log", "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos",
                                 "LeakyRelu", "Elu", "Selu", "HardSigmoid", "HardSwish",
                                 "Softplus", "Softsign", "Clip", "Identity", "Sign", "Mish"};
    std::vector<std::string> known;
    for (const std::string& op : all) {
      if (OpRegistry::Global().Find("", op) != nullptr) known.push_back(op);
    }
    return known;
  }();
  return ops;
}

ValueId Unary(Generator& gen, GraphBuilder& b, ValueId x, std::string op = "") {
  if (op.empty()) op = gen.Pick(UnaryOps());
  // Keep Sqrt and Log inside their domain in chains too (see RandomInputs).
  if (op == "Sqrt" || op == "Log") x = b.Node("Abs", {x});
  NamedAttributes attrs;
  if (op == "LeakyRelu" && gen.Chance(0.5)) attrs.emplace_back("alpha", 0.2f);
  if (op == "Elu" && gen.Chance(0.5)) attrs.emplace_back("alpha", 0.5f);
  if (op == "HardSigmoid" && gen.Chance(0.5)) attrs.emplace_back("alpha", 1.0f / 6.0f);
  if (op == "Clip") {
    std::vector<ValueId> inputs{x};
    switch (gen.Uniform(0, 3)) {
      case 0: inputs.push_back(b.Scalar<float>("lo", -1.0f)); inputs.push_back(b.Scalar<float>("hi", 0.5f)); break;
      case 1: inputs.push_back(b.Scalar<float>("lo", 0.0f)); break;
      case 2: inputs.push_back(kNoValue); inputs.push_back(b.Scalar<float>("hi", 1.0f)); break;
      default: break;
    }
    return b.Node("Clip", inputs);
  }
  return b.Node(op, {x}, attrs);
}

// A shape `other` broadcasts with: drop some leading dims, set some dims to 1.
Shape BroadcastPartner(Generator& gen, const Shape& shape) {
  if (gen.Chance(0.15)) return {};
  Shape partner(shape.begin() + gen.Uniform(0, static_cast<int64_t>(shape.size())), shape.end());
  for (int64_t& d : partner) {
    if (gen.Chance(0.35)) d = 1;
  }
  return partner;
}

const std::vector<std::string>& BinaryOps() {
  static const std::vector<std::string> ops{"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};
  return ops;
}

ValueId Binary(Generator& gen, GraphBuilder& b, ValueId x, DType dtype, std::string op = "") {
  if (op.empty()) op = gen.Pick(BinaryOps());
  if (op == "Pow" && dtype != DType::kFloat32) op = "Mul";
  Shape partner = BroadcastPartner(gen, b.shape(x));
  ValueId y;
  if (gen.Chance(0.4)) {
    Tensor t(dtype, partner);
    std::normal_distribution<float> normal(0.f, 1.f);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      float v = normal(gen.rng());
      if (op == "Pow") v = std::round(v * 2.0f);  // integer exponents keep Pow real
      if (op == "Div" && std::fabs(v) < 0.25f) v = 0.5f;
      if (dtype == DType::kFloat32) {
        t.data_as<float>()[i] = v;
      } else if (dtype == DType::kInt32) {
        t.data_as<int32_t>()[i] = static_cast<int32_t>(std::lround(v * 4.0f)) | 1;
      } else {
        t.data_as<int64_t>()[i] = static_cast<int64_t>(std::lround(v * 4.0f)) | 1;
      }
    }
    y = b.Constant("operand", t);
  } else {
    y = b.Input("y", dtype, partner);
  }
  if (!b.ok()) return x;  // the builder refused an earlier node: nothing to read
  const bool y_const = b.graph().value(y).is_constant();
  // Random real exponents of negative bases give NaN; random integer divisors include 0.
  if (!y_const && (op == "Pow" || (op == "Div" && dtype != DType::kFloat32))) {
    return b.Node("Mul", {x, y});
  }
  return gen.Chance(0.5) ? b.Node(op, {x, y}) : b.Node(op, {y, x});
}

ValueId Chain(Generator& gen, GraphBuilder& b) {
  ValueId v = b.Input("x", DType::kFloat32, gen.RandomShape(static_cast<int>(gen.Uniform(1, 4)), 1, 12));
  const int64_t length = gen.Uniform(2, 5);
  for (int64_t i = 0; i < length && b.ok(); ++i) {
    v = gen.Chance(0.6) ? Unary(gen, b, v) : Binary(gen, b, v, DType::kFloat32);
  }
  return v;
}

ValueId Transpose(Generator& gen, GraphBuilder& b) {
  const int rank = gen.Pick<int>({2, 3, 4, 4, 5});
  ValueId x = b.Input("x", DType::kFloat32, gen.RandomShape(rank, 1, rank == 5 ? 5 : 10));
  if (gen.Chance(0.15)) return b.Node("Transpose", {x});  // default: reverse the dims
  Ints perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), gen.rng());
  return b.Node("Transpose", {x}, {{"perm", Attribute(perm)}});
}

ValueId Reshape(Generator& gen, GraphBuilder& b) {
  const int rank = gen.Pick<int>({1, 2, 3, 4});
  Shape shape = gen.RandomShape(rank, 1, 8);
  ValueId x = b.Input("x", DType::kFloat32, shape);
  const int64_t total = NumElements(shape);
  // Target: the element count split into random factors, one of them maybe written -1, a
  // leading dim maybe written 0 (copy).
  Ints target;
  int64_t rest = total;
  const int out_rank = static_cast<int>(gen.Uniform(1, 4));
  for (int i = 0; i + 1 < out_rank; ++i) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= rest; ++d) {
      if (rest % d == 0) divisors.push_back(d);
    }
    int64_t d = gen.Pick(divisors);
    target.push_back(d);
    rest /= d;
  }
  target.push_back(rest);
  if (gen.Chance(0.4)) target[static_cast<size_t>(gen.Uniform(0, out_rank - 1))] = -1;
  if (gen.Chance(0.2) && target[0] == shape[0]) target[0] = 0;
  ValueId y = b.Node("Reshape", {x, b.Ints("shape", target)});
  return gen.Chance(0.3) ? b.Node("Relu", {y}) : y;
}

// ShuffleNet's channel shuffle as exporters write it (Reshape to [N, g, C/g, *S], Transpose
// of the two group axes, Reshape back); now and then a near miss (another perm) that rules
// must refuse.
ValueId ChannelShuffle(Generator& gen, GraphBuilder& b) {
  const int rank = gen.Pick<int>({4, 4, 5});
  const int64_t groups = gen.Uniform(2, 4);
  Shape shape = gen.RandomShape(rank, 1, rank == 5 ? 4 : 9);
  shape[0] = gen.Uniform(1, 2);
  shape[1] = groups * gen.Uniform(1, 12);
  ValueId x = b.Input("x", DType::kFloat32, shape);
  Ints grouped = {shape[0], groups, shape[1] / groups};
  grouped.insert(grouped.end(), shape.begin() + 2, shape.end());
  Ints perm(grouped.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[1], gen.Chance(0.85) ? perm[2] : perm[3]);
  ValueId t = b.Node("Transpose", {b.Node("Reshape", {x, b.Ints("grouped", grouped)})},
                     {{"perm", Attribute(perm)}});
  return b.Node("Reshape", {t, b.Ints("back", Ints(shape.begin(), shape.end()))});
}

// A channel cut: a Slice (negative and out-of-range indices included) or a Split, mostly on
// axis 1; the Split's other parts become graph outputs too.
ValueId ChannelCut(Generator& gen, GraphBuilder& b) {
  const int rank = gen.Pick<int>({2, 3, 4, 4, 5});
  Shape shape = gen.RandomShape(rank, 1, rank == 5 ? 4 : 8);
  shape[1] = gen.Uniform(2, 40);
  ValueId x = b.Input("x", DType::kFloat32, shape);
  const int64_t axis = gen.Chance(0.8) ? 1 : gen.Uniform(0, rank - 1);
  const int64_t dim = shape[static_cast<size_t>(axis)];
  if (gen.Chance(0.5)) {
    const int64_t start = gen.Uniform(-dim - 2, dim - 1);
    const int64_t end = gen.Chance(0.2) ? INT64_MAX : gen.Uniform(-dim, dim + 3);
    return b.Node("Slice", {x, b.Ints("starts", {start}), b.Ints("ends", {end}),
                            b.Ints("axes", {gen.Chance(0.5) ? axis : axis - rank})});
  }
  Ints sizes;
  for (int64_t rest = dim; rest > 0;) {
    sizes.push_back(sizes.size() == 2 ? rest : gen.Uniform(1, rest));
    rest -= sizes.back();
  }
  std::vector<ValueId> parts = b.NodeMulti("Split", {x, b.Ints("split", sizes)},
                                           static_cast<int>(sizes.size()), {{"axis", axis}});
  for (size_t i = 1; i < parts.size() && b.ok(); ++i)
    b.Output(parts[i], "part" + std::to_string(i));
  return parts[0];
}

// The everyday forms of the heavy ops (what exporters write for conv layers, nn.Linear and
// residual adds) with each common activation, so that every fused rule meets a candidate:
// graph `index` takes heavy form index % 5 and activation index / 5 % 3.
ValueId Fused(Generator& gen, GraphBuilder& b, int index) {
  const int64_t m = gen.Uniform(1, 40), k = gen.Uniform(8, 64), n = gen.Uniform(4, 48);
  ValueId y = kNoValue;
  switch (index % 5) {
    case 0: {
      const int64_t c = gen.Pick<int64_t>({3, 8, 16}), f = gen.Pick<int64_t>({8, 16, 32});
      ValueId x = b.Input("x", DType::kFloat32, {1, c, gen.Uniform(4, 16), gen.Uniform(4, 16)});
      y = b.Node("Conv", {x, Weight(b, "w", {f, c, 3, 3}, c * 9), b.RandomNormal("bias", {f}, 0.5f)},
                 {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}});
      break;
    }
    case 1:
      y = b.Node("MatMul", {b.Input("a", DType::kFloat32, {m, k}), Weight(b, "b", {k, n}, k)});
      break;
    case 2: {
      ValueId a = b.Input("a", DType::kFloat32, {1, m, k});
      y = b.Node("MatMul", {a, Weight(b, "b", {k, n}, k)});
      y = b.Node("Add", {y, b.RandomNormal("bias", {n}, 0.5f)});
      break;
    }
    case 3:
      y = b.Node("Gemm", {b.Input("a", DType::kFloat32, {m, k}), Weight(b, "b", {n, k}, k),
                          b.RandomNormal("c", {n}, 0.5f)},
                 {{"transB", 1}});
      break;
    default: {
      Shape shape{1, gen.Uniform(1, 16), gen.Uniform(1, 12), gen.Uniform(1, 12)};
      y = b.Node("Add", {b.Input("x", DType::kFloat32, shape), b.Input("y", DType::kFloat32, shape)});
      break;
    }
  }
  switch (index / 5 % 3) {
    case 0: return b.Node("Relu", {y});
    case 1: return b.Node("Clip", {y, b.Scalar<float>("clip_min", 0.0f), b.Scalar<float>("clip_max", 6.0f)});
    default: return b.Node("Sigmoid", {y});
  }
}

// LSTM, GRU or RNN (op `index` % 3) with a random direction, layout, optional inputs (bias,
// initial states, peepholes, sequence_lens, sometimes shorter than the sequence) and GRU's
// linear_before_reset or RNN's activation; Y_h is sometimes an output as well.
ValueId Recurrent(Generator& gen, GraphBuilder& b, int index) {
  const std::string op = index % 3 == 0 ? "LSTM" : index % 3 == 1 ? "GRU" : "RNN";
  const int64_t gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
  const std::string direction = gen.Pick<std::string>({"forward", "reverse", "bidirectional"});
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t layout = gen.Uniform(0, 1);
  const int64_t seq = gen.Uniform(1, 6), batch = gen.Uniform(1, 4);
  const int64_t input = gen.Uniform(1, 12), hidden = gen.Uniform(1, 16);
  const Shape state = layout == 1 ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  std::vector<ValueId> in = {
      b.Input("x", DType::kFloat32,
              layout == 1 ? Shape{batch, seq, input} : Shape{seq, batch, input}),
      Weight(b, "w", {dirs, gates * hidden, input}, input),
      Weight(b, "r", {dirs, gates * hidden, hidden}, hidden),
      gen.Chance(0.7) ? b.RandomNormal("b", {dirs, 2 * gates * hidden}, 0.5f) : kNoValue,
      kNoValue,
      gen.Chance(0.5) ? b.Input("initial_h", DType::kFloat32, state) : kNoValue};
  if (gen.Chance(0.3)) {
    std::vector<int32_t> lens(static_cast<size_t>(batch), static_cast<int32_t>(seq));
    if (gen.Chance(0.5)) lens[0] = static_cast<int32_t>(gen.Uniform(0, seq));
    in[4] = b.Constant<int32_t>("sequence_lens", {batch}, lens);
  }
  if (op == "LSTM") {
    in.push_back(gen.Chance(0.5) ? b.Input("initial_c", DType::kFloat32, state) : kNoValue);
    in.push_back(gen.Chance(0.3) ? b.RandomNormal("p", {dirs, 3 * hidden}, 0.5f) : kNoValue);
  }
  while (in.back() == kNoValue) in.pop_back();
  NamedAttributes attrs{
      {"direction", Attribute(direction)}, {"hidden_size", hidden}, {"layout", layout}};
  if (op == "GRU") attrs.emplace_back("linear_before_reset", gen.Uniform(0, 1));
  if (op == "LSTM") {
    // The cell's options, and the default activations spelled out now and then.
    if (gen.Chance(0.3)) attrs.emplace_back("clip", gen.Pick<float>({0.5f, 3.0f}));
    if (gen.Chance(0.2)) attrs.emplace_back("input_forget", int64_t{1});
    if (gen.Chance(0.2)) {
      std::vector<std::string> defaults;
      for (int64_t d = 0; d < dirs; ++d)
        defaults.insert(defaults.end(), {"Sigmoid", "Tanh", "Tanh"});
      attrs.emplace_back("activations", Attribute(defaults));
    }
  }
  if (op == "RNN") {
    const std::string fn = gen.Pick<std::string>({"Tanh", "Relu", "Sigmoid"});
    attrs.emplace_back("activations",
                       Attribute(std::vector<std::string>(static_cast<size_t>(dirs), fn)));
  }
  const std::vector<ValueId> out = b.NodeMulti(op, in, op == "LSTM" ? 3 : 2, attrs);
  if (gen.Chance(0.4) && b.ok()) b.Output(out[1], "y_h");
  return out[0];
}

// Makes graph number `index` of a family.
using Family = std::function<ValueId(Generator&, GraphBuilder&, int index)>;

// Families whose members are mostly one op with random shapes; `min_count` makes every op of
// a list appear at least once.
struct FamilySpec {
  std::string name;
  Family make;
  int min_count = 0;
};

Family Simple(std::function<ValueId(Generator&, GraphBuilder&)> make) {
  return [make](Generator& g, GraphBuilder& b, int) { return make(g, b); };
}

// Resize of the spatial dims (3-D to 5-D), nearest or linear, by sizes or by scales (integer
// enlargements, as exporters write them, half the time), each coordinate transform and nearest
// mode; the backends offer it for the forms they compute as ONNX does.
ValueId Resize(Generator& gen, GraphBuilder& b) {
  const int rank = gen.Pick<int>({3, 4, 4, 4, 5});
  Shape in{gen.Pick<int64_t>({1, 2}), gen.Pick<int64_t>({3, 8, 16})};
  for (int d = 2; d < rank; ++d) in.push_back(gen.Uniform(1, rank == 5 ? 4 : 9));
  NamedAttributes attrs{
      {"mode", gen.Pick<const char*>({"nearest", "nearest", "linear"})},
      {"coordinate_transformation_mode",
       gen.Pick<const char*>({"asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners"})},
      {"nearest_mode",
       gen.Pick<const char*>({"floor", "round_prefer_floor", "round_prefer_ceil"})}};
  ValueId x = b.Input("x", DType::kFloat32, in);
  if (gen.Chance(0.5)) {
    std::vector<float> scales{1.0f, 1.0f};
    for (int d = 2; d < rank; ++d) {
      scales.push_back(static_cast<float>(gen.Pick<int64_t>({1, 2, 2, 3})));
    }
    ValueId s = b.Constant<float>("scales", {rank}, scales);
    return b.Node("Resize", {x, kNoValue, s}, attrs);
  }
  std::vector<int64_t> sizes(in.begin(), in.begin() + 2);
  for (int d = 2; d < rank; ++d) sizes.push_back(gen.Uniform(1, 12));
  return b.Node("Resize", {x, kNoValue, kNoValue, b.Ints("sizes", sizes)}, attrs);
}

// A zero point of dtype `dtype` (uint8 around 128, int8 around 0).
ValueId ZeroPoint(Generator& gen, GraphBuilder& b, const std::string& name, DType dtype) {
  const int64_t offset = gen.Uniform(-20, 20);
  if (dtype == DType::kUInt8) return b.Scalar<uint8_t>(name, static_cast<uint8_t>(128 + offset));
  return b.Scalar<int8_t>(name, static_cast<int8_t>(offset));
}

// A quantized 2-D convolution in one of the two forms ONNX Runtime's quantizer writes: a
// QLinearConv, or DequantizeLinear of the input and of int8 weights (per tensor or per output
// channel) and of an int32 bias (or a float bias), Conv, maybe Relu, QuantizeLinear; uint8 or
// int8 activations, full-range or 7-bit weights, groups, strides and pads.
ValueId QuantizedConv(Generator& gen, GraphBuilder& b) {
  const DType act = gen.Pick<DType>({DType::kUInt8, DType::kInt8});
  const int64_t cin = gen.Pick<int64_t>({3, 4, 8, 16, 32});
  int64_t group = 1;
  int64_t cout = gen.Pick<int64_t>({4, 8, 16, 32});
  if (gen.Chance(0.25)) {
    group = cin;  // depthwise
    cout = cin;
  }
  const int64_t k = gen.Pick<int64_t>({1, 3, 3, 5});
  const int64_t stride = gen.Pick<int64_t>({1, 1, 2});
  const int64_t pad = gen.Chance(0.7) ? k / 2 : 0;
  const Shape in_shape{gen.Pick<int64_t>({1, 1, 2}), cin, k + gen.Uniform(0, 12),
                       k + gen.Uniform(0, 12)};
  const Shape w_shape{cout, cin / group, k, k};
  const bool per_channel = gen.Chance(0.6);
  std::vector<float> w_scale;
  for (int64_t oc = 0; oc < (per_channel ? cout : 1); ++oc) {
    w_scale.push_back(0.002f + 0.01f * static_cast<float>(gen.Uniform(0, 100)) / 100.0f);
  }
  const Shape scale_shape = per_channel ? Shape{cout} : Shape{};
  // Full-range weights, or 7-bit ones as quantizers' reduce_range makes them (what integer
  // kernels without VNNI compute exactly).
  const int64_t w_max = gen.Chance(0.5) ? 127 : 64;
  std::vector<int8_t> w(static_cast<size_t>(NumElements(w_shape)));
  for (int8_t& v : w) v = static_cast<int8_t>(gen.Uniform(-w_max, w_max));
  const float x_scale = 0.01f + 0.05f * static_cast<float>(gen.Uniform(0, 100)) / 100.0f;
  const float y_scale = x_scale * 4;
  std::vector<int32_t> bias(static_cast<size_t>(cout));
  for (int32_t& v : bias) v = static_cast<int32_t>(gen.Uniform(-2000, 2000));
  NamedAttributes attrs{{"kernel_shape", Attribute(Ints{k, k})},
                        {"strides", Attribute(Ints{stride, stride})},
                        {"pads", Attribute(Ints{pad, pad, pad, pad})},
                        {"group", Attribute(group)}};

  ValueId x = b.Input("x", act, in_shape);
  const ValueId xs = b.Scalar<float>("x_scale", x_scale);
  const ValueId xz = ZeroPoint(gen, b, "x_zero_point", act);
  const ValueId wq = b.Constant<int8_t>("w", w_shape, w);
  const ValueId ws = b.Constant<float>("w_scale", scale_shape, w_scale);
  const ValueId wz =
      b.Constant<int8_t>("w_zero_point", scale_shape, std::vector<int8_t>(w_scale.size(), 0));
  const ValueId ys = b.Scalar<float>("y_scale", y_scale);
  const ValueId yz = ZeroPoint(gen, b, "y_zero_point", act);
  const bool with_bias = gen.Chance(0.7);
  if (gen.Chance(0.3)) {
    std::vector<ValueId> in{x, xs, xz, wq, ws, wz, ys, yz};
    if (with_bias) in.push_back(b.Constant<int32_t>("bias", {cout}, bias));
    return b.Node("QLinearConv", in, attrs);
  }
  std::vector<ValueId> conv_in{
      b.Node("DequantizeLinear", {x, xs, xz}),
      b.Node("DequantizeLinear", {wq, ws, wz}, {{"axis", Attribute(int64_t{0})}})};
  if (with_bias && gen.Chance(0.7)) {
    // The quantizer's int32 bias, in units of x_scale * w_scale.
    std::vector<float> bias_scale;
    for (float s : w_scale) bias_scale.push_back(x_scale * s);
    conv_in.push_back(b.Node("DequantizeLinear",
                             {b.Constant<int32_t>("bias", {cout}, bias),
                              b.Constant<float>("bias_scale", scale_shape, bias_scale)},
                             {{"axis", Attribute(int64_t{0})}}));
  } else if (with_bias) {
    conv_in.push_back(b.RandomNormal("bias", {cout}, 0.5f));
  }
  ValueId y = b.Node("Conv", conv_in, attrs);
  if (gen.Chance(0.4)) y = b.Node("Relu", {y});
  return b.Node("QuantizeLinear", {y, ys, yz});
}

// A quantized product of an activation [rows, K] or [batch, rows, K] by constant int8
// weights, in the forms ONNX Runtime's quantizer writes for linear layers: QLinearMatMul,
// com.microsoft QGemm, or DequantizeLinear → MatMul / Gemm (transB, alpha, beta, a bias
// dequantized from int32 or in float) → QuantizeLinear; full-range or 7-bit weights, scales
// per tensor or per column.
ValueId QuantizedMatMul(Generator& gen, GraphBuilder& b) {
  const DType act = gen.Pick<DType>({DType::kUInt8, DType::kInt8});
  const int64_t k = gen.Pick<int64_t>({8, 16, 32, 64});
  const int64_t n = gen.Pick<int64_t>({4, 16, 24, 64});
  const int form =
      static_cast<int>(gen.Uniform(0, 3));  // QLinearMatMul, QGemm, QDQ MatMul, QDQ Gemm
  const bool gemm = form == 1 || form == 3;
  const bool trans_b = gemm && gen.Chance(0.5);
  Shape a_shape{gen.Pick<int64_t>({1, 3, 8}), k};
  if (!gemm && gen.Chance(0.4)) a_shape.insert(a_shape.begin(), 2);
  const bool per_column = gen.Chance(0.6);
  const int64_t w_max = gen.Chance(0.5) ? 127 : 64;
  std::vector<int8_t> w(static_cast<size_t>(k * n));
  for (int8_t& v : w) v = static_cast<int8_t>(gen.Uniform(-w_max, w_max));
  std::vector<float> w_scale;
  for (int64_t c = 0; c < (per_column ? n : 1); ++c) {
    w_scale.push_back(0.002f + 0.01f * static_cast<float>(gen.Uniform(0, 100)) / 100.0f);
  }
  const Shape scale_shape = per_column ? Shape{n} : Shape{};
  const float a_scale = 0.01f + 0.05f * static_cast<float>(gen.Uniform(0, 100)) / 100.0f;
  const float y_scale = a_scale * 4;
  std::vector<int32_t> bias(static_cast<size_t>(n));
  for (int32_t& v : bias) v = static_cast<int32_t>(gen.Uniform(-2000, 2000));

  const ValueId a = b.Input("a", act, a_shape);
  const ValueId as = b.Scalar<float>("a_scale", a_scale);
  const ValueId az = ZeroPoint(gen, b, "a_zero_point", act);
  const ValueId wq = b.Constant<int8_t>("w", trans_b ? Shape{n, k} : Shape{k, n}, w);
  const ValueId ws = b.Constant<float>("w_scale", scale_shape, w_scale);
  const ValueId wz =
      b.Constant<int8_t>("w_zero_point", scale_shape, std::vector<int8_t>(w_scale.size(), 0));
  const ValueId ys = b.Scalar<float>("y_scale", y_scale);
  const ValueId yz = ZeroPoint(gen, b, "y_zero_point", act);
  const bool with_bias = gen.Chance(0.7);
  if (form == 0) return b.Node("QLinearMatMul", {a, as, az, wq, ws, wz, ys, yz});
  NamedAttributes gemm_attrs{{"transB", Attribute(int64_t{trans_b ? 1 : 0})}};
  if (gen.Chance(0.3)) gemm_attrs.emplace_back("alpha", Attribute(0.5f));
  if (form == 1) {
    const ValueId c = with_bias ? b.Constant<int32_t>("c", {n}, bias) : kNoValue;
    return b.NodeMulti("QGemm", {a, as, az, wq, ws, wz, c, ys, yz}, 1, gemm_attrs, "",
                       "com.microsoft")[0];
  }
  const int64_t axis = trans_b ? 0 : 1;
  std::vector<ValueId> in{b.Node("DequantizeLinear", {a, as, az}),
                          b.Node("DequantizeLinear", {wq, ws, wz}, {{"axis", Attribute(axis)}})};
  if (form == 3 && with_bias) {
    if (gen.Chance(0.6)) {
      std::vector<float> bias_scale;
      for (float sc : w_scale) bias_scale.push_back(a_scale * sc);
      in.push_back(b.Node("DequantizeLinear",
                          {b.Constant<int32_t>("bias", {n}, bias),
                           b.Constant<float>("bias_scale", scale_shape, bias_scale)},
                          {{"axis", Attribute(int64_t{0})}}));
    } else {
      in.push_back(b.RandomNormal("bias", {n}, 0.5f));
    }
    if (gen.Chance(0.3)) gemm_attrs.emplace_back("beta", Attribute(2.0f));
  }
  const ValueId y = form == 3 ? b.Node("Gemm", in, gemm_attrs) : b.Node("MatMul", in);
  return b.Node("QuantizeLinear", {y, ys, yz});
}

// A dynamically quantized linear layer as ONNX Runtime's quantize_dynamic writes it:
// DynamicQuantizeLinear of a float activation [rows, K] or [batch, rows, K], MatMulInteger by
// constant int8 weights (full-range or 7-bit; a zero point of zeros, or none), Cast to float,
// Mul by the product of the two scales.
ValueId DynamicQuantizedMatMul(Generator& gen, GraphBuilder& b) {
  const int64_t k = gen.Pick<int64_t>({8, 16, 64, 256});
  const int64_t n = gen.Pick<int64_t>({4, 16, 24, 64});
  Shape a_shape{gen.Pick<int64_t>({1, 3, 8}), k};
  if (gen.Chance(0.4)) a_shape.insert(a_shape.begin(), 2);
  const int64_t w_max = gen.Chance(0.5) ? 127 : 64;
  std::vector<int8_t> w(static_cast<size_t>(k * n));
  for (int8_t& v : w) v = static_cast<int8_t>(gen.Uniform(-w_max, w_max));
  const ValueId x = b.Input("x", DType::kFloat32, a_shape);
  const std::vector<ValueId> q = b.NodeMulti("DynamicQuantizeLinear", {x}, 3);
  std::vector<ValueId> in{q[0], b.Constant<int8_t>("w", Shape{k, n}, w), q[2]};
  if (gen.Chance(0.5)) in.push_back(b.Scalar<int8_t>("w_zero_point", 0));
  const ValueId product = b.Node("MatMulInteger", in);
  const ValueId scale = b.Node("Mul", {q[1], b.Scalar<float>("w_scale", 0.01f)});
  return b.Node("Mul", {b.Node("Cast", {product}, {{"to", Attribute(int64_t{1})}}), scale});
}

}  // namespace

std::vector<SourceGraph> RandomGraphs(uint64_t seed, int per_family) {
  const std::vector<FamilySpec> families{
      {"conv2d", Simple([](Generator& g, GraphBuilder& b) { return Conv(g, b, 2); })},
      {"conv3d", Simple([](Generator& g, GraphBuilder& b) { return Conv(g, b, 3); })},
      {"conv1d", Simple([](Generator& g, GraphBuilder& b) { return Conv(g, b, 1); })},
      {"conv_transpose", Simple(ConvTranspose)},
      {"matmul", Simple(MatMul)},
      {"gemm", Simple(Gemm)},
      {"pool", Simple(Pool)},
      {"global_pool", Simple(GlobalPool)},
      {"batch_norm", Simple(BatchNorm)},
      {"layer_norm", Simple(LayerNorm)},
      {"softmax", Simple(Softmax)},
      {"unary",
       [](Generator& g, GraphBuilder& b, int index) {
         const std::vector<std::string>& ops = UnaryOps();
         ValueId x = b.Input("x", DType::kFloat32, g.RandomShape(static_cast<int>(g.Uniform(0, 4)), 1, 16));
         return Unary(g, b, x, ops[static_cast<size_t>(index) % ops.size()]);
       },
       static_cast<int>(UnaryOps().size())},
      {"binary",
       [](Generator& g, GraphBuilder& b, int index) {
         const std::vector<std::string>& ops = BinaryOps();
         // Every op in float32 first, then integer dtypes now and then.
         DType dtype = index < static_cast<int>(ops.size()) || g.Chance(0.7)
                           ? DType::kFloat32
                           : g.Pick<DType>({DType::kInt32, DType::kInt64});
         ValueId x = b.Input("x", dtype, g.RandomShape(static_cast<int>(g.Uniform(1, 4)), 1, 12));
         ValueId y = Binary(g, b, x, dtype, ops[static_cast<size_t>(index) % ops.size()]);
         return dtype == DType::kFloat32 && g.Chance(0.3) ? Epilogue(g, b, y) : y;
       },
       2 * static_cast<int>(BinaryOps().size())},
      {"fused", Fused, 15},
      {"chain", Simple(Chain)},
      {"transpose", Simple(Transpose)},
      {"reshape", Simple(Reshape)},
      // Families added later go last: each family draws its graphs' seeds in turn, so the
      // graphs of the families above stay what they were for a given --seed.
      {"batch_norm_act", BatchNormAct, 3},
      {"concat", Simple(Concat)},
      {"resize", Simple(Resize)},
      {"recurrent", Recurrent, 3},
      {"channel_shuffle", Simple(ChannelShuffle)},
      {"channel_cut", Simple(ChannelCut)},
      {"concat_batch_norm_act", ConcatBatchNormAct, 4},
      // Many: on a CPU without VNNI only uint8 inputs with 7-bit weights reach the integer rules.
      {"quantized_conv", Simple(QuantizedConv), 48},
      {"quantized_matmul", Simple(QuantizedMatMul), 48},
      {"dynamic_quantized_matmul", Simple(DynamicQuantizedMatMul), 16},
  };
  Generator gen(seed);
  std::vector<SourceGraph> graphs;
  for (const FamilySpec& family : families) {
    const int count = per_family > 0 ? std::max(per_family, family.min_count) : 0;
    for (int i = 0; i < count; ++i) {
      // Each graph has its own stream so that families do not shift each other's draws;
      // a configuration inference refuses is redrawn from the same stream.
      Generator local(gen.NextSeed());
      for (int attempt = 0; attempt < 20; ++attempt) {
        std::string name = "random." + family.name + "." + std::to_string(i);
        GraphBuilder b(name, 17, local.NextSeed());
        ValueId y = family.make(local, b, i);
        if (!b.ok()) continue;
        b.Output(y, "y");
        StatusOr<Graph> graph = std::move(b).Build();
        if (!graph.ok()) continue;
        graphs.push_back({name, std::move(*graph)});
        break;
      }
    }
  }
  return graphs;
}

}  // namespace collage::backend_ops
