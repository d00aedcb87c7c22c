// Reductions, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax on the reference kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>

#include "elementwise_test_util.h"
#include "collage/sdk/op_registry.h"

namespace collage::testing {
namespace {

Tensor Axes(std::vector<int64_t> axes) {
  const auto n = static_cast<int64_t>(axes.size());
  return Tensor::FromVector<int64_t>({n}, axes);
}

// Groups the input values by output element (reduced dims dropped from the index) and
// folds each group with `f`, in double: the slow obvious reduction.
std::vector<double> NaiveReduce(const Shape& shape, const std::vector<float>& x,
                                const std::set<int64_t>& axes,
                                const std::function<double(const std::vector<double>&)>& f) {
  Shape kept_shape = shape;
  for (int64_t a : axes) kept_shape[static_cast<size_t>(a)] = 1;
  std::vector<std::vector<double>> groups(static_cast<size_t>(NumElements(kept_shape)));
  for (int64_t i = 0; i < NumElements(shape); ++i) {
    std::vector<int64_t> idx = Unflatten(i, shape);
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      o = o * kept_shape[d] + (axes.count(static_cast<int64_t>(d)) ? 0 : idx[d]);
    }
    groups[static_cast<size_t>(o)].push_back(x[static_cast<size_t>(i)]);
  }
  std::vector<double> out;
  for (const auto& g : groups) out.push_back(f(g));
  return out;
}

struct ReduceFormula {
  const char* op;
  std::function<double(const std::vector<double>&)> f;
};

std::vector<ReduceFormula> ReduceFormulas() {
  auto sum = [](const std::vector<double>& g) {
    double s = 0;
    for (double v : g) s += v;
    return s;
  };
  return {
      {"ReduceSum", sum},
      {"ReduceMean",
       [sum](const std::vector<double>& g) { return sum(g) / static_cast<double>(g.size()); }},
      {"ReduceMax",
       [](const std::vector<double>& g) { return *std::max_element(g.begin(), g.end()); }},
      {"ReduceMin",
       [](const std::vector<double>& g) { return *std::min_element(g.begin(), g.end()); }},
      {"ReduceProd",
       [](const std::vector<double>& g) {
         double p = 1;
         for (double v : g) p *= v;
         return p;
       }},
      {"ReduceL1",
       [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += std::abs(v);
         return s;
       }},
      {"ReduceL2",
       [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += v * v;
         return std::sqrt(s);
       }},
      {"ReduceSumSquare",
       [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += v * v;
         return s;
       }},
      {"ReduceLogSum", [sum](const std::vector<double>& g) { return std::log(sum(g)); }},
      {"ReduceLogSumExp",
       [](const std::vector<double>& g) {
         double s = 0;
         for (double v : g) s += std::exp(v);
         return std::log(s);
       }},
  };
}

Shape OutputShape(const Shape& shape, const std::set<int64_t>& axes, bool keepdims) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!axes.count(static_cast<int64_t>(d)))
      out.push_back(shape[d]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

TEST(ReductionTest, EveryReduceOpMatchesNaiveForManyAxisSets) {
  const Shape shape{2, 3, 4, 2};
  // Positive values so that LogSum and Prod are well defined and tame.
  const std::vector<float> x = RandomFloats(48, 5, 0.5f, 1.5f);
  const std::vector<std::vector<int64_t>> axis_sets = {{0},    {1},    {3},    {-1},        {1, 2},
                                                       {0, 2}, {0, 3}, {1, 3}, {0, 1, 2, 3}};
  for (const ReduceFormula& formula : ReduceFormulas()) {
    for (const auto& axes : axis_sets) {
      for (bool keepdims : {true, false}) {
        std::set<int64_t> normalized;
        for (int64_t a : axes) normalized.insert(a < 0 ? a + 4 : a);
        SCOPED_TRACE(std::string(formula.op) + " axes " + std::to_string(axes[0]) + ".." +
                     std::to_string(axes.size()) + " keepdims " + std::to_string(keepdims));
        const std::vector<double> expected_d = NaiveReduce(shape, x, normalized, formula.f);
        const std::vector<float> expected(expected_d.begin(), expected_d.end());
        Attributes attrs = Attrs({{"keepdims", int64_t{keepdims}}});
        // Axes as the attribute (opset 13) and as the input (opset 18).
        Attributes with_axes = attrs;
        with_axes.Set("axes", axes);
        const bool sum = std::string(formula.op) == "ReduceSum";
        Tensor y_attr = RunOne(formula.op, sum ? 11 : 13, {T1<float>(shape, x)}, with_axes);
        ExpectTensor<float>(y_attr, OutputShape(shape, normalized, keepdims), expected, 2e-6);
        Tensor y_input = RunOne(formula.op, 18, {T1<float>(shape, x), Axes(axes)}, attrs);
        ExpectTensor<float>(y_input, OutputShape(shape, normalized, keepdims), expected, 2e-6);
      }
    }
  }
}

TEST(ReductionTest, HandWorkedSumAndMean) {
  Tensor x = T1<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectTensor<float>(RunOne("ReduceSum", 13, {x, Axes({1})}), {2, 1}, {6, 15});
  ExpectTensor<float>(RunOne("ReduceSum", 13, {x, Axes({0})}, Attrs({{"keepdims", int64_t{0}}})),
                      {3}, {5, 7, 9});
  ExpectTensor<float>(RunOne("ReduceMean", 13, {x}), {1, 1}, {3.5f});
  ExpectTensor<float>(RunOne("ReduceMean", 13, {x}, Attrs({{"keepdims", int64_t{0}}})), {}, {3.5f});
  ExpectTensor<int32_t>(RunOne("ReduceSum", 13, {T1<int32_t>({2, 2}, {1, 2, 3, 4}), Axes({1})}),
                        {2, 1}, {3, 7});
  ExpectTensor<int64_t>(
      RunOne("ReduceMax", 13, {T1<int64_t>({3}, {-5, 9, 2})}, Attrs({{"keepdims", int64_t{0}}})),
      {}, {9});
  ExpectTensor<uint8_t>(RunOne("ReduceProd", 13, {T1<uint8_t>({3}, {2, 3, 4})}), {1}, {24});
}

TEST(ReductionTest, EmptyAxesReduceAllOrNoop) {
  Tensor x = T1<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  // Empty axes input: every axis.
  ExpectTensor<float>(RunOne("ReduceSum", 13, {x, Axes({})}), {1, 1}, {21});
  // noop_with_empty_axes: the identity (as test_reduce_sum_empty_axes_input_noop_example).
  ExpectTensor<float>(
      RunOne("ReduceSum", 13, {x, Axes({})}, Attrs({{"noop_with_empty_axes", int64_t{1}}})), {3, 2},
      {1, 2, 3, 4, 5, 6});
  ExpectTensor<float>(RunOne("ReduceMax", 18, {x}, Attrs({{"noop_with_empty_axes", int64_t{1}}})),
                      {3, 2}, {1, 2, 3, 4, 5, 6});
  ExpectTensor<float>(RunOne("ReduceMax", 18, {x}), {1, 1}, {6});
}

TEST(ReductionTest, LogSumExpIsStableForLargeValues) {
  Tensor x = T1<float>({2, 2}, {1000, 1000, -1000, -std::numeric_limits<float>::infinity()});
  ExpectTensor<float>(
      RunOne("ReduceLogSumExp", 13, {x}, Attrs({{"axes", std::vector<int64_t>{1}}})), {2, 1},
      {1000 + std::log(2.0f), -1000}, 1e-6);
}

TEST(ReductionTest, BigReductionsUseThreadsCorrectly) {
  // [kept 512, reduced 300]: the outer groups go to different threads.
  const Shape shape{512, 300};
  std::vector<float> x = RandomFloats(512 * 300, 9);
  Tensor y =
      RunOne("ReduceSum", 13, {T1<float>(shape, x), Axes({1})}, Attrs({{"keepdims", int64_t{0}}}));
  ASSERT_EQ(y.shape(), Shape{512});
  for (int64_t r = 0; r < 512; ++r) {
    double s = 0;
    for (int64_t j = 0; j < 300; ++j) s += x[static_cast<size_t>(r * 300 + j)];
    EXPECT_NEAR(y.data_as<float>()[r], s, 1e-4);
  }
}

TEST(ReductionTest, AxesErrors) {
  Tensor x = T1<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(RunStatus("ReduceSum", 13, {x, Axes({2})}).code(), StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("ReduceSum", 13, {x, Axes({1, -1})}).code(), StatusCode::kInvalidModel);
  // axes as an input before the opset that has it.
  EXPECT_EQ(RunStatus("ReduceMean", 13, {x, Axes({1})}).code(), StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("ReduceSum", 11, {x, Axes({1})}).code(), StatusCode::kInvalidModel);
  EXPECT_EQ(RunStatus("ReduceSum", 13, {T1<bool>({1}, {true})}).code(), StatusCode::kUnsupported);

  // A non-constant axes input leaves the output shape unknown: refused in type inference,
  // unless its shape says it is empty.
  const OpDef* def = OpRegistry::Global().Find("", "ReduceSum");
  ASSERT_NE(def, nullptr);
  Node node = MakeNode("ReduceSum", 2);
  TensorType data{DType::kFloat32, {2, 3}}, axes{DType::kInt64, {1}}, no_axes{DType::kInt64, {0}};
  InferContext infer{node, 13, {&data, &axes}, {nullptr, nullptr}, {}};
  Status s = InferNodeTypes(*def, infer);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("constant"), std::string::npos) << s.message();
  InferContext infer_empty{node, 13, {&data, &no_axes}, {nullptr, nullptr}, {}};
  ASSERT_TRUE(InferNodeTypes(*def, infer_empty).ok());
  EXPECT_EQ(infer_empty.output_types[0].shape, (Shape{1, 1}));
}

