// Resize / Upsample on the reference kernel: hand-worked cases for every coordinate
// transformation and nearest mode, opset-18 axes and aspect-ratio policies, antialiasing,
// and random N-linear / cubic resizes against a direct per-element formula.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "elementwise_test_util.h"
#include "collage/sdk/op_registry.h"

namespace collage::testing {
namespace {

const Tensor kNoTensor;

Tensor Scales(std::vector<float> s) {
  const int64_t n = static_cast<int64_t>(s.size());
  return T1<float>({n}, s);
}
Tensor Sizes(std::vector<int64_t> s) {
  const int64_t n = static_cast<int64_t>(s.size());
  return T1<int64_t>({n}, s);
}

Attributes ResizeAttrs(const std::string& mode, const std::string& transform,
                       std::initializer_list<std::pair<const char*, Attribute>> more = {}) {
  Attributes a = Attrs(more);
  a.Set("mode", mode);
  a.Set("coordinate_transformation_mode", transform);
  return a;
}

TEST(ResizeTest, NearestUpsampleRepeats) {
  const Tensor x = T1<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  ExpectTensor<float>(
      RunOne("Resize", 13, {x, kNoTensor, Scales({1, 1, 2, 2})},
             ResizeAttrs("nearest", "asymmetric")),
      {1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // Nearest copies any dtype exactly.
  ExpectTensor<int64_t>(RunOne("Resize", 13,
                               {T1<int64_t>({1, 3}, {7, 8, 9}), kNoTensor, Scales({1, 2})},
                               ResizeAttrs("nearest", "asymmetric")),
                        {1, 6}, {7, 7, 8, 8, 9, 9});
}

TEST(ResizeTest, NearestModesRoundAsSpecified) {
  // half_pixel, 4 → 8: x_original = (o + 0.5) / 2 − 0.5 = −0.25, 0.25, 0.75, 1.25, ...; the
  // asymmetric 3 → 2 case (x_original = 0, 1.5) separates the two round modes at .5.
  const Tensor x = T1<float>({4}, {10, 20, 30, 40});
  auto run = [&](const std::string& mode, const std::string& transform, int64_t size) {
    Attributes a = ResizeAttrs("nearest", transform);
    a.Set("nearest_mode", mode);
    return RunOne("Resize", 13, {x, kNoTensor, kNoTensor, Sizes({size})}, a);
  };
  ExpectTensor<float>(run("round_prefer_floor", "half_pixel", 8), {8},
                      {10, 10, 20, 20, 30, 30, 40, 40});
  ExpectTensor<float>(run("floor", "half_pixel", 8), {8}, {10, 10, 10, 20, 20, 30, 30, 40});
  ExpectTensor<float>(run("ceil", "half_pixel", 8), {8}, {10, 20, 20, 30, 30, 40, 40, 40});
  const Tensor x3 = T1<float>({3}, {1, 2, 3});
  auto run3 = [&](const std::string& mode) {
    Attributes a = ResizeAttrs("nearest", "asymmetric");
    a.Set("nearest_mode", mode);
    return RunOne("Resize", 13, {x3, kNoTensor, kNoTensor, Sizes({2})}, a);
  };
  ExpectTensor<float>(run3("round_prefer_floor"), {2}, {1, 2});
  ExpectTensor<float>(run3("round_prefer_ceil"), {2}, {1, 3});
}

TEST(ResizeTest, LinearCoordinateTransforms) {
  const Tensor x = T1<float>({2}, {1, 2});
  // half_pixel 2 → 4: x_original = −0.25, 0.25, 0.75, 1.25 (clamped at the borders).
  ExpectTensor<float>(RunOne("Resize", 13, {x, kNoTensor, Scales({2})},
                             ResizeAttrs("linear", "half_pixel")),
                      {4}, {1, 1.25f, 1.75f, 2}, 1e-6);
  // asymmetric: x_original = o / 2.
  ExpectTensor<float>(RunOne("Resize", 13, {x, kNoTensor, Scales({2})},
                             ResizeAttrs("linear", "asymmetric")),
                      {4}, {1, 1.5f, 2, 2}, 1e-6);
  // align_corners 3 → 5: x_original = o · 2 / 4.
  ExpectTensor<float>(RunOne("Resize", 13,
                             {T1<float>({3}, {1, 2, 3}), kNoTensor, kNoTensor, Sizes({5})},
                             ResizeAttrs("linear", "align_corners")),
                      {5}, {1, 1.5f, 2, 2.5f, 3}, 1e-6);
  // pytorch_half_pixel to length 1 samples x_original = 0; half_pixel samples the middle.
  const Tensor x4 = T1<float>({4}, {1, 2, 3, 4});
  ExpectTensor<float>(RunOne("Resize", 13, {x4, kNoTensor, kNoTensor, Sizes({1})},
                             ResizeAttrs("linear", "pytorch_half_pixel")),
                      {1}, {1}, 1e-6);
  ExpectTensor<float>(RunOne("Resize", 13, {x4, kNoTensor, kNoTensor, Sizes({1})},
                             ResizeAttrs("linear", "half_pixel")),
                      {1}, {2.5f}, 1e-6);
  // half_pixel_symmetric (opset 19), 4 · 0.6 = 2.4 → 2 outputs: offset = 2 · (1 − 2/2.4)
  // = 1/3, x_original = 1/3 + (o + 0.5) / 0.6 − 0.5 = 0.6667, 2.3333.
  ExpectTensor<float>(RunOne("Resize", 19, {x4, kNoTensor, Scales({0.6f})},
                             ResizeAttrs("linear", "half_pixel_symmetric")),
                      {2}, {1.6666666f, 3.3333333f}, 1e-5);
}

TEST(ResizeTest, TfCropAndResizeExtrapolates) {
  // roi [0.5, 1.5] of a length-3 axis resized to 3: x_original = 1, 2, 3; the last is
  // outside [0, 2] and takes extrapolation_value.
  const Tensor x = T1<float>({3}, {1, 2, 3});
  Attributes a = ResizeAttrs("linear", "tf_crop_and_resize");
  a.Set("extrapolation_value", 9.0f);
  ExpectTensor<float>(RunOne("Resize", 13,
                             {x, T1<float>({2}, {0.5f, 1.5f}), kNoTensor, Sizes({3})}, a),
                      {3}, {2, 3, 9}, 1e-6);
  // Without roi tf_crop_and_resize is malformed.
  EXPECT_EQ(RunStatus("Resize", 13, {x, kNoTensor, kNoTensor, Sizes({3})}, a).code(),
            StatusCode::kInvalidModel);
}

TEST(ResizeTest, Opset18AxesAndAspectRatioPolicies) {
  const Tensor x = T1<float>({1, 1, 4, 6}, std::vector<float>(24, 1.0f));
  auto shape_of = [&](const std::string& policy) {
    Attributes a = ResizeAttrs("nearest", "asymmetric");
    a.Set("axes", std::vector<int64_t>{2, -1});
    a.Set("keep_aspect_ratio_policy", policy);
    return RunOne("Resize", 18, {x, kNoTensor, kNoTensor, Sizes({2, 2})}, a).shape();
  };
  EXPECT_EQ(shape_of("stretch"), (Shape{1, 1, 2, 2}));
  // One scale for both axes: min(2/4, 2/6) = 1/3 → 4/3 → 1, 2; max = 1/2 → 2, 3.
  EXPECT_EQ(shape_of("not_larger"), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(shape_of("not_smaller"), (Shape{1, 1, 2, 3}));
  // axes with scales: only the listed axis changes.
  Attributes a = ResizeAttrs("linear", "asymmetric");
  a.Set("axes", std::vector<int64_t>{3});
  const Tensor ramp = T1<float>({1, 2}, {0, 4});
  ExpectTensor<float>(RunOne("Resize", 18, {ramp.Reshaped({1, 1, 1, 2}), kNoTensor, Scales({2})}, a),
                      {1, 1, 1, 4}, {0, 2, 4, 4}, 1e-6);
}

TEST(ResizeTest, AntialiasWidensTheLinearFilter) {
  // Halving with antialias: taps at 2o − 1 .. 2o + 2 (edge-clamped) with weights
  // (1, 3, 3, 1) / 8 (a triangle stretched by 2, sampled at ±0.75 and ±0.25).
  Attributes a = ResizeAttrs("linear", "half_pixel");
  a.Set("antialias", int64_t{1});
  ExpectTensor<float>(RunOne("Resize", 18,
                             {T1<float>({8}, {1, 2, 3, 4, 5, 6, 7, 8}), kNoTensor, Scales({0.5f})},
                             a),
                      {4}, {1.625f, 3.5f, 5.5f, 7.375f}, 1e-6);
}

TEST(ResizeTest, UpsampleAndResize10UseAsymmetricCoordinates) {
  const Tensor x = T1<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Attributes nearest = Attrs({{"mode", std::string("nearest")}});
  ExpectTensor<float>(RunOne("Upsample", 9, {x, Scales({1, 1, 1, 3})}, nearest), {1, 1, 2, 6},
                      {1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4});
  Attributes upsample7 = Attrs({{"mode", std::string("nearest")},
                                {"scales", std::vector<float>{1, 1, 2, 1}}});
  ExpectTensor<float>(RunOne("Upsample", 7, {x}, upsample7), {1, 1, 4, 2},
                      {1, 2, 1, 2, 3, 4, 3, 4});
  // Resize-10 shrinking picks ceil(x / scale): 4 → 2 with scale 0.6 reads 0 and 2.
  ExpectTensor<float>(RunOne("Resize", 10, {T1<float>({1, 4}, {1, 2, 3, 4}), Scales({1, 0.6f})},
                             nearest),
                      {1, 2}, {1, 3});
  ExpectTensor<float>(RunOne("Resize", 10, {T1<float>({2}, {1, 2}), Scales({2})},
                             Attrs({{"mode", std::string("linear")}})),
                      {4}, {1, 1.5f, 2, 2}, 1e-6);
}

// Direct formula for one output element: x_original per axis from the coordinate transform,
// then the interpolation kernel's weights over the neighbours (clamped indices).
double KeysCubic(double d, double a) {
  d = std::abs(d);
  if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
  return 0;
}

std::vector<float> NaiveResize(const std::vector<float>& x, const Shape& in, const Shape& out,
                               const std::vector<double>& scales, const std::string& mode,
                               const std::string& transform, double cubic_a) {
  std::vector<float> y;
  for (int64_t e = 0; e < NumElements(out); ++e) {
    const std::vector<int64_t> o = Unflatten(e, out);
    // Per axis: (index, weight) pairs.
    std::vector<std::vector<std::pair<int64_t, double>>> axis_taps(in.size());
    for (size_t d = 0; d < in.size(); ++d) {
      const double s = scales[d], len_out = s * static_cast<double>(in[d]);
      double xo;
      if (transform == "half_pixel") {
        xo = (static_cast<double>(o[d]) + 0.5) / s - 0.5;
      } else if (transform == "asymmetric") {
        xo = static_cast<double>(o[d]) / s;
      } else if (transform == "align_corners") {
        xo = len_out == 1 ? 0 : static_cast<double>(o[d]) * static_cast<double>(in[d] - 1) / (len_out - 1);
      } else {  // pytorch_half_pixel
        xo = len_out > 1 ? (static_cast<double>(o[d]) + 0.5) / s - 0.5 : 0;
      }
      const int64_t base = static_cast<int64_t>(std::floor(xo));
      const double t = xo - static_cast<double>(base);
      auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in[d] - 1); };
      if (mode == "linear") {
        axis_taps[d] = {{clamp(base), 1 - t}, {clamp(base + 1), t}};
      } else {
        for (int64_t j = -1; j <= 2; ++j) {
          axis_taps[d].push_back({clamp(base + j), KeysCubic(static_cast<double>(j) - t, cubic_a)});
        }
      }
    }
    // Sum over every combination of taps.
    double sum = 0;
    std::vector<size_t> pick(in.size(), 0);
    while (true) {
      double w = 1;
      int64_t flat = 0;
      for (size_t d = 0; d < in.size(); ++d) {
        w *= axis_taps[d][pick[d]].second;
        flat = flat * in[d] + axis_taps[d][pick[d]].first;
      }
      sum += w * x[static_cast<size_t>(flat)];
      size_t d = in.size();
      while (d > 0 && ++pick[d - 1] == axis_taps[d - 1].size()) pick[--d] = 0;
      if (d == 0) break;
    }
    y.push_back(static_cast<float>(sum));
  }
  return y;
}

TEST(ResizeTest, LinearAndCubicMatchDirectFormula) {
  struct Case {
    Shape in;
    std::vector<float> scales;
  };
  const std::vector<Case> cases = {
      {{7}, {2.5f}},
      {{1, 2, 5, 4}, {1, 1, 0.6f, 1.75f}},
      {{2, 3, 4, 3}, {1, 2, 1.5f, 0.7f}},  // resizes a channel axis too
      {{3, 4, 5}, {0.5f, 1.5f, 2}},        // 3-linear
      {{2, 3, 2, 3, 2}, {1, 1, 2, 1.4f, 1.5f}},
      {{1, 3, 40, 40}, {1, 1, 2, 1.5f}},  // large enough to run multi-threaded
  };
  uint32_t seed = 3;
  for (const Case& c : cases) {
    const std::vector<float> x = RandomFloats(static_cast<size_t>(NumElements(c.in)), seed++);
    Shape out;
    std::vector<double> scales;
    for (size_t d = 0; d < c.in.size(); ++d) {
      scales.push_back(c.scales[d]);
      out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(c.in[d]) * c.scales[d])));
    }
    for (const char* mode : {"linear", "cubic"}) {
      for (const char* transform :
           {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
        SCOPED_TRACE(ShapeToString(c.in) + " " + mode + " " + transform);
        Attributes a = ResizeAttrs(mode, transform);
        a.Set("cubic_coeff_a", -0.5f);
        const Tensor y =
            RunOne("Resize", 13, {T1<float>(c.in, x), kNoTensor, Scales(c.scales)}, a);
        ExpectTensor<float>(y, out, NaiveResize(x, c.in, out, scales, mode, transform, -0.5),
                            1e-5);
      }
    }
  }
}

TEST(ResizeTest, CubicExcludeOutsideRenormalizes) {
  // asymmetric 3 → 6, x_original = o / 2. At o = 1 (x = 0.5) the tap at −1 is outside:
  // weights of taps 0, 1, 2 (distances 0.5, 0.5, 1.5) renormalized.
  const double a = -0.75;
  const double w0 = KeysCubic(0.5, a), w1 = KeysCubic(0.5, a), w2 = KeysCubic(1.5, a);
  const double expected = (w0 * 1 + w1 * 2 + w2 * 4) / (w0 + w1 + w2);
  Attributes attrs = ResizeAttrs("cubic", "asymmetric");
  attrs.Set("exclude_outside", int64_t{1});
  const Tensor y =
      RunOne("Resize", 13, {T1<float>({3}, {1, 2, 4}), kNoTensor, Scales({2})}, attrs);
  ASSERT_EQ(y.shape(), Shape{6});
  EXPECT_NEAR(y.data_as<float>()[1], expected, 1e-6);
  EXPECT_NEAR(y.data_as<float>()[0], 1.0, 1e-6);  // integer coordinates are exact
  EXPECT_NEAR(y.data_as<float>()[2], 2.0, 1e-6);
}

TEST(ResizeTest, RefusesWhatItCannotRun) {
  const Tensor x = T1<float>({1, 2}, {1, 2});
  // scales and sizes together, or neither.
  EXPECT_EQ(RunStatus("Resize", 13, {x, kNoTensor, Scales({1, 2}), Sizes({1, 4})}).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("Resize", 13, {x}).code(), StatusCode::kInvalidModel);
  // Linear on integers.
  EXPECT_EQ(RunStatus("Resize", 13, {T1<int32_t>({1, 2}, {1, 2}), kNoTensor, Scales({1, 2})},
                      ResizeAttrs("linear", "asymmetric"))
                .code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("Resize", 13, {Tensor(DType::kFloat16, {1, 2}), kNoTensor, Scales({1, 2})})
                .code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("Resize", 13, {x, kNoTensor, Scales({1, 2})},
                      ResizeAttrs("linear", "tf_half_pixel_for_nn"))
                .code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("Resize", 13, {x, kNoTensor, Scales({1, -2})}).code(),
            StatusCode::kInvalidModel);

  // Scales that are not constant: the output shape is unknown.
  const OpDef* def = OpRegistry::Global().Find("", "Resize");
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->kind, OpKind::kOpaque);
  Node node = MakeNode("Resize", 3);
  const TensorType x_type{DType::kFloat32, {1, 2}};
  const TensorType scales_type{DType::kFloat32, {2}};
  InferContext ctx{node, 13, {&x_type, nullptr, &scales_type}, {nullptr, nullptr, nullptr}, {}};
  EXPECT_EQ(InferNodeTypes(*def, ctx).code(), StatusCode::kUnsupported);
  // An empty scales input (opset 11 style) with constant sizes is fine.
  const TensorType empty_type{DType::kFloat32, {0}};
  const TensorType sizes_type{DType::kInt64, {2}};
  const Tensor sizes = Sizes({1, 5});
  Node node4 = MakeNode("Resize", 4);
  InferContext ctx4{node4, 11, {&x_type, nullptr, &empty_type, &sizes_type},
                    {nullptr, nullptr, nullptr, &sizes}, {}};
  ASSERT_TRUE(InferNodeTypes(*def, ctx4).ok());
  EXPECT_EQ(ctx4.output_types[0].shape, (Shape{1, 5}));
}

}  // namespace
}  // namespace collage::testing
