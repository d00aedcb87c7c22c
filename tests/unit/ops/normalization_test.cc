// BatchNormalization, InstanceNormalization, LayerNormalization, MeanVarianceNormalization
// on the reference kernels, against formulas evaluated here in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "elementwise_test_util.h"
#include "collage/sdk/op_registry.h"

namespace collage::testing {
namespace {

// Mean and population variance of x[begin + k*stride] for k in [0, n).
void Stats(const std::vector<float>& x, int64_t begin, int64_t n, int64_t stride, double& mean,
           double& var) {
  mean = 0;
  for (int64_t k = 0; k < n; ++k) mean += x[static_cast<size_t>(begin + k * stride)];
  mean /= static_cast<double>(n);
  var = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double d = x[static_cast<size_t>(begin + k * stride)] - mean;
    var += d * d;
  }
  var /= static_cast<double>(n);
}

TEST(BatchNormTest, InferenceFormula) {
  const int64_t N = 2, C = 3, S = 5;
  const std::vector<float> x = RandomFloats(N * C * S, 1);
  const std::vector<float> scale = {0.5f, 1.0f, 2.0f}, bias = {0.1f, -0.2f, 0.3f};
  const std::vector<float> mean = {0.0f, 1.0f, -1.0f}, var = {1.0f, 0.25f, 4.0f};
  const float eps = 1e-3f;
  std::vector<float> expected;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s) {
        const double v = x[static_cast<size_t>((n * C + c) * S + s)];
        const auto k = static_cast<size_t>(c);
        expected.push_back(static_cast<float>(
            (v - mean[k]) / std::sqrt(var[k] + double{eps}) * scale[k] + bias[k]));
      }
  Tensor y = RunOne("BatchNormalization", 15,
                    {T1<float>({N, C, S}, x), T1<float>({C}, scale), T1<float>({C}, bias),
                     T1<float>({C}, mean), T1<float>({C}, var)},
                    Attrs({{"epsilon", eps}}));
  ExpectTensor<float>(y, {N, C, S}, expected, 1e-6);
  // Rank 2 (N, C) and float64 parameters with float32 X (opset 15 allows mixed types).
  Tensor y2 = RunOne("BatchNormalization", 15,
                     {T1<float>({1, 2}, {3, 4}), T1<double>({2}, {1, 2}), T1<double>({2}, {0, 1}),
                      T1<double>({2}, {1, 2}), T1<double>({2}, {4, 1})},
                     Attrs({{"epsilon", 0.0f}}));
  ExpectTensor<float>(y2, {1, 2}, {1.0f, 5.0f}, 1e-7);
}

TEST(BatchNormTest, TrainingIsRefused) {
  std::vector<Tensor> in = {T1<float>({1, 2, 1}, {1, 2}), T1<float>({2}, {1, 1}),
                            T1<float>({2}, {0, 0}), T1<float>({2}, {0, 0}), T1<float>({2}, {1, 1})};
  Status s = RunStatus("BatchNormalization", 15, in, Attrs({{"training_mode", int64_t{1}}}));
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("training_mode"), std::string::npos) << s.message();
  // The running-statistics outputs only exist in training.
  EXPECT_EQ(RunStatus("BatchNormalization", 15, in, {}, {true, true, true}).code(),
            StatusCode::kUnsupported);
  // Wrong parameter shape.
  in[1] = T1<float>({3}, {1, 1, 1});
  EXPECT_EQ(RunStatus("BatchNormalization", 15, in).code(), StatusCode::kInvalidModel);
}

TEST(InstanceNormTest, Formula) {
  const int64_t N = 2, C = 2, S = 6;
  const std::vector<float> x = RandomFloats(N * C * S, 2);
  const std::vector<float> scale = {1.5f, -0.5f}, bias = {0.0f, 2.0f};
  std::vector<float> expected(x.size());
  for (int64_t nc = 0; nc < N * C; ++nc) {
    double m, v;
    Stats(x, nc * S, S, 1, m, v);
    const auto c = static_cast<size_t>(nc % C);
    for (int64_t s = 0; s < S; ++s) {
      const auto k = static_cast<size_t>(nc * S + s);
      expected[k] = static_cast<float>((x[k] - m) / std::sqrt(v + 1e-5) * scale[c] + bias[c]);
    }
  }
  Tensor y = RunOne("InstanceNormalization", 6,
                    {T1<float>({N, C, 2, 3}, x), T1<float>({C}, scale), T1<float>({C}, bias)});
  ExpectTensor<float>(y, {N, C, 2, 3}, expected, 1e-5);
  EXPECT_EQ(
      RunStatus("InstanceNormalization", 6,
                {T1<float>({2, 2}, {1, 2, 3, 4}), T1<float>({2}, scale), T1<float>({2}, bias)})
          .code(),
      StatusCode::kInvalidModel);
}

