// Unary elementwise ops, Cast/CastLike/Identity/Dropout on the reference kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>

#include "elementwise_test_util.h"
#include "collage/sdk/op_registry.h"

namespace collage::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(UnaryOpsTest, ReluHandWorked) {
  Tensor y = RunOne("Relu", 14, {T1<float>({2, 3}, {-2, -0.5f, 0, 0.5f, 3, kNaN})});
  ExpectTensor<float>(y, {2, 3}, {0, 0, 0, 0.5f, 3, kNaN});
  Tensor yi =
      RunOne("Relu", 14, {T1<int32_t>({4}, {-7, 0, 5, std::numeric_limits<int32_t>::min()})});
  ExpectTensor<int32_t>(yi, {4}, {0, 0, 5, 0});
}

// NaN in, NaN out, for every float op whose spec formula propagates it (the contract
// docs/features.md states; --check would otherwise blame a backend that is right). Shrink is the
// exception by its definition: NaN is neither below -lambd nor above lambd, so it gives 0.
TEST(UnaryOpsTest, EveryFloatOpPropagatesNaN) {
  for (const char* op :
       {"Relu", "LeakyRelu", "Elu", "Selu", "Celu", "ThresholdedRelu", "Sigmoid", "HardSigmoid",
        "HardSwish", "Softplus", "Softsign", "Mish", "Tanh", "Erf", "Sqrt", "Exp", "Log",
        "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
        "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Neg", "Abs", "Sign"}) {
    SCOPED_TRACE(op);
    const Tensor y = RunOne(op, 18, {T1<float>({3}, {kNaN, -kNaN, kNaN})});
    for (float v : y.ToVector<float>()) EXPECT_TRUE(std::isnan(v)) << v;
  }
  for (const char* op : {"Gelu"}) {
    SCOPED_TRACE(op);
    const Tensor y = RunOne(op, 20, {T1<float>({1}, {kNaN})});
    EXPECT_TRUE(std::isnan(y.ToVector<float>()[0]));
  }
  ExpectTensor<float>(RunOne("Shrink", 18, {T1<float>({1}, {kNaN})}), {1}, {0});
}

// Each float op against its formula, evaluated in double here, on float32 and float64.
// Attribute values are float32 in ONNX, so the formulas use the float-rounded constants.
struct FormulaCase {
  const char* op;
  int64_t opset;
  Attributes attributes;
  std::function<double(double)> f;
  double lo, hi;  // domain of the inputs
};

