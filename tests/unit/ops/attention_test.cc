// com.microsoft Attention on the reference kernels: against a hand-computed single-head case,
// against a naive evaluation of the contrib op spec written here (plain loops in double: the
// packed projection, per-head softmax(scale Q K^T + mask) V) for every mask form ONNX
// Runtime's transformer optimizer emits and the others the kernel takes, and the refusals of
// what it does not implement.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "collage/sdk/op_registry.h"
#include "elementwise_test_util.h"

namespace collage::testing {
namespace {

Node AttentionNode(size_t num_inputs, Attributes attributes, std::vector<bool> outputs = {true}) {
  Node node = MakeNode("Attention", num_inputs, std::move(outputs), std::move(attributes));
  node.domain = "com.microsoft";
  return node;
}

// The node's one output on the reference kernels (a test failure and an empty tensor if it fails).
Tensor RunNode(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  auto result = RunReferenceNode(node, opset, inputs);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? (*result)[0] : Tensor();
}

// What the mask says of key k for query i of batch row b: masked or not.
using MaskFn = std::function<bool(int64_t b, int64_t i, int64_t k)>;

struct Geometry {
  int64_t batch, sequence, input_hidden, heads, q_hidden, v_hidden;
};

// The spec, evaluated naively: masked keys get `filter` added to their score (twice when the
// causal mask masks them too), as ONNX Runtime adds them.
std::vector<float> NaiveAttention(const Geometry& g, const std::vector<float>& x,
                                  const std::vector<float>& w, const std::vector<float>* bias,
                                  const MaskFn& masked, bool causal, double scale, double filter) {
  const int64_t width = 2 * g.q_hidden + g.v_hidden;
  const int64_t dq = g.q_hidden / g.heads, dv = g.v_hidden / g.heads, s = g.sequence;
  std::vector<double> qkv(static_cast<size_t>(g.batch * s * width));
  for (int64_t t = 0; t < g.batch * s; ++t) {
    for (int64_t j = 0; j < width; ++j) {
      double v = bias != nullptr ? (*bias)[static_cast<size_t>(j)] : 0.0;
      for (int64_t c = 0; c < g.input_hidden; ++c) {
        v += double{x[static_cast<size_t>(t * g.input_hidden + c)]} *
             w[static_cast<size_t>(c * width + j)];
      }
      qkv[static_cast<size_t>(t * width + j)] = v;
    }
  }
  auto at = [&](int64_t b, int64_t t, int64_t col) {
    return qkv[static_cast<size_t>((b * s + t) * width + col)];
  };
  std::vector<float> out(static_cast<size_t>(g.batch * s * g.v_hidden));
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t h = 0; h < g.heads; ++h) {
      for (int64_t i = 0; i < s; ++i) {
        std::vector<double> p(static_cast<size_t>(s));
        for (int64_t k = 0; k < s; ++k) {
          double dot = 0;
          for (int64_t d = 0; d < dq; ++d)
            dot += at(b, i, h * dq + d) * at(b, k, g.q_hidden + h * dq + d);
          double score = scale * dot;
          if (masked && masked(b, i, k)) score += filter;
          if (causal && k > i) score += filter;
          p[static_cast<size_t>(k)] = score;
        }
        const double max = *std::max_element(p.begin(), p.end());
        double sum = 0;
        for (double& v : p) sum += (v = std::exp(v - max));
        for (int64_t d = 0; d < dv; ++d) {
          double v = 0;
          for (int64_t k = 0; k < s; ++k)
            v += p[static_cast<size_t>(k)] / sum * at(b, k, 2 * g.q_hidden + h * dv + d);
          out[static_cast<size_t>((b * s + i) * g.v_hidden + h * dv + d)] = static_cast<float>(v);
        }
      }
    }
  }
  return out;
}