// LayerNorm over dims [axis, rank) of a [2, 3, 4] tensor, scale/bias given per normalised
// element (flattened).
std::vector<float> NaiveLayerNorm(const std::vector<float>& x, int64_t rows, int64_t n,
                                  const std::vector<float>& scale, const std::vector<float>& bias,
                                  std::vector<float>* means = nullptr,
                                  std::vector<float>* inv_stds = nullptr) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double m, v;
    Stats(x, r * n, n, 1, m, v);
    const double inv = 1.0 / std::sqrt(v + 1e-5);
    if (means) means->push_back(static_cast<float>(m));
    if (inv_stds) inv_stds->push_back(static_cast<float>(inv));
    for (int64_t j = 0; j < n; ++j) {
      const auto k = static_cast<size_t>(r * n + j);
      y[k] = static_cast<float>((x[k] - m) * inv * scale[static_cast<size_t>(j)] +
                                (bias.empty() ? 0.0 : bias[static_cast<size_t>(j)]));
    }
  }
  return y;
}

TEST(LayerNormTest, AxesScaleBiasAndStatistics) {
  const Shape shape{2, 3, 4};
  const std::vector<float> x = RandomFloats(24, 3);
  // Default axis -1.
  {
    const std::vector<float> scale = RandomFloats(4, 4), bias = RandomFloats(4, 5);
    std::vector<float> means, invs;
    const std::vector<float> expected = NaiveLayerNorm(x, 6, 4, scale, bias, &means, &invs);
    Node node = MakeNode("LayerNormalization", 3, {true, true, true});
    auto out = RunReferenceNode(node, 17,
                                {T1<float>(shape, x), T1<float>({4}, scale), T1<float>({4}, bias)});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectTensor<float>(out.value()[0], shape, expected, 1e-5);
    ExpectTensor<float>(out.value()[1], {2, 3, 1}, means, 1e-6);
    ExpectTensor<float>(out.value()[2], {2, 3, 1}, invs, 1e-5);
  }
  // axis 1, no bias, only the Y output.
  {
    const std::vector<float> scale = RandomFloats(12, 6);
    const std::vector<float> expected = NaiveLayerNorm(x, 2, 12, scale, {});
    Tensor y = RunOne("LayerNormalization", 17, {T1<float>(shape, x), T1<float>({3, 4}, scale)},
                      Attrs({{"axis", int64_t{1}}}));
    ExpectTensor<float>(y, shape, expected, 1e-5);
  }
  // Scale broadcast along the normalised dims ([1, 4] over [3, 4]): the general path.
  {
    const std::vector<float> s4 = RandomFloats(4, 7);
    std::vector<float> s12;
    for (int i = 0; i < 3; ++i) s12.insert(s12.end(), s4.begin(), s4.end());
    const std::vector<float> b12(12, 0.25f);
    const std::vector<float> expected = NaiveLayerNorm(x, 2, 12, s12, b12);
    Tensor y = RunOne("LayerNormalization", 17,
                      {T1<float>(shape, x), T1<float>({1, 4}, s4), Tensor::Scalar(0.25f)},
                      Attrs({{"axis", int64_t{-2}}}));
    ExpectTensor<float>(y, shape, expected, 1e-5);
  }
}