// ---- ArgMax / ArgMin ----------------------------------------------------------------------

TEST(ArgTest, ArgMaxArgMinWithTiesAndKeepdims) {
  Tensor x = T1<float>({2, 3}, {2, 5, 5, 7, 1, 1});
  ExpectTensor<int64_t>(RunOne("ArgMax", 13, {x}, Attrs({{"axis", int64_t{1}}})), {2, 1}, {1, 0});
  ExpectTensor<int64_t>(
      RunOne("ArgMax", 13, {x}, Attrs({{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}})),
      {2, 1}, {2, 0});
  ExpectTensor<int64_t>(
      RunOne("ArgMin", 13, {x}, Attrs({{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}})), {2},
      {0, 1});
  ExpectTensor<int64_t>(RunOne("ArgMin", 13, {x},
                               Attrs({{"axis", int64_t{1}},
                                      {"select_last_index", int64_t{1}},
                                      {"keepdims", int64_t{0}}})),
                        {2}, {0, 2});
  // Default axis 0 on a strided layout.
  ExpectTensor<int64_t>(RunOne("ArgMax", 13, {x}), {1, 3}, {1, 0, 0});
  ExpectTensor<int64_t>(RunOne("ArgMax", 13, {T1<int32_t>({2, 2}, {3, -1, 3, 4})},
                               Attrs({{"select_last_index", int64_t{1}}})),
                        {1, 2}, {1, 1});
}

