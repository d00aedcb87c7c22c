// Models that compute in float16 or bfloat16: each op whose kernels take float32 only runs on
// its inputs widened to float32, its float outputs rounded back to the 16-bit type.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "collage/session.h"
#include "onnx_test_util.h"
#include "ops/half_float.h"

namespace collage {
namespace {

using testing::AddIntAttr;
using testing::ModelBuilder;

Tensor Halves(Shape shape, const std::vector<float>& values, DType dtype) {
  Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) {
    t.data_as<uint16_t>()[i] =
        dtype == DType::kFloat16 ? FloatToHalf(values[i]) : FloatToBFloat16(values[i]);
  }
  return t;
}

std::vector<float> Widened(const Tensor& t) {
  std::vector<float> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const uint16_t bits = t.data_as<uint16_t>()[i];
    out.push_back(t.dtype() == DType::kFloat16 ? HalfToFloat(bits) : BFloat16ToFloat(bits));
  }
  return out;
}

// y = Softmax(Max(a, b) * a + MatMul(a, w)); k = the index of the largest y per row (TopK).
ModelBuilder HalfModel(int32_t type) {
  ModelBuilder b(13);
  b.Input("a", type, {2, 3}).Input("b", type, {2, 3}).Input("w", type, {3, 3});
  b.Output("y", type, {2, 3}).Output("k", onnx::TensorProto::INT64, {2, 1});
  b.Node("Max", {"a", "b"}, {"m"}, "max");
  b.Node("Mul", {"m", "a"}, {"p"}, "mul");
  b.Node("MatMul", {"a", "w"}, {"q"}, "matmul");
  b.Node("Add", {"p", "q"}, {"s"}, "add");
  AddIntAttr(b.Node("Softmax", {"s"}, {"y"}, "softmax"), "axis", -1);
  b.Int64Init("one", {1}, {1});
  b.Node("TopK", {"y", "one"}, {"top", "k"}, "topk");
  return b;
}

// The same, each op in float32 and its output rounded to the 16-bit type, as the model means.
std::vector<float> Expected(const std::vector<float>& a, const std::vector<float>& b,
                            const std::vector<float>& w, DType dtype) {
  auto round = [&](float v) {
    return dtype == DType::kFloat16 ? HalfToFloat(FloatToHalf(v))
                                    : BFloat16ToFloat(FloatToBFloat16(v));
  };
  std::vector<float> y(6);
  for (int r = 0; r < 2; ++r) {
    std::vector<float> s(3);
    for (int c = 0; c < 3; ++c) {
      const int i = r * 3 + c;
      const float p = round(round(std::max(a[i], b[i])) * a[i]);
      float q = 0;
      for (int k = 0; k < 3; ++k) q += a[r * 3 + k] * w[k * 3 + c];
      s[c] = round(p + round(q));
    }
    const float top = std::max({s[0], s[1], s[2]});
    float sum = 0;
    for (float v : s) sum += std::exp(v - top);
    for (int c = 0; c < 3; ++c) y[r * 3 + c] = round(std::exp(s[c] - top) / sum);
  }
  return y;
}

TEST(HalfArithmeticTest, AModelComputingInSixteenBitFloatsRunsAsEachOpRoundsBack) {
  const std::vector<float> a = {0.5f, -1.25f, 2.0f, 3.0f, 0.125f, -0.75f};
  const std::vector<float> b = {1.0f, -2.0f, 0.25f, -3.0f, 0.5f, 1.5f};
  const std::vector<float> w = {0.1f, 0.2f, -0.3f, 0.4f, -0.5f, 0.6f, 0.7f, 0.8f, -0.9f};
  for (int32_t type : {onnx::TensorProto::FLOAT16, onnx::TensorProto::BFLOAT16}) {
    const DType dtype = static_cast<DType>(type);
    auto session = Session::LoadBytes(HalfModel(type).Bytes());
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    EXPECT_EQ((*session)->outputs()[0].dtype, dtype);
    auto out = (*session)->Run({{"a", Halves({2, 3}, a, dtype)},
                                {"b", Halves({2, 3}, b, dtype)},
                                {"w", Halves({3, 3}, w, dtype)}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const Tensor& y = out->at("y");
    ASSERT_EQ(y.dtype(), dtype);
    // The inputs as the model sees them: already rounded to 16 bits.
    const std::vector<float> want =
        Expected(Widened(Halves({6}, a, dtype)), Widened(Halves({6}, b, dtype)),
                 Widened(Halves({9}, w, dtype)), dtype);
    const std::vector<float> got = Widened(y);
    for (size_t i = 0; i < want.size(); ++i) {
      // One 16-bit step: the float32 sums of the MatMul and Softmax may round apart from
      // these ones in the last place before the rounding to 16 bits.
      EXPECT_NEAR(got[i], want[i], std::abs(want[i]) * (dtype == DType::kFloat16 ? 1e-3 : 8e-3))
          << DTypeName(dtype) << " element " << i;
    }
    const std::vector<int64_t> k = out->at("k").ToVector<int64_t>();
    for (int r = 0; r < 2; ++r) {
      const auto row = want.begin() + r * 3;
      EXPECT_EQ(k[static_cast<size_t>(r)], std::max_element(row, row + 3) - row) << DTypeName(dtype);
    }
  }
}

}  // namespace
}  // namespace collage
