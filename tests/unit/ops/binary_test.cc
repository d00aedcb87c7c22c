// Binary, variadic and ternary broadcast ops on the reference kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "elementwise_test_util.h"
#include "ops/op_helpers.h"
#include "collage/sdk/op_registry.h"

namespace collage::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Expected a op b under numpy broadcasting, computed element by element from multi-indices
// (independent of the kernels' run merging).
template <typename T, typename R>
std::vector<R> BroadcastExpected(const Shape& sa, const std::vector<T>& a, const Shape& sb,
                                 const std::vector<T>& b, const Shape& out,
                                 const std::function<R(T, T)>& f) {
  std::vector<R> result;
  for (int64_t i = 0; i < NumElements(out); ++i) {
    const std::vector<int64_t> idx = Unflatten(i, out);
    result.push_back(f(a[static_cast<size_t>(BroadcastSource(idx, sa))],
                       b[static_cast<size_t>(BroadcastSource(idx, sb))]));
  }
  return result;
}

TEST(BinaryOpsTest, AddHandWorked) {
  ExpectTensor<float>(
      RunOne("Add", 14, {T1<float>({2, 2}, {1, 2, 3, 4}), T1<float>({2}, {10, 20})}), {2, 2},
      {11, 22, 13, 24});
  ExpectTensor<float>(RunOne("Sub", 14, {Tensor::Scalar(1.0f), T1<float>({3}, {1, 2, 3})}), {3},
                      {0, -1, -2});
  ExpectTensor<int64_t>(
      RunOne("Mul", 14, {T1<int64_t>({2, 1}, {2, 3}), T1<int64_t>({1, 3}, {1, 10, 100})}), {2, 3},
      {2, 20, 200, 3, 30, 300});
}

// Many shape pairs (equal, scalar, trailing, middle, both sides broadcasting, zero-size) for
// every arithmetic op, against the index-by-index expectation.
TEST(BinaryOpsTest, BroadcastingMatchesIndexMapping) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {2, 3, 4}},
      {{2, 3, 4}, {}},
      {{}, {2, 3, 4}},
      {{2, 3, 4}, {4}},
      {{2, 3, 4}, {3, 1}},
      {{2, 1, 4}, {1, 3, 1}},
      {{1, 3, 1, 5}, {2, 1, 4, 1}},
      {{2, 3, 4, 5}, {1, 3, 1, 1}},
      {{5, 1}, {1}},
      {{3, 0, 2}, {2}},
      {{1}, {1, 1, 1}},
      {{4, 1, 1}, {4, 1, 1}},
  };
  const std::vector<std::pair<const char*, std::function<float(float, float)>>> ops = {
      {"Add", [](float a, float b) { return a + b; }},
      {"Sub", [](float a, float b) { return a - b; }},
      {"Mul", [](float a, float b) { return a * b; }},
      {"Div", [](float a, float b) { return a / b; }},
  };
  uint32_t seed = 1;
  for (const auto& [sa, sb] : cases) {
    std::vector<float> a = RandomFloats(static_cast<size_t>(NumElements(sa)), seed++, 0.5f, 4.0f);
    std::vector<float> b = RandomFloats(static_cast<size_t>(NumElements(sb)), seed++, 0.5f, 4.0f);
    Node node = MakeNode("Add", 2);
    auto out_shape = BroadcastShapes(node, {sa, sb});
    ASSERT_TRUE(out_shape.ok());
    for (const auto& [op, f] : ops) {
      SCOPED_TRACE(std::string(op) + " " + ShapeToString(sa) + " vs " + ShapeToString(sb));
      Tensor y = RunOne(op, 14, {T1<float>(sa, a), T1<float>(sb, b)});
      ExpectTensor<float>(y, *out_shape,
                          BroadcastExpected<float, float>(sa, a, sb, b, *out_shape, f), 1e-6);
    }
    SCOPED_TRACE("Greater " + ShapeToString(sa) + " vs " + ShapeToString(sb));
    Tensor g = RunOne("Greater", 13, {T1<float>(sa, a), T1<float>(sb, b)});
    ExpectTensor<bool>(g, *out_shape,
                       BroadcastExpected<float, bool>(sa, a, sb, b, *out_shape,
                                                      [](float x, float y) { return x > y; }));
  }
}

TEST(BinaryOpsTest, LargeBroadcastUsesThreadsCorrectly) {
  const Shape sa{64, 3, 1000}, sb{3, 1};
  std::vector<float> a = RandomFloats(64 * 3 * 1000, 3);
  std::vector<float> b = {1, 2, 3};
  Tensor y = RunOne("Mul", 14, {T1<float>(sa, a), T1<float>(sb, b)});
  ExpectTensor<float>(
      y, sa,
      BroadcastExpected<float, float>(sa, a, sb, b, sa, [](float x, float s) { return x * s; }));
}