TEST(AttentionTest, OneHeadByHand) {
  // Q = K = V = x (weights [I I I]); scores x x^T / sqrt(2) for x rows (1, 0) and (0, 1):
  // [[1, 0], [0, 1]] / sqrt(2), so each row's softmax is (e^a, 1) / (e^a + 1), a = 1/sqrt(2).
  const std::vector<float> x = {1, 0, 0, 1};
  const std::vector<float> w = {1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1};
  const double a = std::exp(1 / std::sqrt(2.0));
  const auto p = static_cast<float>(a / (a + 1)), q = static_cast<float>(1 / (a + 1));
  Tensor y = RunNode(AttentionNode(2, Attrs({{"num_heads", int64_t{1}}})), 1,
                     {T1<float>({1, 2, 2}, x), T1<float>({2, 6}, w)});
  ExpectTensor<float>(y, {1, 2, 2}, {p, q, q, p}, 1e-6);
  // Key 1 masked by a length of 1: both queries attend to key 0 alone and give (1, 0).
  Tensor masked =
      RunNode(AttentionNode(4, Attrs({{"num_heads", int64_t{1}}})), 1,
              {T1<float>({1, 2, 2}, x), T1<float>({2, 6}, w), Tensor(), T1<int32_t>({1}, {1})});
  ExpectTensor<float>(masked, {1, 2, 2}, {1, 0, 1, 0}, 1e-4);  // e^-10000 is 0
}

struct MaskCase {
  const char* name;
  Tensor mask;  // empty: none
  MaskFn masked;
  // Masks every key of query 0 once causal: its scores are -10000 plus a small value, which
  // float32 holds to 1e-3 only, so it is checked without the causal mask.
  bool masks_first_key = false;
};

TEST(AttentionTest, EveryMaskFormAgainstTheSpec) {
  const Geometry g{2, 4, 6, 2, 6, 6};
  const std::vector<float> x = RandomFloats(2 * 4 * 6, 11, -1, 1);
  const std::vector<float> w = RandomFloats(6 * 18, 12, -1, 1), bias = RandomFloats(18, 13, -1, 1);
  // 0 masks, any positive value keeps. Every query keeps its own key: a query whose every key
  // is masked has scores of -10000 plus a small value, which float32 holds to 1e-3 only.
  const std::vector<int32_t> raw = {1, 1, 0, 1, 1, 3, 1, 0};
  std::vector<int32_t> raw3d;
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t k = 0; k < 4; ++k) raw3d.push_back(k == i || (i * 7 + k * 3 + b) % 5 != 0);
    }
  }
  std::vector<MaskCase> cases = {
      {"no mask", Tensor(), nullptr, false},
      {"lengths", T1<int32_t>({2}, {3, 1}),
       [](int64_t b, int64_t, int64_t k) { return k >= (b == 0 ? 3 : 1); }, false},
      {"lengths past the end", T1<int32_t>({2}, {9, 4}),
       [](int64_t, int64_t, int64_t) { return false; }, false},
      {"ends and starts", T1<int32_t>({4}, {4, 3, 1, 0}),
       [](int64_t b, int64_t, int64_t k) { return b == 0 ? k < 1 : k >= 3; }, true},
      {"raw 2-D", T1<int32_t>({2, 4}, raw),
       [&](int64_t b, int64_t, int64_t k) { return raw[static_cast<size_t>(b * 4 + k)] == 0; },
       false},
      {"raw 3-D", T1<int32_t>({2, 4, 4}, raw3d),
       [&](int64_t b, int64_t i, int64_t k) {
         return raw3d[static_cast<size_t>((b * 4 + i) * 4 + k)] == 0;
       },
       false},
  };
  for (bool causal : {false, true}) {
    for (const MaskCase& c : cases) {
      if (causal && c.masks_first_key) continue;
      SCOPED_TRACE(std::string(c.name) + (causal ? ", unidirectional" : ""));
      Attributes attrs = Attrs({{"num_heads", int64_t{2}}, {"unidirectional", int64_t{causal}}});
      std::vector<Tensor> in = {T1<float>({2, 4, 6}, x), T1<float>({6, 18}, w),
                                T1<float>({18}, bias)};
      if (!c.mask.empty()) in.push_back(c.mask);
      const std::vector<float> expected =
          NaiveAttention(g, x, w, &bias, c.masked, causal, 1 / std::sqrt(3.0), -10000.0);
      ExpectTensor<float>(RunNode(AttentionNode(in.size(), attrs), 1, in), {2, 4, 6}, expected,
                          1e-4);
    }
  }
}