std::vector<FormulaCase> FormulaCases() {
  auto sigmoid = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  return {
      {"LeakyRelu", 16, Attrs({{"alpha", 0.1f}}),
       [](double x) { return x < 0 ? double{0.1f} * x : x; }, -4, 4},
      {"LeakyRelu", 16, {}, [](double x) { return x < 0 ? double{0.01f} * x : x; }, -4, 4},
      {"Elu", 6, Attrs({{"alpha", 2.0f}}),
       [](double x) { return x < 0 ? 2.0 * (std::exp(x) - 1) : x; }, -4, 4},
      {"Selu",
       6,
       {},
       [](double x) {
         const double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
         return x > 0 ? g * x : g * (a * std::exp(x) - a);
       },
       -4,
       4},
      {"Celu", 12, Attrs({{"alpha", 2.0f}}),
       [](double x) { return std::max(0.0, x) + std::min(0.0, 2.0 * (std::exp(x / 2.0) - 1)); }, -4,
       4},
      {"ThresholdedRelu", 10, Attrs({{"alpha", 0.5f}}), [](double x) { return x > 0.5 ? x : 0.0; },
       -4, 4},
      {"Sigmoid", 13, {}, sigmoid, -30, 30},
      {"Tanh", 13, {}, [](double x) { return std::tanh(x); }, -5, 5},
      {"Erf", 13, {}, [](double x) { return std::erf(x); }, -3, 3},
      {"Gelu",
       20,
       {},
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); },
       -5,
       5},
      {"Gelu", 20, Attrs({{"approximate", std::string("tanh")}}),
       [](double x) {
         return 0.5 * x *
                (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
       },
       -5, 5},
      {"HardSigmoid", 6, Attrs({{"alpha", 0.25f}, {"beta", 0.4f}}),
       [](double x) { return std::clamp(0.25 * x + double{0.4f}, 0.0, 1.0); }, -5, 5},
      {"HardSwish", 14, {}, [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }, -5, 5},
      {"Softplus", 1, {}, [](double x) { return std::log(std::exp(x) + 1); }, -20, 20},
      {"Softsign", 1, {}, [](double x) { return x / (1 + std::abs(x)); }, -5, 5},
      {"Mish", 18, {}, [](double x) { return x * std::tanh(std::log(1 + std::exp(x))); }, -5, 5},
      {"Sqrt", 13, {}, [](double x) { return std::sqrt(x); }, 0, 9},
      {"Exp", 13, {}, [](double x) { return std::exp(x); }, -5, 5},
      {"Log", 13, {}, [](double x) { return std::log(x); }, 0.01, 9},
      {"Reciprocal", 13, {}, [](double x) { return 1 / x; }, 0.5, 9},
      {"Floor", 13, {}, [](double x) { return std::floor(x); }, -5, 5},
      {"Ceil", 13, {}, [](double x) { return std::ceil(x); }, -5, 5},
      {"Sin", 7, {}, [](double x) { return std::sin(x); }, -5, 5},
      {"Cos", 7, {}, [](double x) { return std::cos(x); }, -5, 5},
      {"Tan", 7, {}, [](double x) { return std::tan(x); }, -1.5, 1.5},
      {"Asin", 7, {}, [](double x) { return std::asin(x); }, -1, 1},
      {"Acos", 7, {}, [](double x) { return std::acos(x); }, -1, 1},
      {"Atan", 7, {}, [](double x) { return std::atan(x); }, -5, 5},
      {"Sinh", 9, {}, [](double x) { return std::sinh(x); }, -3, 3},
      {"Cosh", 9, {}, [](double x) { return std::cosh(x); }, -3, 3},
      {"Asinh", 9, {}, [](double x) { return std::asinh(x); }, -3, 3},
      {"Acosh", 9, {}, [](double x) { return std::acosh(x); }, 1, 5},
      {"Atanh", 9, {}, [](double x) { return std::atanh(x); }, -0.9, 0.9},
      {"Neg", 13, {}, [](double x) { return -x; }, -5, 5},
      {"Abs", 13, {}, [](double x) { return std::abs(x); }, -5, 5},
      {"Shrink", 9, Attrs({{"lambd", 1.5f}, {"bias", 0.5f}}),
       [](double x) { return x < -1.5 ? x + 0.5 : (x > 1.5 ? x - 0.5 : 0.0); }, -4, 4},
  };
}

TEST(UnaryOpsTest, FloatOpsMatchFormulas) {
  for (const FormulaCase& c : FormulaCases()) {
    SCOPED_TRACE(c.op);
    const int n = 41;
    std::vector<float> xf;
    std::vector<double> xd;
    for (int i = 0; i < n; ++i) {
      const double x = c.lo + (c.hi - c.lo) * i / (n - 1);
      xf.push_back(static_cast<float>(x));
      xd.push_back(x);
    }
    std::vector<float> ef;
    std::vector<double> ed;
    for (int i = 0; i < n; ++i) {
      ef.push_back(static_cast<float>(c.f(static_cast<double>(xf[static_cast<size_t>(i)]))));
      ed.push_back(c.f(xd[static_cast<size_t>(i)]));
    }
    ExpectTensor<float>(RunOne(c.op, c.opset, {T1<float>({n}, xf)}, c.attributes), {n}, ef, 2e-6);
    ExpectTensor<double>(RunOne(c.op, c.opset, {T1<double>({n}, xd)}, c.attributes), {n}, ed,
                         1e-12);
  }
}

TEST(UnaryOpsTest, SigmoidAndSoftplusDoNotOverflow) {
  ExpectTensor<float>(RunOne("Sigmoid", 13, {T1<float>({2}, {-200, 200})}), {2}, {0, 1});
  ExpectTensor<float>(RunOne("Softplus", 1, {T1<float>({2}, {-200, 200})}), {2}, {0, 200});
}

TEST(UnaryOpsTest, RoundHalfToEven) {
  Tensor y =
      RunOne("Round", 11, {T1<float>({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.3f, -2.7f})});
  ExpectTensor<float>(y, {8}, {0, 2, 2, -0.0f, -2, -2, 2, -3});
}

