// ConvTranspose on the reference kernel: hand-worked cases, the spec's padding rules, and
// random 1-D/2-D/3-D configurations against a direct scatter formula.
#include <gtest/gtest.h>

#include <vector>

#include "elementwise_test_util.h"
#include "collage/sdk/op_registry.h"

namespace collage::testing {
namespace {

TEST(ConvTransposeTest, IsOutElementwiseFusable) {
  const OpDef* def = OpRegistry::Global().Find("", "ConvTranspose");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->kind, OpKind::kOutEWiseFusable);
}

TEST(ConvTransposeTest, HandWorked1D) {
  const Tensor x = T1<float>({1, 1, 3}, {1, 2, 3});
  const Tensor w = T1<float>({1, 1, 2}, {1, 1});
  // Each input adds [x, x] at its position: 1 1 / 2 2 / 3 3 overlapped by one.
  ExpectTensor<float>(RunOne("ConvTranspose", 11, {x, w}), {1, 1, 4}, {1, 3, 5, 3});
  // Stride 2: the patches no longer overlap; bias adds everywhere.
  ExpectTensor<float>(RunOne("ConvTranspose", 11, {x, w, T1<float>({1}, {10})},
                             Attrs({{"strides", std::vector<int64_t>{2}}})),
                      {1, 1, 6}, {11, 11, 12, 12, 13, 13});
}

TEST(ConvTransposeTest, HandWorked2D) {
  const Tensor x = T1<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = T1<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  ExpectTensor<float>(RunOne("ConvTranspose", 11, {x, w}), {1, 1, 3, 3},
                      {1, 3, 2, 4, 10, 6, 3, 7, 4});
  // Two output channels: the second kernel doubles; pads crop one border on each side.
  const Tensor w2 = T1<float>({1, 2, 2, 2}, {1, 1, 1, 1, 2, 2, 2, 2});
  ExpectTensor<float>(RunOne("ConvTranspose", 11, {x, w2},
                             Attrs({{"pads", std::vector<int64_t>{1, 1, 0, 0}}})),
                      {1, 2, 2, 2}, {10, 6, 7, 4, 20, 12, 14, 8});
}

// The scatter of x = [1, 2, 3] with kernel [1, 1, 1] and stride 2 covers 7 positions:
// [1, 1, 3, 2, 5, 3, 3]. Requested sizes crop or extend it as the spec's pad formula says.
TEST(ConvTransposeTest, OutputShapeAndAutoPadPlaceThePadding) {
  const Tensor x = T1<float>({1, 1, 3}, {1, 2, 3});
  const Tensor w = T1<float>({1, 1, 3}, {1, 1, 1});
  const std::vector<int64_t> s2 = {2};
  // SAME_*: output = input · stride = 6, total padding 1: at the end for SAME_UPPER, at the
  // start for SAME_LOWER.
  ExpectTensor<float>(RunOne("ConvTranspose", 11, {x, w},
                             Attrs({{"strides", s2}, {"auto_pad", std::string("SAME_UPPER")}})),
                      {1, 1, 6}, {1, 1, 3, 2, 5, 3});
  ExpectTensor<float>(RunOne("ConvTranspose", 11, {x, w},
                             Attrs({{"strides", s2}, {"auto_pad", std::string("SAME_LOWER")}})),
                      {1, 1, 6}, {1, 3, 2, 5, 3, 3});
  // output_shape larger than the scatter: total padding -1, the extra zero goes at the end.
  ExpectTensor<float>(RunOne("ConvTranspose", 11, {x, w},
                             Attrs({{"strides", s2}, {"output_shape", std::vector<int64_t>{8}}})),
                      {1, 1, 8}, {1, 1, 3, 2, 5, 3, 3, 0});
  // output_shape smaller: total padding 2, split evenly.
  ExpectTensor<float>(RunOne("ConvTranspose", 11, {x, w},
                             Attrs({{"strides", s2}, {"output_shape", std::vector<int64_t>{5}}})),
                      {1, 1, 5}, {1, 3, 2, 5, 3});
  // The full N, C, spatial form of output_shape is accepted too.
  ExpectTensor<float>(
      RunOne("ConvTranspose", 11, {x, w},
             Attrs({{"strides", s2}, {"output_shape", std::vector<int64_t>{1, 1, 5}}})),
      {1, 1, 5}, {1, 3, 2, 5, 3});
  // output_padding adds zeros-or-scatter at the end; VALID ignores pads.
  ExpectTensor<float>(RunOne("ConvTranspose", 11, {x, w},
                             Attrs({{"strides", s2}, {"output_padding", std::vector<int64_t>{1}}})),
                      {1, 1, 8}, {1, 1, 3, 2, 5, 3, 3, 0});
  ExpectTensor<float>(RunOne("ConvTranspose", 11, {x, w},
                             Attrs({{"auto_pad", std::string("VALID")},
                                    {"pads", std::vector<int64_t>{1, 1}}})),
                      {1, 1, 5}, {1, 3, 6, 5, 3});
}

struct Config {
  Shape x;  // N, C, spatial...
  int64_t out_channels_per_group;
  Shape kernel;
  int64_t group;
  std::vector<int64_t> strides, dilations, pads, output_padding;
  bool bias;
};

// y[n, m, o] = b[m] + Σ x[n, c, i] · w[c, m mod Mg, k] over c in m's group and all (i, k)
// with o = i · stride − pad_begin + k · dilation, written as the literal scatter.
std::vector<double> NaiveConvTranspose(const Config& cfg, const std::vector<float>& x,
                                       const std::vector<float>& w, const std::vector<float>& b,
                                       Shape& out_shape) {
  const size_t nd = cfg.kernel.size();
  const int64_t n_batch = cfg.x[0], channels = cfg.x[1];
  const int64_t cg = channels / cfg.group, mg = cfg.out_channels_per_group;
  const int64_t out_channels = mg * cfg.group;
  Shape in_sp(cfg.x.begin() + 2, cfg.x.end());
  Shape out_sp(nd);
  for (size_t d = 0; d < nd; ++d) {
    out_sp[d] = cfg.strides[d] * (in_sp[d] - 1) + cfg.output_padding[d] +
                (cfg.kernel[d] - 1) * cfg.dilations[d] + 1 - cfg.pads[d] - cfg.pads[d + nd];
  }
  out_shape = {n_batch, out_channels};
  out_shape.insert(out_shape.end(), out_sp.begin(), out_sp.end());
  std::vector<double> y(static_cast<size_t>(NumElements(out_shape)), 0.0);
  const int64_t in_size = NumElements(in_sp), k_size = NumElements(cfg.kernel),
                out_size = NumElements(out_sp);
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t m = 0; m < out_channels; ++m) {
      for (int64_t o = 0; o < out_size; ++o) {
        y[static_cast<size_t>((n * out_channels + m) * out_size + o)] = cfg.bias ? b[static_cast<size_t>(m)] : 0.0;
      }
      const int64_t g = m / mg;
      for (int64_t c = g * cg; c < (g + 1) * cg; ++c) {
        for (int64_t i = 0; i < in_size; ++i) {
          const std::vector<int64_t> ii = Unflatten(i, in_sp);
          for (int64_t k = 0; k < k_size; ++k) {
            const std::vector<int64_t> kk = Unflatten(k, cfg.kernel);
            int64_t flat = 0;
            bool inside = true;
            for (size_t d = 0; d < nd; ++d) {
              const int64_t o = ii[d] * cfg.strides[d] - cfg.pads[d] + kk[d] * cfg.dilations[d];
              inside = inside && o >= 0 && o < out_sp[d];
              flat = flat * out_sp[d] + o;
            }
            if (!inside) continue;
            y[static_cast<size_t>((n * out_channels + m) * out_size + flat)] +=
                static_cast<double>(x[static_cast<size_t>((n * channels + c) * in_size + i)]) *
                w[static_cast<size_t>((c * mg + m % mg) * k_size + k)];
          }
        }
      }
    }
  }
  return y;
}

