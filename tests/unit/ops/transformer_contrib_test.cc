// The com.microsoft activations and normalizations of ONNX Runtime's transformer optimizer
// (Gelu, BiasGelu, FastGelu, QuickGelu, SkipLayerNormalization,
// SkipSimplifiedLayerNormalization, EmbedLayerNormalization) on the reference kernels, against
// the contrib op spec's formulas evaluated here in double, optional inputs and outputs
// included, and what they refuse. Attention has its own file (attention_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "collage/sdk/op_registry.h"
#include "elementwise_test_util.h"

namespace collage::testing {
namespace {

// A com.microsoft node reading values 0..num_inputs-1; outputs false are unused.
Node MicrosoftNode(const std::string& op, size_t num_inputs, std::vector<bool> outputs = {true},
                   Attributes attributes = {}) {
  Node node = MakeNode(op, num_inputs, std::move(outputs), std::move(attributes));
  node.domain = "com.microsoft";
  return node;
}

std::vector<Tensor> RunNode(const Node& node, const std::vector<Tensor>& inputs) {
  auto result = RunReferenceNode(node, 1, inputs);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : std::vector<Tensor>(node.outputs.size());
}

// The status of running `node` (for the refusals).
Status StatusOf(const Node& node, const std::vector<Tensor>& inputs) {
  return RunReferenceNode(node, 1, inputs).status();
}

void ExpectError(const Status& s, StatusCode code, const std::string& text) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
}

double GeluErf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

const std::vector<float> kX = {-3.0f, -1.0f, -0.25f, 0.0f, 0.5f, 2.0f};

TEST(GeluContribTest, GeluIsTheErfForm) {
  std::vector<float> expected;
  for (float x : kX) expected.push_back(static_cast<float>(GeluErf(x)));
  ExpectTensor<float>(RunNode(MicrosoftNode("Gelu", 1), {T1<float>({2, 3}, kX)})[0], {2, 3},
                      expected, 1e-6);
  // Spot values: Gelu(1) = 0.841345, Gelu(-1) = -0.158655.
  EXPECT_NEAR(GeluErf(1.0), 0.8413447, 1e-6);
}

TEST(GeluContribTest, BiasGeluAddsTheBiasAlongTheLastAxis) {
  const std::vector<float> bias = {0.5f, -1.0f, 2.0f};
  std::vector<float> expected;
  for (size_t i = 0; i < kX.size(); ++i)
    expected.push_back(static_cast<float>(GeluErf(kX[i] + bias[i % 3])));
  ExpectTensor<float>(
      RunNode(MicrosoftNode("BiasGelu", 2), {T1<float>({2, 3}, kX), T1<float>({3}, bias)})[0],
      {2, 3}, expected, 1e-6);
}

TEST(GeluContribTest, FastGeluIsTheTanhFormWithAnOptionalBias) {
  std::vector<float> plain, biased;
  const std::vector<float> bias = {1.0f, 0.0f, -2.0f};
  for (size_t i = 0; i < kX.size(); ++i) {
    plain.push_back(static_cast<float>(GeluTanh(kX[i])));
    biased.push_back(static_cast<float>(GeluTanh(kX[i] + bias[i % 3])));
  }
  ExpectTensor<float>(RunNode(MicrosoftNode("FastGelu", 1), {T1<float>({2, 3}, kX)})[0], {2, 3},
                      plain, 1e-6);
  ExpectTensor<float>(
      RunNode(MicrosoftNode("FastGelu", 2), {T1<float>({2, 3}, kX), T1<float>({3}, bias)})[0],
      {2, 3}, biased, 1e-6);
  // The tanh form is not the erf form: they differ at x = 2 in the 5th digit, so the 1e-6
  // comparisons above tell them apart.
  EXPECT_GT(std::abs(GeluTanh(2.0) - GeluErf(2.0)), 5e-5);
}

TEST(GeluContribTest, QuickGeluIsXTimesSigmoidOfAlphaX) {
  for (float alpha : {1.702f, 2.5f}) {
    std::vector<float> expected;
    for (float x : kX)
      expected.push_back(static_cast<float>(x / (1 + std::exp(-double{alpha} * x))));
    Attributes attrs;
    if (alpha != 1.702f) attrs.Set("alpha", alpha);  // 1.702 is the default
    ExpectTensor<float>(
        RunNode(MicrosoftNode("QuickGelu", 1, {true}, attrs), {T1<float>({6}, kX)})[0], {6},
        expected, 1e-6);
  }
}

TEST(GeluContribTest, RefusesABiasOfAnotherShapeAndFloat64) {
  ExpectError(
      StatusOf(MicrosoftNode("BiasGelu", 2), {T1<float>({2, 3}, kX), T1<float>({2}, {1, 2})}),
      StatusCode::kInvalidModel, "bias (input 1) has shape 2;");
  ExpectError(StatusOf(MicrosoftNode("Gelu", 1), {T1<double>({1}, {1.0})}),
              StatusCode::kUnsupported, "float64");
}

// LayerNorm of one row in double: (x - mean) / sqrt(var + eps) * gamma + beta.
std::vector<double> LayerNormRow(const std::vector<double>& x, double eps,
                                 const std::vector<float>& gamma, const std::vector<float>* beta,
                                 bool centered, double* mean_out, double* inv_std_out) {
  double mean = 0;
  if (centered) {
    for (double v : x) mean += v;
    mean /= static_cast<double>(x.size());
  }
  double var = 0;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(x.size());
  const double inv_std = 1 / std::sqrt(var + eps);
  std::vector<double> y;
  for (size_t j = 0; j < x.size(); ++j) {
    y.push_back((x[j] - mean) * inv_std * gamma[j] + (beta != nullptr ? (*beta)[j] : 0.0));
  }
  *mean_out = mean;
  *inv_std_out = inv_std;
  return y;
}

struct SkipNormExpected {
  std::vector<float> y, mean, inv_std, sum;
};

// input (rows x hidden), skip repeated over the rows it has, optional beta and bias.
SkipNormExpected ExpectedSkipNorm(const std::vector<float>& x, const std::vector<float>& skip,
                                  int64_t hidden, const std::vector<float>& gamma,
                                  const std::vector<float>* beta, const std::vector<float>* bias,
                                  double eps, bool centered) {
  SkipNormExpected e;
  const size_t rows = x.size() / static_cast<size_t>(hidden);
  const size_t skip_rows = skip.size() / static_cast<size_t>(hidden);
  for (size_t r = 0; r < rows; ++r) {
    std::vector<double> sum;
    for (size_t j = 0; j < static_cast<size_t>(hidden); ++j) {
      const size_t k = r * static_cast<size_t>(hidden) + j;
      float v = x[k] + skip[(r % skip_rows) * static_cast<size_t>(hidden) + j];
      if (bias != nullptr) v += (*bias)[j];
      sum.push_back(v);
      e.sum.push_back(v);
    }
    double mean, inv_std;
    for (double v : LayerNormRow(sum, eps, gamma, beta, centered, &mean, &inv_std)) {
      e.y.push_back(static_cast<float>(v));
    }
    e.mean.push_back(static_cast<float>(mean));
    e.inv_std.push_back(static_cast<float>(inv_std));
  }
  return e;
}

TEST(SkipLayerNormTest, EveryOptionalInputAndOutput) {
  const int64_t b = 2, s = 2, h = 3;
  const std::vector<float> x = RandomFloats(b * s * h, 1), skip = RandomFloats(b * s * h, 2);
  const std::vector<float> gamma = {1.5f, -0.5f, 2.0f}, beta = {0.1f, 0.2f, -0.3f},
                           bias = {1.0f, -2.0f, 0.5f};
  const SkipNormExpected e = ExpectedSkipNorm(x, skip, h, gamma, &beta, &bias, 1e-5, true);
  const auto out = RunNode(MicrosoftNode("SkipLayerNormalization", 5, {true, true, true, true},
                                         Attrs({{"epsilon", 1e-5f}})),
                           {T1<float>({b, s, h}, x), T1<float>({b, s, h}, skip),
                            T1<float>({h}, gamma), T1<float>({h}, beta), T1<float>({h}, bias)});
  ExpectTensor<float>(out[0], {b, s, h}, e.y, 1e-5);
  ExpectTensor<float>(out[1], {b, s, 1}, e.mean, 1e-6);  // mean, per row
  ExpectTensor<float>(out[2], {b, s, 1}, e.inv_std, 1e-5);
  ExpectTensor<float>(out[3], {b, s, h}, e.sum, 0);  // input_skip_bias_sum, exactly
}

TEST(SkipLayerNormTest, SkipRepeatsOverTheBatchAndBetaAndBiasAreOptional) {
  const int64_t b = 3, s = 2, h = 4;
  const std::vector<float> x = RandomFloats(b * s * h, 3), skip = RandomFloats(s * h, 4);
  const std::vector<float> gamma = {1, 2, 3, 4};
  // Default epsilon 1e-12, skip (S, H) and (1, S, H), no beta, no bias.
  const SkipNormExpected e = ExpectedSkipNorm(x, skip, h, gamma, nullptr, nullptr, 1e-12, true);
  for (const Shape& skip_shape : {Shape{s, h}, Shape{1, s, h}}) {
    ExpectTensor<float>(
        RunNode(MicrosoftNode("SkipLayerNormalization", 3),
                {T1<float>({b, s, h}, x), T1<float>(skip_shape, skip), T1<float>({h}, gamma)})[0],
        {b, s, h}, e.y, 1e-5);
  }
  // A bias without beta: input 3 absent.
  const std::vector<float> bias = {0.5f, 0.5f, -1.0f, 0.0f};
  const SkipNormExpected eb = ExpectedSkipNorm(x, skip, h, gamma, nullptr, &bias, 1e-12, true);
  ExpectTensor<float>(RunNode(MicrosoftNode("SkipLayerNormalization", 5),
                              {T1<float>({b, s, h}, x), T1<float>({s, h}, skip),
                               T1<float>({h}, gamma), Tensor(), T1<float>({h}, bias)})[0],
                      {b, s, h}, eb.y, 1e-5);
}

TEST(SkipLayerNormTest, SimplifiedIsRmsNormWithoutAMean) {
  const int64_t s = 3, h = 4;
  const std::vector<float> x = RandomFloats(s * h, 5), skip = RandomFloats(s * h, 6);
  const std::vector<float> gamma = {1, -1, 0.5f, 2}, bias = {0.25f, 0, 0, -0.25f};
  const SkipNormExpected e = ExpectedSkipNorm(x, skip, h, gamma, nullptr, &bias, 1e-6, false);
  const auto out = RunNode(
      MicrosoftNode("SkipSimplifiedLayerNormalization", 4, {true, false, true, true},
                    Attrs({{"epsilon", 1e-6f}})),
      {T1<float>({s, h}, x), T1<float>({s, h}, skip), T1<float>({h}, gamma), T1<float>({h}, bias)});
  ExpectTensor<float>(out[0], {s, h}, e.y, 1e-5);
  ExpectTensor<float>(out[2], {s, 1}, e.inv_std, 1e-5);  // 1 / rms
  ExpectTensor<float>(out[3], {s, h}, e.sum, 0);
}

TEST(SkipLayerNormTest, RefusesTheRmsMeanAndSkipsThatDoNotRepeat) {
  const std::vector<Tensor> in = {T1<float>({2, 2}, {1, 2, 3, 4}), T1<float>({2, 2}, {1, 1, 1, 1}),
                                  T1<float>({2}, {1, 1})};
  ExpectError(StatusOf(MicrosoftNode("SkipSimplifiedLayerNormalization", 3, {true, true}), in),
              StatusCode::kUnsupported, "output 1 (mean) is not supported");
  ExpectError(StatusOf(MicrosoftNode("SkipLayerNormalization", 3),
                       {T1<float>({2, 2}, {1, 2, 3, 4}), T1<float>({2, 1}, {1, 1}),
                        T1<float>({2}, {1, 1})}),
              StatusCode::kInvalidModel, "skip has shape 2x1;");
  ExpectError(StatusOf(MicrosoftNode("SkipLayerNormalization", 3),
                       {in[0], in[1], T1<float>({3}, {1, 1, 1})}),
              StatusCode::kInvalidModel, "gamma (input 2) has shape 3,");
}

TEST(EmbedLayerNormTest, SumsTheThreeEmbeddingsAndCountsTheMask) {
  // vocabulary 3, positions 4, segments 2, hidden 2; batch 2, sequence 3.
  const std::vector<float> word = {0, 1, 10, 11, 20, 21},
                           position = {0.5f, 0, 1.5f, 0, 2.5f, 0, 3.5f, 0};
  const std::vector<float> segment = {0, 0, 100, 200};
  const std::vector<int32_t> ids = {2, 0, 1, 1, 1, 2}, segments = {0, 1, 0, 1, 1, 0};
  const std::vector<int32_t> mask = {1, 1, 0, 1, 2, 1};  // a 2 is not a 1: ONNX Runtime counts 1s
  const std::vector<float> gamma = {2, 1}, beta = {0, 5};
  std::vector<float> sum, y;
  for (size_t t = 0; t < ids.size(); ++t) {
    std::vector<double> row;
    for (size_t j = 0; j < 2; ++j) {
      const float v = word[static_cast<size_t>(ids[t]) * 2 + j] + position[(t % 3) * 2 + j] +
                      segment[static_cast<size_t>(segments[t]) * 2 + j];
      row.push_back(v);
      sum.push_back(v);
    }
    double mean, inv_std;
    for (double v : LayerNormRow(row, 1e-12, gamma, &beta, true, &mean, &inv_std)) {
      y.push_back(static_cast<float>(v));
    }
  }
  const auto out =
      RunNode(MicrosoftNode("EmbedLayerNormalization", 8, {true, true, true}),
              {T1<int32_t>({2, 3}, ids), T1<int32_t>({2, 3}, segments), T1<float>({3, 2}, word),
               T1<float>({4, 2}, position), T1<float>({2, 2}, segment), T1<float>({2}, gamma),
               T1<float>({2}, beta), T1<int32_t>({2, 3}, mask)});
  ExpectTensor<float>(out[0], {2, 3, 2}, y, 1e-5);
  ExpectTensor<int32_t>(out[1], {2}, {2, 2});
  ExpectTensor<float>(out[2], {2, 3, 2}, sum, 0);
}

TEST(EmbedLayerNormTest, PositionIdsAndNoSegmentsOrMask) {
  const std::vector<float> word = {1, 2, 3, 5}, position = {0, 0, 10, 20, 30, 50};
  const std::vector<float> gamma = {1, 1}, beta = {0, 0};
  const std::vector<int32_t> ids = {0, 1, 1, 0};
  const auto out = RunNode(MicrosoftNode("EmbedLayerNormalization", 9, {true, true, true}),
                           {T1<int32_t>({2, 2}, ids), Tensor(), T1<float>({2, 2}, word),
                            T1<float>({3, 2}, position), Tensor(), T1<float>({2}, gamma),
                            T1<float>({2}, beta), Tensor(), T1<int32_t>({1, 2}, {2, 0})});
  // Positions 2, 0 for every batch row: word + position[2] then word + position[0].
  ExpectTensor<float>(out[2], {2, 2, 2}, {31, 52, 3, 5, 33, 55, 1, 2}, 0);
  ExpectTensor<int32_t>(out[1], {2}, {0, 0});  // no mask: 0, as ONNX Runtime gives
  // A row of two values normalizes to (-1, 1) (up to epsilon).
  ExpectTensor<float>(out[0], {2, 2, 2}, {-1, 1, -1, 1, -1, 1, -1, 1}, 1e-5);
}

TEST(EmbedLayerNormTest, RefusesIdsOutsideTheTablesAndHalfGivenSegments) {
  std::vector<Tensor> in = {
      T1<int32_t>({1, 2}, {0, 7}),     Tensor(), T1<float>({2, 2}, {1, 2, 3, 4}),
      T1<float>({2, 2}, {0, 0, 0, 0}), Tensor(), T1<float>({2}, {1, 1}),
      T1<float>({2}, {0, 0})};
  ExpectError(StatusOf(MicrosoftNode("EmbedLayerNormalization", 7), in),
              StatusCode::kInvalidArgument, "input_ids holds 7, outside the 2 rows");
  in[0] = T1<int32_t>({1, 2}, {0, 1});
  in[1] = T1<int32_t>({1, 2}, {0, 0});
  ExpectError(StatusOf(MicrosoftNode("EmbedLayerNormalization", 7), in), StatusCode::kInvalidModel,
              "segment_ids (input 1) and segment_embedding (input 4)");
  in[1] = Tensor();
  in[0] = T1<int32_t>({1, 3}, {0, 1, 0});  // longer than the 2 positions
  ExpectError(StatusOf(MicrosoftNode("EmbedLayerNormalization", 7), in), StatusCode::kInvalidModel,
              "longer than position_embedding's 2 rows");
}

}  // namespace
}  // namespace collage::testing