TEST(LayerNormTest, StashTypeAndDTypes) {
  const std::vector<double> x = {1, 2, 3, 4};
  Node node = MakeNode("LayerNormalization", 2, {true, true, true});
  node.attributes.Set("stash_type", int64_t{11});
  node.attributes.Set("epsilon", 0.0f);
  auto out = RunReferenceNode(node, 17, {T1<double>({1, 4}, x), T1<double>({4}, {1, 1, 1, 1})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const double inv = 1.0 / std::sqrt(1.25);
  ExpectTensor<double>(out.value()[0], {1, 4}, {-1.5 * inv, -0.5 * inv, 0.5 * inv, 1.5 * inv},
                       1e-12);
  ExpectTensor<double>(out.value()[1], {1, 1}, {2.5}, 1e-12);
  ExpectTensor<double>(out.value()[2], {1, 1}, {inv}, 1e-12);
  // Default stash type: statistics are float32 even for float64 X.
  Node plain = MakeNode("LayerNormalization", 2, {true, true});
  auto out32 = RunReferenceNode(plain, 17, {T1<double>({1, 4}, x), T1<double>({4}, {1, 1, 1, 1})});
  ASSERT_TRUE(out32.ok()) << out32.status().ToString();
  EXPECT_EQ(out32.value()[1].dtype(), DType::kFloat32);

  EXPECT_EQ(RunStatus("LayerNormalization", 17,
                      {T1<float>({1, 4}, {1, 2, 3, 4}), T1<float>({4}, {1, 1, 1, 1})},
                      Attrs({{"stash_type", int64_t{10}}}))
                .code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("LayerNormalization", 17,
                      {T1<float>({1, 4}, {1, 2, 3, 4}), T1<float>({3}, {1, 1, 1})})
                .code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(
      RunStatus("LayerNormalization", 17, {T1<int32_t>({1, 2}, {1, 2}), T1<int32_t>({2}, {1, 1})})
          .code(),
      StatusCode::kUnsupported);
}

TEST(MvnTest, DefaultAxesFormula) {
  const Shape shape{2, 3, 2, 2};
  const std::vector<float> x = RandomFloats(24, 8);
  std::vector<float> expected(x.size());
  for (int64_t c = 0; c < 3; ++c) {
    // Statistics over N, H, W for each channel.
    std::vector<float> group;
    std::vector<size_t> where;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t s = 0; s < 4; ++s) {
        where.push_back(static_cast<size_t>((n * 3 + c) * 4 + s));
        group.push_back(x[where.back()]);
      }
    double m, v;
    Stats(group, 0, 8, 1, m, v);
    for (size_t k : where) expected[k] = static_cast<float>((x[k] - m) / (std::sqrt(v) + 1e-9));
  }
  ExpectTensor<float>(RunOne("MeanVarianceNormalization", 13, {T1<float>(shape, x)}), shape,
                      expected, 1e-5);
}

TEST(LrnTest, ChannelWindowFormula) {
  const int64_t N = 2, C = 5, S = 3;
  const std::vector<float> x = RandomFloats(N * C * S, 12);
  const double alpha = 0.02, beta = 0.5, bias = 2.0;
  for (int64_t size : {2, 3}) {
    SCOPED_TRACE(size);
    std::vector<float> expected;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t s = 0; s < S; ++s) {
          // Window [c - floor((size-1)/2), c + ceil((size-1)/2)], clipped.
          double sq = 0;
          for (int64_t i = c - (size - 1) / 2; i <= c + size / 2; ++i) {
            if (i < 0 || i >= C) continue;
            const double v = x[static_cast<size_t>((n * C + i) * S + s)];
            sq += v * v;
          }
          const double v = x[static_cast<size_t>((n * C + c) * S + s)];
          expected.push_back(
              static_cast<float>(v / std::pow(bias + double{0.02f} / size * sq, beta)));
        }
    Tensor y = RunOne("LRN", 13, {T1<float>({N, C, S}, x)},
                      Attrs({{"size", size},
                             {"alpha", static_cast<float>(alpha)},
                             {"beta", static_cast<float>(beta)},
                             {"bias", static_cast<float>(bias)}}));
    ExpectTensor<float>(y, {N, C, S}, expected, 1e-6);
  }
  EXPECT_EQ(RunStatus("LRN", 13, {T1<float>({1, 2, 1}, {1, 2})}).code(),
            StatusCode::kInvalidModel);  // no size
}

TEST(NormalizationTest, Kinds) {
  const OpRegistry& r = OpRegistry::Global();
  EXPECT_EQ(r.Find("", "BatchNormalization")->kind, OpKind::kBroadcast);
  EXPECT_EQ(r.Find("", "LayerNormalization")->kind, OpKind::kReduction);
  EXPECT_EQ(r.Find("", "InstanceNormalization")->kind, OpKind::kReduction);
}

}  // namespace
}  // namespace collage::testing