// ---- Softmax family -------------------------------------------------------------------------

// softmax over the flat rows [outer, n] (inner = 1) or along one axis (inner > 1).
std::vector<float> NaiveSoftmax(const std::vector<float>& x, int64_t outer, int64_t n,
                                int64_t inner, bool log) {
  std::vector<float> y(x.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double m = -1e300, s = 0;
      for (int64_t j = 0; j < n; ++j)
        m = std::max(m, static_cast<double>(x[static_cast<size_t>((o * n + j) * inner + i)]));
      for (int64_t j = 0; j < n; ++j)
        s += std::exp(x[static_cast<size_t>((o * n + j) * inner + i)] - m);
      for (int64_t j = 0; j < n; ++j) {
        const size_t k = static_cast<size_t>((o * n + j) * inner + i);
        y[k] = static_cast<float>(log ? x[k] - m - std::log(s) : std::exp(x[k] - m) / s);
      }
    }
  }
  return y;
}

TEST(SoftmaxTest, OpsetChangesTheMeaningOfAxis) {
  const Shape shape{2, 3, 4};
  const std::vector<float> x = RandomFloats(24, 21);
  for (bool log : {false, true}) {
    const char* op = log ? "LogSoftmax" : "Softmax";
    SCOPED_TRACE(op);
    // Opset 13, default axis -1: along the last dim.
    ExpectTensor<float>(RunOne(op, 13, {T1<float>(shape, x)}), shape, NaiveSoftmax(x, 6, 4, 1, log),
                        1e-6);
    // Opset 13, axis 1: along dim 1 only (strided).
    ExpectTensor<float>(RunOne(op, 13, {T1<float>(shape, x)}, Attrs({{"axis", int64_t{1}}})), shape,
                        NaiveSoftmax(x, 2, 3, 4, log), 1e-6);
    // Opset 11, default axis 1: coerced to [2, 12], normalised over 12 elements.
    ExpectTensor<float>(RunOne(op, 11, {T1<float>(shape, x)}), shape,
                        NaiveSoftmax(x, 2, 12, 1, log), 1e-6);
    // Opset 11, axis 0: one row of everything.
    ExpectTensor<float>(RunOne(op, 11, {T1<float>(shape, x)}, Attrs({{"axis", int64_t{0}}})), shape,
                        NaiveSoftmax(x, 1, 24, 1, log), 1e-6);
  }
}