TEST(AttentionTest, ScaleFilterValueQkvHiddenSizesAndNoBias) {
  // V narrower than Q and K: qkv_hidden_sizes (4, 4, 2), 2 heads; no bias; a custom scale and
  // a mild filter value, under which a masked key still gets some weight.
  const Geometry g{1, 3, 5, 2, 4, 2};
  const std::vector<float> x = RandomFloats(3 * 5, 21, -1, 1), w = RandomFloats(5 * 10, 22, -1, 1);
  const Attributes attrs = Attrs({{"num_heads", int64_t{2}},
                                  {"qkv_hidden_sizes", std::vector<int64_t>{4, 4, 2}},
                                  {"scale", 0.7f},
                                  {"mask_filter_value", -2.0f}});
  const std::vector<float> expected = NaiveAttention(
      g, x, w, nullptr, [](int64_t, int64_t, int64_t k) { return k == 2; }, false, 0.7, -2.0);
  Tensor y = RunNode(
      AttentionNode(4, attrs), 1,
      {T1<float>({1, 3, 5}, x), T1<float>({5, 10}, w), Tensor(), T1<int32_t>({1, 3}, {1, 1, 0})});
  ExpectTensor<float>(y, {1, 3, 2}, expected, 1e-5);
}

TEST(AttentionTest, RefusesWhatItDoesNotImplementByName) {
  const Attributes heads = Attrs({{"num_heads", int64_t{2}}});
  const std::vector<Tensor> base = {T1<float>({1, 2, 4}, RandomFloats(8, 1)),
                                    T1<float>({4, 12}, RandomFloats(48, 2)),
                                    T1<float>({12}, RandomFloats(12, 3))};
  auto status = [&](Node node, std::vector<Tensor> extra) {
    std::vector<Tensor> in = base;
    in.insert(in.end(), extra.begin(), extra.end());
    node.inputs.resize(in.size());
    for (size_t i = 0; i < in.size(); ++i) node.inputs[i] = static_cast<ValueId>(i);
    return RunReferenceNode(node, 1, in).status();
  };
  const Tensor past = T1<float>({2, 1, 2, 1, 2}, std::vector<float>(8, 0));
  auto expect = [](const Status& s, StatusCode code, const std::string& text) {
    EXPECT_EQ(s.code(), code) << s.ToString();
    EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
  };
  expect(status(AttentionNode(3, heads), {Tensor(), past}), StatusCode::kUnsupported,
         "past state (input 4, past) is not supported");
  expect(status(AttentionNode(3, heads),
                {Tensor(), Tensor(), T1<float>({1, 2, 2, 2}, std::vector<float>(8, 0))}),
         StatusCode::kUnsupported, "attention_bias (input 5");
  expect(status(AttentionNode(3, heads, {true, true}), {}), StatusCode::kUnsupported,
         "present state (output 1, present)");
  expect(
      status(AttentionNode(3, Attrs({{"num_heads", int64_t{2}}, {"do_rotary", int64_t{1}}})), {}),
      StatusCode::kUnsupported, "do_rotary");
  expect(status(AttentionNode(3, heads), {T1<int32_t>({1, 1, 2, 2}, {1, 1, 1, 1})}),
         StatusCode::kUnsupported, "the 4-D mask_index");
  expect(status(AttentionNode(3, heads), {T1<int32_t>({3}, {1, 1, 1})}), StatusCode::kInvalidModel,
         "mask_index has shape 3;");
  expect(status(AttentionNode(3, heads), {T1<float>({1}, {2})}), StatusCode::kUnsupported,
         "input 3 has dtype float32");  // the mask must be int32
  expect(status(AttentionNode(3, Attrs({{"num_heads", int64_t{3}}})), {}),
         StatusCode::kInvalidModel, "do not divide into 3 heads");
  expect(status(AttentionNode(3, {}), {}), StatusCode::kInvalidModel, "num_heads is 0");
}

}  // namespace
}  // namespace collage::testing