TEST(BinaryOpsTest, IntegerDivisionTruncatesTowardZero) {
  ExpectTensor<int32_t>(
      RunOne("Div", 14, {T1<int32_t>({4}, {7, -7, 7, -7}), T1<int32_t>({4}, {2, 2, -2, -2})}), {4},
      {3, -3, -3, 3});
  // From the ONNX test data (test_div_uint8): 16/11 = 1, 0/23 = 0, 23/1 = 23.
  ExpectTensor<uint8_t>(
      RunOne("Div", 14, {T1<uint8_t>({3}, {16, 0, 23}), T1<uint8_t>({3}, {11, 23, 1})}), {3},
      {1, 0, 23});
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  ExpectTensor<int64_t>(RunOne("Div", 14, {T1<int64_t>({1}, {kMin}), T1<int64_t>({1}, {-1})}), {1},
                        {kMin});
  Status s = RunStatus("Div", 14, {T1<int32_t>({2}, {1, 2}), T1<int32_t>({2}, {1, 0})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("Div node"), std::string::npos) << s.message();
  // Float division by zero is IEEE.
  ExpectTensor<float>(RunOne("Div", 14, {T1<float>({1}, {1}), T1<float>({1}, {0})}), {1},
                      {std::numeric_limits<float>::infinity()});
}

TEST(BinaryOpsTest, ModSignConventions) {
  // From the ONNX test data (test_mod_mixed_sign_int8): the divisor's sign.
  Tensor a = T1<int8_t>({6}, {-4, 7, 5, 4, -7, 8});
  Tensor b = T1<int8_t>({6}, {2, -3, 8, -2, 3, 5});
  ExpectTensor<int8_t>(RunOne("Mod", 13, {a, b}), {6}, {0, -2, 5, 0, 2, 3});
  // fmod = 1: the dividend's sign.
  ExpectTensor<int8_t>(RunOne("Mod", 13, {a, b}, Attrs({{"fmod", int64_t{1}}})), {6},
                       {0, 1, 5, 0, -1, 3});
  ExpectTensor<float>(
      RunOne("Mod", 13, {T1<float>({3}, {-4.5f, 7.5f, 5.0f}), T1<float>({3}, {2, -3, 8})},
             Attrs({{"fmod", int64_t{1}}})),
      {3}, {-0.5f, 1.5f, 5.0f});
  ExpectTensor<uint32_t>(RunOne("Mod", 13, {T1<uint32_t>({2}, {9, 4}), T1<uint32_t>({1}, {4})}),
                         {2}, {1, 0});
  EXPECT_EQ(RunStatus("Mod", 13, {T1<float>({1}, {1}), T1<float>({1}, {2})}).code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("Mod", 13, {T1<int32_t>({1}, {1}), T1<int32_t>({1}, {0})}).code(),
            StatusCode::kInvalidArgument);
}

TEST(BinaryOpsTest, PowMixedDTypes) {
  ExpectTensor<float>(RunOne("Pow", 15, {T1<float>({3}, {2, 4, 9}), T1<float>({3}, {3, 0.5f, -1})}),
                      {3}, {8, 2, 1.0f / 9}, 1e-7);
  // From the ONNX test data (test_pow_types_int64_float32).
  ExpectTensor<int64_t>(RunOne("Pow", 15, {T1<int64_t>({3}, {1, 2, 3}), T1<float>({3}, {4, 5, 6})}),
                        {3}, {1, 32, 729});
  ExpectTensor<float>(RunOne("Pow", 15, {T1<float>({3}, {1, 2, 3}), T1<int64_t>({3}, {4, 5, 6})}),
                      {3}, {1, 32, 729});
  ExpectTensor<int32_t>(
      RunOne("Pow", 15,
             {T1<int32_t>({5}, {2, -3, 1, -1, 5}), T1<int32_t>({5}, {10, 3, -4, -3, -1})}),
      {5}, {1024, -27, 1, -1, 0});
  // Exact 64-bit result that a double could not hold.
  ExpectTensor<int64_t>(RunOne("Pow", 15, {T1<int64_t>({1}, {3}), T1<uint8_t>({1}, {39})}), {1},
                        {4052555153018976267LL});
  ExpectTensor<double>(RunOne("Pow", 15, {T1<double>({2, 1}, {2, 3}), T1<double>({2}, {2, 3})}),
                       {2, 2}, {4, 8, 9, 27});
  EXPECT_EQ(RunStatus("Pow", 15, {T1<uint8_t>({1}, {2}), T1<uint8_t>({1}, {2})}).code(),
            StatusCode::kUnsupported);
}

// A scalar exponent of 2 or 3 is computed by multiplying (a variance's square, GELU's cube):
// the results are the products, special values included, whatever the exponent's dtype.
TEST(BinaryOpsTest, PowBySquareOrCubeIsTheProduct) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {1.5f, -2.25f, 0.1f, -0.0f, inf, -inf, 3e15f, -7.0f};
  std::vector<float> square, cube;
  for (float v : x) {
    square.push_back(v * v);
    cube.push_back(v * v * v);
  }
  const int64_t n = static_cast<int64_t>(x.size());
  for (const Tensor& two : {Tensor::Scalar<float>(2.0f), T1<int64_t>({1}, {2}), T1<double>({1}, {2.0})}) {
    Tensor got = RunOne("Pow", 15, {T1<float>({n}, x), two});
    EXPECT_EQ(got.ToVector<float>(), square);
  }
  for (const Tensor& three : {Tensor::Scalar<float>(3.0f), T1<int32_t>({1}, {3})}) {
    Tensor got = RunOne("Pow", 15, {T1<float>({n}, x), three});
    EXPECT_EQ(got.ToVector<float>(), cube);
  }
  const std::vector<float> nan = RunOne("Pow", 15, {T1<float>({1}, {std::nanf("")}),
                                                    Tensor::Scalar<float>(3.0f)})
                                     .ToVector<float>();
  EXPECT_TRUE(std::isnan(nan[0]));
  // Other exponents, and a base broadcast to a larger exponent, go through pow.
  ExpectTensor<float>(RunOne("Pow", 15, {T1<float>({2}, {4, 9}), Tensor::Scalar<float>(2.5f)}),
                      {2}, {32, 243}, 1e-5);
  ExpectTensor<float>(RunOne("Pow", 15, {T1<float>({1}, {3}), T1<float>({2}, {2, 3})}), {2},
                      {9, 27});
}