TEST(UnaryOpsTest, IntegerNegAbsSign) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  ExpectTensor<int32_t>(RunOne("Neg", 13, {T1<int32_t>({3}, {-3, 4, kMin})}), {3}, {3, -4, kMin});
  ExpectTensor<int8_t>(RunOne("Abs", 13, {T1<int8_t>({3}, {-3, 4, 0})}), {3}, {3, 4, 0});
  ExpectTensor<uint16_t>(RunOne("Abs", 13, {T1<uint16_t>({2}, {3, 65535})}), {2}, {3, 65535});
  ExpectTensor<int64_t>(RunOne("Sign", 13, {T1<int64_t>({3}, {-9, 0, 4})}), {3}, {-1, 0, 1});
  ExpectTensor<float>(RunOne("Sign", 13, {T1<float>({4}, {-0.1f, 0, 7, kNaN})}), {4},
                      {-1, 0, 1, kNaN});
}

TEST(UnaryOpsTest, NotIsNaNIsInf) {
  ExpectTensor<bool>(RunOne("Not", 1, {T1<bool>({3}, {true, false, true})}), {3},
                     {false, true, false});
  const Tensor x = T1<float>({4}, {1, kNaN, kInf, -kInf});
  ExpectTensor<bool>(RunOne("IsNaN", 13, {x}), {4}, {false, true, false, false});
  ExpectTensor<bool>(RunOne("IsInf", 10, {x}), {4}, {false, false, true, true});
  ExpectTensor<bool>(RunOne("IsInf", 10, {x}, Attrs({{"detect_positive", int64_t{0}}})), {4},
                     {false, false, false, true});
}

TEST(UnaryOpsTest, ClipAttributesBeforeOpset11) {
  Tensor x = T1<float>({5}, {-3, -1, 0, 2, 5});
  ExpectTensor<float>(RunOne("Clip", 6, {x}, Attrs({{"min", -1.5f}, {"max", 1.0f}})), {5},
                      {-1.5f, -1, 0, 1, 1});
  ExpectTensor<float>(RunOne("Clip", 6, {x}, Attrs({{"max", 0.0f}})), {5}, {-3, -1, 0, 0, 0});
}

TEST(UnaryOpsTest, ClipInputsFromOpset11) {
  Tensor x = T1<float>({5}, {-3, -1, 0, 2, -kInf});
  ExpectTensor<float>(RunOne("Clip", 13, {x, Tensor::Scalar(-2.0f), Tensor::Scalar(1.0f)}), {5},
                      {-2, -1, 0, 1, -2});
  // Only max (min absent): -inf stays -inf.
  ExpectTensor<float>(RunOne("Clip", 13, {x, Tensor(), Tensor::Scalar(0.5f)}), {5},
                      {-3, -1, 0, 0.5f, -kInf});
  ExpectTensor<float>(RunOne("Clip", 11, {x}), {5}, {-3, -1, 0, 2, -kInf});
  // min > max: everything becomes max.
  ExpectTensor<float>(RunOne("Clip", 13, {x, Tensor::Scalar(3.0f), Tensor::Scalar(1.0f)}), {5},
                      {1, 1, 1, 1, 1});
  ExpectTensor<int8_t>(RunOne("Clip", 13,
                              {T1<int8_t>({4}, {-128, -5, 5, 127}), Tensor::Scalar<int8_t>(-6),
                               Tensor::Scalar<int8_t>(6)}),
                       {4}, {-6, -5, 5, 6});
}

TEST(UnaryOpsTest, ClipErrors) {
  Tensor x = T1<float>({2}, {1, 2});
  EXPECT_EQ(RunStatus("Clip", 13, {x, T1<float>({2}, {0, 1})}).code(), StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("Clip", 13, {x, Tensor::Scalar(0.0)}).code(), StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("Clip", 6, {x, Tensor::Scalar(0.0f)}).code(), StatusCode::kInvalidModel);
}