TEST(SoftmaxTest, StableForLargeNumbers) {
  Tensor x = T1<float>({2, 4}, {0, 1, 2, 3, 10000, 10001, 10002, 10003});
  const std::vector<float> row = {0.0320586f, 0.08714432f, 0.23688284f, 0.64391428f};
  std::vector<float> expected = row;
  expected.insert(expected.end(), row.begin(), row.end());
  ExpectTensor<float>(RunOne("Softmax", 13, {x}), {2, 4}, expected, 1e-6);
  Tensor l = RunOne("LogSoftmax", 13, {x});
  EXPECT_NEAR(l.data_as<float>()[7], std::log(0.64391428f), 1e-5);
}

TEST(SoftmaxTest, Hardmax) {
  Tensor x = T1<float>({2, 3}, {1, 3, 3, -1, -2, -3});
  ExpectTensor<float>(RunOne("Hardmax", 13, {x}), {2, 3}, {0, 1, 0, 1, 0, 0});
  ExpectTensor<float>(RunOne("Hardmax", 13, {x}, Attrs({{"axis", int64_t{0}}})), {2, 3},
                      {1, 1, 1, 0, 0, 0});
  ExpectTensor<float>(RunOne("Hardmax", 11, {x}, Attrs({{"axis", int64_t{0}}})), {2, 3},
                      {0, 1, 0, 0, 0, 0});
}

TEST(SoftmaxTest, HardmaxPicksTheFirstNaNAsNumpysArgmax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Along the contiguous last axis, and along a strided one.
  Tensor x = T1<float>({2, 3}, {1, nan, nan, nan, 5, 2});
  ExpectTensor<float>(RunOne("Hardmax", 13, {x}), {2, 3}, {0, 1, 0, 1, 0, 0});
  ExpectTensor<float>(RunOne("Hardmax", 13, {x}, Attrs({{"axis", int64_t{0}}})), {2, 3},
                      {0, 1, 1, 1, 0, 0});
  // Softmax: a NaN in the row makes every output of the row NaN.
  Tensor s = RunOne("Softmax", 13, {x});
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(std::isnan(s.data_as<float>()[i])) << i;
}

TEST(SoftmaxTest, Errors) {
  EXPECT_EQ(RunStatus("Softmax", 13, {T1<int32_t>({2}, {1, 2})}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(
      RunStatus("Softmax", 13, {T1<float>({2}, {1, 2})}, Attrs({{"axis", int64_t{1}}})).code(),
      StatusCode::kInvalidModel);
}

TEST(ReductionTest, KindsAreReduction) {
  for (const char* op : {"ReduceMean", "ReduceSum", "ArgMax", "Softmax", "LogSoftmax"}) {
    const OpDef* def = OpRegistry::Global().Find("", op);
    ASSERT_NE(def, nullptr) << op;
    EXPECT_EQ(def->kind, OpKind::kReduction) << op;
  }
}

}  // namespace
}  // namespace collage::testing