TEST(BinaryOpsTest, ComparisonsAndLogic) {
  Tensor a = T1<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = T1<int32_t>({3}, {2, 2, 7});
  ExpectTensor<bool>(RunOne("Equal", 13, {a, b}), {2, 3},
                     {false, true, false, false, false, false});
  ExpectTensor<bool>(RunOne("Less", 13, {a, b}), {2, 3}, {true, false, true, false, false, true});
  ExpectTensor<bool>(RunOne("LessOrEqual", 16, {a, b}), {2, 3},
                     {true, true, true, false, false, true});
  ExpectTensor<bool>(RunOne("GreaterOrEqual", 16, {a, b}), {2, 3},
                     {false, true, false, true, true, false});
  Tensor p = T1<bool>({2, 2}, {true, true, false, false});
  Tensor q = T1<bool>({2}, {true, false});
  ExpectTensor<bool>(RunOne("And", 7, {p, q}), {2, 2}, {true, false, false, false});
  ExpectTensor<bool>(RunOne("Or", 7, {p, q}), {2, 2}, {true, true, true, false});
  ExpectTensor<bool>(RunOne("Xor", 7, {p, q}), {2, 2}, {false, true, true, false});
  ExpectTensor<bool>(RunOne("Equal", 13, {p, q}), {2, 2}, {true, false, false, true});
  EXPECT_EQ(RunStatus("And", 7, {a, b}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("Less", 13, {p, q}).code(), StatusCode::kUnsupported);
}

TEST(BinaryOpsTest, BitShift) {
  Tensor x = T1<uint8_t>({3}, {16, 4, 1});
  Tensor s = T1<uint8_t>({3}, {1, 2, 8});
  ExpectTensor<uint8_t>(
      RunOne("BitShift", 11, {x, s}, Attrs({{"direction", std::string("RIGHT")}})), {3}, {8, 1, 0});
  ExpectTensor<uint8_t>(RunOne("BitShift", 11, {x, s}, Attrs({{"direction", std::string("LEFT")}})),
                        {3}, {32, 16, 0});
  EXPECT_EQ(RunStatus("BitShift", 11, {x, s}).code(), StatusCode::kInvalidModel);
}

TEST(BinaryOpsTest, WhereBroadcastsThreeWays) {
  const Shape sc{2, 1, 3}, sx{4, 1}, sy{};
  Tensor cond = T1<bool>(sc, {true, false, true, false, false, true});
  std::vector<float> x = {1, 2, 3, 4};
  Tensor y = RunOne("Where", 16, {cond, T1<float>(sx, x), Tensor::Scalar(-1.0f)});
  const Shape out{2, 4, 3};
  std::vector<float> expected;
  const std::vector<bool> c = {true, false, true, false, false, true};
  for (int64_t i = 0; i < NumElements(out); ++i) {
    auto idx = Unflatten(i, out);
    expected.push_back(c[static_cast<size_t>(BroadcastSource(idx, sc))]
                           ? x[static_cast<size_t>(BroadcastSource(idx, sx))]
                           : -1.0f);
  }
  (void)sy;
  ExpectTensor<float>(y, out, expected);
  ExpectTensor<int64_t>(
      RunOne("Where", 16,
             {T1<bool>({2}, {true, false}), T1<int64_t>({2}, {1, 2}), T1<int64_t>({2}, {3, 4})}),
      {2}, {1, 4});
  EXPECT_EQ(RunStatus("Where", 16, {T1<float>({1}, {1}), T1<float>({1}, {1}), T1<float>({1}, {1})})
                .code(),
            StatusCode::kUnsupported);
}

TEST(BinaryOpsTest, PReluSlopeBroadcastsToX) {
  const Shape sx{2, 3, 2, 2}, ss{3, 1, 1};
  std::vector<float> x = RandomFloats(24, 11);
  std::vector<float> slope = {0.1f, 0.2f, 0.3f};
  Tensor y = RunOne("PRelu", 16, {T1<float>(sx, x), T1<float>(ss, slope)});
  ExpectTensor<float>(y, sx,
                      BroadcastExpected<float, float>(sx, x, ss, slope, sx, [](float v, float s) {
                        return v < 0 ? s * v : v;
                      }));
  // A slope that would grow X's shape is not unidirectional.
  Status s =
      RunStatus("PRelu", 16, {T1<float>({3}, {1, 2, 3}), T1<float>({2, 3}, {1, 1, 1, 1, 1, 1})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
}

TEST(BinaryOpsTest, VariadicOps) {
  Tensor a = T1<float>({2, 2}, {1, 5, 3, kNaN});
  Tensor b = T1<float>({2}, {2, 2});
  Tensor c = Tensor::Scalar(4.0f);
  ExpectTensor<float>(RunOne("Sum", 13, {a, b, c}), {2, 2}, {7, 11, 9, kNaN});
  ExpectTensor<float>(RunOne("Mean", 13, {a, b, c}), {2, 2}, {7.0f / 3, 11.0f / 3, 3, kNaN}, 1e-6);
  ExpectTensor<float>(RunOne("Max", 13, {a, b, c}), {2, 2}, {4, 5, 4, kNaN});
  ExpectTensor<float>(RunOne("Min", 13, {a, b, c}), {2, 2}, {1, 2, 2, kNaN});
  ExpectTensor<float>(RunOne("Max", 13, {a}), {2, 2}, {1, 5, 3, kNaN});
  ExpectTensor<uint16_t>(
      RunOne("Min", 13, {T1<uint16_t>({3}, {5, 1, 9}), T1<uint16_t>({3}, {4, 2, 9})}), {3},
      {4, 1, 9});
  // The output can be bigger than every input.
  ExpectTensor<int32_t>(
      RunOne("Sum", 13, {T1<int32_t>({2, 1}, {1, 2}), T1<int32_t>({1, 2}, {10, 20})}), {2, 2},
      {11, 21, 12, 22});
  EXPECT_EQ(RunStatus("Mean", 13, {T1<int32_t>({1}, {1})}).code(), StatusCode::kUnsupported);
}

TEST(BinaryOpsTest, IntegerOverflowWraps) {
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  ExpectTensor<int32_t>(RunOne("Add", 14, {T1<int32_t>({1}, {kMax}), T1<int32_t>({1}, {1})}), {1},
                        {std::numeric_limits<int32_t>::min()});
  ExpectTensor<uint16_t>(
      RunOne("Mul", 14, {T1<uint16_t>({1}, {65535}), T1<uint16_t>({1}, {65535})}), {1}, {1});
}

TEST(BinaryOpsTest, ErrorsNameTheNode) {
  Status s = RunStatus("Add", 14, {T1<float>({2, 3}, {1, 2, 3, 4, 5, 6}), T1<float>({2}, {1, 2})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("Add node 'n_Add'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("2x3"), std::string::npos) << s.message();
  Status d = RunStatus("Add", 14, {T1<float>({2}, {1, 2}), T1<double>({2}, {1, 2})});
  EXPECT_EQ(d.code(), StatusCode::kInvalidModel);
  Status u = RunStatus("Add", 14, {T1<bool>({1}, {true}), T1<bool>({1}, {true})});
  EXPECT_EQ(u.code(), StatusCode::kUnsupported);
  EXPECT_NE(u.message().find("bool"), std::string::npos) << u.message();
}

TEST(BinaryOpsTest, KindsAreBroadcast) {
  for (const char* op : {"Add", "Mul", "Pow", "Where", "PRelu", "Sum", "Equal", "And"}) {
    const OpDef* def = OpRegistry::Global().Find("", op);
    ASSERT_NE(def, nullptr) << op;
    EXPECT_EQ(def->kind, OpKind::kBroadcast) << op;
  }
}

}  // namespace
}  // namespace collage::testing