TEST(UnaryOpsTest, UnsupportedDTypeIsRefusedNamingTheNode) {
  Status s = RunStatus("Sigmoid", 13, {T1<int32_t>({2}, {1, 2})});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("Sigmoid node 'n_Sigmoid'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("int32"), std::string::npos) << s.message();
  EXPECT_EQ(RunStatus("Neg", 13, {T1<uint8_t>({1}, {1})}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(RunStatus("Not", 1, {T1<float>({1}, {1})}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(
      RunStatus("Gelu", 20, {T1<float>({1}, {1})}, Attrs({{"approximate", std::string("fast")}}))
          .code(),
      StatusCode::kInvalidModel);
}

// ---- Cast ------------------------------------------------------------------------------------

Attributes To(DType dtype) { return Attrs({{"to", static_cast<int64_t>(dtype)}}); }

TEST(CastTest, FloatToIntegersTruncatesAndSaturates) {
  Tensor x = T1<float>({7}, {2.9f, -2.9f, 0.5f, kNaN, 1e20f, -1e20f, 127.0f});
  ExpectTensor<int32_t>(
      RunOne("Cast", 13, {x}, To(DType::kInt32)), {7},
      {2, -2, 0, 0, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 127});
  ExpectTensor<uint8_t>(RunOne("Cast", 13, {x}, To(DType::kUInt8)), {7}, {2, 0, 0, 0, 255, 0, 127});
  ExpectTensor<int64_t>(RunOne("Cast", 13, {T1<double>({2}, {1e30, -3.5})}, To(DType::kInt64)), {2},
                        {std::numeric_limits<int64_t>::max(), -3});
}

TEST(CastTest, BetweenNumericTypesAndBool) {
  ExpectTensor<bool>(RunOne("Cast", 13, {T1<float>({3}, {0, -0.5f, kNaN})}, To(DType::kBool)), {3},
                     {false, true, true});
  ExpectTensor<float>(RunOne("Cast", 13, {T1<bool>({2}, {true, false})}, To(DType::kFloat32)), {2},
                      {1, 0});
  ExpectTensor<double>(RunOne("Cast", 13, {T1<int64_t>({2}, {-5, 1LL << 40})}, To(DType::kFloat64)),
                       {2}, {-5.0, 1099511627776.0});
  ExpectTensor<float>(RunOne("Cast", 13, {T1<double>({1}, {0.1})}, To(DType::kFloat32)), {1},
                      {0.1f});
  // Integer narrowing wraps (two's complement).
  ExpectTensor<int8_t>(RunOne("Cast", 13, {T1<int32_t>({2}, {300, -129})}, To(DType::kInt8)), {2},
                       {44, 127});
  ExpectTensor<int32_t>(RunOne("Cast", 13, {T1<int32_t>({2}, {1, 2})}, To(DType::kInt32)), {2},
                        {1, 2});
}

TEST(CastTest, RefusesStrings) {  // float16 and bfloat16: cast_half_test.cc
  Tensor x = T1<float>({1}, {1});
  for (DType d : {DType::kString}) {
    Status s = RunStatus("Cast", 13, {x}, To(d));
    EXPECT_EQ(s.code(), StatusCode::kUnsupported) << DTypeName(d);
    EXPECT_NE(s.message().find(DTypeName(d)), std::string::npos) << s.message();
  }
  EXPECT_EQ(RunStatus("Cast", 13, {x}).code(), StatusCode::kInvalidModel);  // no 'to'
  // opset 19's saturate is accepted (it only matters for float8).
  Attributes a = To(DType::kInt32);
  a.Set("saturate", int64_t{0});
  ExpectTensor<int32_t>(RunOne("Cast", 19, {x}, a), {1}, {1});
}

TEST(CastTest, CastLikeTakesTheSecondInputsDType) {
  Tensor y = RunOne("CastLike", 15, {T1<float>({2}, {1.7f, -1.7f}), T1<int64_t>({1}, {0})});
  ExpectTensor<int64_t>(y, {2}, {1, -1});
}

TEST(CastTest, IdentityCopiesAnyFixedSizeDType) {
  ExpectTensor<int16_t>(RunOne("Identity", 16, {T1<int16_t>({2, 1}, {3, -4})}), {2, 1}, {3, -4});
  Tensor half(DType::kFloat16, {3});
  half.data_as<uint16_t>()[1] = 0x3c00;
  Tensor y = RunOne("Identity", 16, {half});
  ASSERT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_EQ(y.data_as<uint16_t>()[1], 0x3c00);
}

// ---- Dropout -------------------------------------------------------------------------------

TEST(DropoutTest, InferenceIsIdentityWithAllTrueMask) {
  Tensor x = T1<float>({2, 2}, {1, -2, 3, 4});
  Node node = MakeNode("Dropout", 2, {true, true});
  auto out = RunReferenceNode(node, 13, {x, Tensor::Scalar(0.3f)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectTensor<float>(out.value()[0], {2, 2}, {1, -2, 3, 4});
  ExpectTensor<bool>(out.value()[1], {2, 2}, {true, true, true, true});
  // Old form: ratio attribute, no training switch.
  ExpectTensor<float>(RunOne("Dropout", 11, {x}, Attrs({{"ratio", 0.2f}})), {2, 2}, {1, -2, 3, 4});
  // training_mode false.
  ExpectTensor<float>(RunOne("Dropout", 13, {x, Tensor::Scalar(0.5f), Tensor::Scalar(false)}),
                      {2, 2}, {1, -2, 3, 4});
}

TEST(DropoutTest, TrainingModeIsRefusedUnlessRatioIsZero) {
  Tensor x = T1<float>({2}, {1, 2});
  Status s = RunStatus("Dropout", 13, {x, Tensor::Scalar(0.5f), Tensor::Scalar(true)});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("training"), std::string::npos) << s.message();
  // Default ratio (0.5) in training mode.
  EXPECT_EQ(RunStatus("Dropout", 13, {x, Tensor(), Tensor::Scalar(true)}).code(),
            StatusCode::kUnsupported);
  // Ratio 0 in training mode drops nothing: deterministic.
  ExpectTensor<float>(RunOne("Dropout", 13, {x, Tensor::Scalar(0.0f), Tensor::Scalar(true)}), {2},
                      {1, 2});
}

TEST(DropoutTest, NonConstantTrainingModeIsRefusedAtLoadAndCheckedByTheKernel) {
  const OpDef* def = OpRegistry::Global().Find("", "Dropout");
  ASSERT_NE(def, nullptr);
  Node node = MakeNode("Dropout", 3);
  TensorType x{DType::kFloat32, {2}}, r{DType::kFloat32, {}}, t{DType::kBool, {}};
  // training_mode is not a constant: it could turn training on at run time.
  InferContext infer{node, 13, {&x, &r, &t}, {nullptr, nullptr, nullptr}, {}};
  Status s = InferNodeTypes(*def, infer);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("training_mode"), std::string::npos) << s.message();
  // A non-constant ratio alone is fine.
  InferContext infer_ratio{node, 13, {&x, &r}, {nullptr, nullptr}, {}};
  EXPECT_TRUE(InferNodeTypes(*def, infer_ratio).ok());
  // The kernel refuses training values it is handed directly.
  std::vector<Tensor> inputs{T1<float>({2}, {1, 2}), Tensor::Scalar(0.5f), Tensor::Scalar(true)};
  std::vector<Tensor> outputs{Tensor(DType::kFloat32, {2})};
  KernelContext run{node, 13, inputs, outputs};
  EXPECT_EQ(def->run(run).code(), StatusCode::kUnsupported);
}

TEST(UnaryOpsTest, LargeTensorTakesTheThreadedPathCorrectly) {
  const int64_t n = 1 << 20;
  std::vector<float> x = RandomFloats(static_cast<size_t>(n), 7);
  Tensor y = RunOne("Tanh", 13, {T1<float>({n}, x)});
  ASSERT_EQ(y.num_elements(), n);
  for (int64_t i = 0; i < n; i += 997) {
    EXPECT_NEAR(y.data_as<float>()[i], std::tanh(x[static_cast<size_t>(i)]), 1e-6);
  }
  EXPECT_NEAR(y.data_as<float>()[n - 1], std::tanh(x.back()), 1e-6);
}

TEST(UnaryOpsTest, KindsAreElementwise) {
  for (const char* op : {"Relu", "Sigmoid", "Clip", "Cast", "Identity", "Dropout", "Not", "Erf"}) {
    const OpDef* def = OpRegistry::Global().Find("", op);
    ASSERT_NE(def, nullptr) << op;
    EXPECT_EQ(def->kind, OpKind::kElementwise) << op;
  }
}

}  // namespace
}  // namespace collage::testing