TEST(ConvTransposeTest, MatchesDirectScatterFormula) {
  const std::vector<Config> configs = {
      {{1, 2, 5}, 3, {3}, 1, {1}, {1}, {0, 0}, {0}, false},
      {{2, 4, 6}, 2, {4}, 2, {3}, {2}, {1, 2}, {1}, true},
      {{1, 3, 4, 5}, 2, {3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true},
      {{2, 4, 3, 4}, 3, {2, 3}, 2, {1, 2}, {2, 1}, {0, 1, 2, 0}, {0, 1}, true},
      {{1, 6, 3, 3}, 1, {3, 3}, 6, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false},  // depthwise
      {{1, 2, 3, 4, 3}, 2, {2, 3, 2}, 1, {2, 1, 2}, {1, 2, 1}, {0, 1, 1, 1, 0, 0}, {1, 0, 1}, true},
      // Large enough for the multi-threaded col2im.
      {{1, 8, 32, 32}, 8, {3, 3}, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true},
  };
  uint32_t seed = 7;
  for (const Config& cfg : configs) {
    Shape w_shape = {cfg.x[1], cfg.out_channels_per_group};
    w_shape.insert(w_shape.end(), cfg.kernel.begin(), cfg.kernel.end());
    const std::vector<float> x = RandomFloats(static_cast<size_t>(NumElements(cfg.x)), seed++);
    const std::vector<float> w = RandomFloats(static_cast<size_t>(NumElements(w_shape)), seed++);
    const int64_t out_channels = cfg.out_channels_per_group * cfg.group;
    const std::vector<float> b = RandomFloats(static_cast<size_t>(out_channels), seed++);
    std::vector<Tensor> inputs = {T1<float>(cfg.x, x), T1<float>(w_shape, w)};
    if (cfg.bias) inputs.push_back(T1<float>({out_channels}, b));
    const Tensor y = RunOne("ConvTranspose", 11, inputs,
                            Attrs({{"group", cfg.group},
                                   {"strides", cfg.strides},
                                   {"dilations", cfg.dilations},
                                   {"pads", cfg.pads},
                                   {"output_padding", cfg.output_padding},
                                   {"kernel_shape", cfg.kernel}}));
    Shape out_shape;
    const std::vector<double> expected = NaiveConvTranspose(cfg, x, w, b, out_shape);
    std::vector<float> expected_f(expected.begin(), expected.end());
    SCOPED_TRACE(ShapeToString(cfg.x) + " kernel " + ShapeToString(cfg.kernel));
    ExpectTensor<float>(y, out_shape, expected_f, 1e-5);

    // float64 runs the same kernel through the plain GEMM.
    std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end()), bd(b.begin(), b.end());
    std::vector<Tensor> inputs_d = {T1<double>(cfg.x, xd), T1<double>(w_shape, wd)};
    if (cfg.bias) inputs_d.push_back(T1<double>({out_channels}, bd));
    const Tensor yd = RunOne("ConvTranspose", 11, inputs_d,
                             Attrs({{"group", cfg.group},
                                    {"strides", cfg.strides},
                                    {"dilations", cfg.dilations},
                                    {"pads", cfg.pads},
                                    {"output_padding", cfg.output_padding}}));
    ExpectTensor<double>(yd, out_shape, expected, 1e-9);
  }
}

TEST(ConvTransposeTest, RefusesWhatItCannotRun) {
  const Tensor x = T1<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor w = T1<float>({2, 1, 2}, {1, 1, 1, 1});
  EXPECT_EQ(RunStatus("ConvTranspose", 11, {T1<int32_t>({1, 2, 3}, {1, 2, 3, 4, 5, 6}),
                                            T1<int32_t>({2, 1, 2}, {1, 1, 1, 1})})
                .code(),
            StatusCode::kUnsupported);
  // group must divide the channels; W's dim 0 must be the input channels.
  EXPECT_EQ(RunStatus("ConvTranspose", 11, {x, w}, Attrs({{"group", int64_t{3}}})).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("ConvTranspose", 11, {x, T1<float>({1, 1, 2}, {1, 1})}).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("ConvTranspose", 11, {x, w},
                      Attrs({{"kernel_shape", std::vector<int64_t>{3}}}))
                .code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("ConvTranspose", 11, {x, w, T1<float>({3}, {1, 2, 3})}).code(),
            StatusCode::kInvalidModel);
  // Pads that leave no output.
  EXPECT_EQ(RunStatus("ConvTranspose", 11, {x, w}, Attrs({{"pads", std::vector<int64_t>{2, 2}}}))
                .code(),
            StatusCode::kInvalidModel);
}

}  // namespace
}  // namespace collage::testing
