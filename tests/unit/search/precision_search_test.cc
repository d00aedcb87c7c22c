// Reduced precision within an accuracy budget: the kept plan's outputs are within the
// tolerance of the float32 reference kernels; a tolerance no reduced precision meets gives an
// all-float32 plan and the report says why; the input sets of the check are validated.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "collage/available_backends.h"
#include "collage/random_tensor.h"
#include "collage/sdk/backend.h"
#include "optimize_test_util.h"
#include "search/accuracy_check.h"
#include "search/optimizer.h"

namespace collage {
namespace {

using testing::QuickOptimize;
using testing::TempDir;

// Two linear layers and a convolution: ops that engines and oneDNN offer in bf16 where the
// CPU has it.
Graph LinearsAndConv() {
  GraphBuilder b("linears_and_conv", 17, 3);
  ValueId x = b.Input("x", DType::kFloat32, {1, 16, 24, 24});
  ValueId w = b.RandomNormal("conv.w", {32, 16, 3, 3}, 0.2f);
  ValueId c = b.Node("Conv", {x, w}, {{"pads", {1, 1, 1, 1}}}, "conv");
  ValueId r = b.Node("Relu", {c}, {}, "relu");
  ValueId flat = b.Node(
      "Reshape", {r, b.Constant("shape", Shape{2}, std::vector<int64_t>{32, 576})}, {}, "flatten");
  ValueId w1 = b.RandomNormal("fc1.w", {576, 256}, 0.05f);
  ValueId h = b.Node("Relu", {b.Node("MatMul", {flat, w1}, {}, "fc1")}, {}, "fc1.relu");
  ValueId w2 = b.RandomNormal("fc2.w", {256, 64}, 0.1f);
  b.Output(b.Node("MatMul", {h, w2}, {}, "fc2"), "y");
  auto g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return std::move(*g);
}

OptimizeOptions ReducedPrecisionOptions(const TempDir& dir, double tolerance) {
  OptimizeOptions options = QuickOptimize(dir.file("costs.sqlite"));
  for (const char* name : {"onednn", "openvino"}) {
    if (GlobalBackendRegistry().Find(name) != nullptr) options.backends.push_back(name);
  }
  options.workers = MeasureWorkers::InProcess();
  options.precision = PrecisionChoice::kAuto;
  options.tolerance = tolerance;
  return options;
}

int ReducedGroups(const Placement& placement) {
  int reduced = 0;
  for (const PlacedGroup& group : placement.groups)
    reduced += group.precision != Precision::kFloat32;
  return reduced;
}

TEST(PrecisionSearchTest, TheKeptPlanIsWithinTheToleranceOnEveryInputSet) {
  TempDir dir;
  Graph graph = LinearsAndConv();
  OptimizeOptions options = ReducedPrecisionOptions(dir, 1e-2);
  auto result = OptimizePlacement(graph, GlobalBackendRegistry(), 1, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const OptimizeReport::AccuracyCheck& a = result->report.accuracy;
  EXPECT_EQ(a.input_sets, 2);
  EXPECT_DOUBLE_EQ(a.tolerance, 1e-2);
  EXPECT_LE(a.error, 1e-2);
  EXPECT_GE(a.searches, 1);
  EXPECT_EQ(a.reduced_groups, ReducedGroups(result->placement));
  EXPECT_EQ(a.all_float32_because.empty(), a.reduced_groups > 0) << a.all_float32_because;
  // The report names each group's precision as the placement has it.
  ASSERT_EQ(result->report.groups.size(), result->placement.groups.size());
  for (size_t g = 0; g < result->placement.groups.size(); ++g) {
    EXPECT_EQ(result->report.groups[g].precision, result->placement.groups[g].precision) << g;
  }
  // Checked again on inputs of its own: within the tolerance there too.
  auto check = AccuracyCheck::Prepare(graph, GlobalBackendRegistry(), 1, {}, 3);
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  auto error = check->ErrorOf(result->placement);
  ASSERT_TRUE(error.ok()) << error.status().ToString();
  EXPECT_LE(*error, 2e-2);
}

TEST(PrecisionSearchTest, AToleranceNoReducedPrecisionMeetsGivesAFloat32PlanAndSaysWhy) {
  TempDir dir;
  Graph graph = LinearsAndConv();
  OptimizeOptions options = ReducedPrecisionOptions(dir, 1e-9);
  auto result = OptimizePlacement(graph, GlobalBackendRegistry(), 1, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(ReducedGroups(result->placement), 0);
  const OptimizeReport::AccuracyCheck& a = result->report.accuracy;
  EXPECT_EQ(a.reduced_groups, 0);
  EXPECT_FALSE(a.all_float32_because.empty());
  // Float32 groups still agree with the reference kernels as any plan does.
  EXPECT_LE(a.error, 1e-3);
  // Where some reduced-precision group measured faster, it was tried, found beyond the
  // tolerance and sent back, and the report says which.
  if (a.searches > 1) {
    EXPECT_FALSE(a.reverted.empty());
    EXPECT_NE(a.all_float32_because.find("beyond the tolerance"), std::string::npos)
        << a.all_float32_because;
  }
}

TEST(PrecisionSearchTest, AFloat32OptimizeChecksNothingAndOffersNoReducedPrecision) {
  TempDir dir;
  Graph graph = LinearsAndConv();
  OptimizeOptions options = ReducedPrecisionOptions(dir, 1e-2);
  options.precision = PrecisionChoice::kFloat32;
  options.calibration_rounds = 0;
  options.final_rounds = 0;
  auto result = OptimizePlacement(graph, GlobalBackendRegistry(), 1, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(ReducedGroups(result->placement), 0);
  EXPECT_EQ(result->report.accuracy.input_sets, 0);
}

TEST(PrecisionSearchTest, ABadToleranceIsRefused) {
  TempDir dir;
  Graph graph = LinearsAndConv();
  for (double tolerance : {0.0, -1.0, std::nan(""), static_cast<double>(INFINITY)}) {
    OptimizeOptions options = ReducedPrecisionOptions(dir, tolerance);
    auto result = OptimizePlacement(graph, GlobalBackendRegistry(), 1, options);
    ASSERT_FALSE(result.ok()) << tolerance;
    EXPECT_NE(result.status().message().find("tolerance"), std::string::npos)
        << result.status().ToString();
  }
}

TEST(PrecisionSearchTest, GivenInputSetsAreCheckedAgainstTheModelsInputs) {
  Graph graph = LinearsAndConv();
  std::mt19937 rng(5);
  const Tensor good = RandomTensor(DType::kFloat32, {1, 16, 24, 24}, rng);
  auto refused = [&](const NamedInputSet& set, const std::string& expected) {
    auto check = AccuracyCheck::Prepare(graph, GlobalBackendRegistry(), 1, {set}, 0);
    ASSERT_FALSE(check.ok()) << expected;
    EXPECT_NE(check.status().message().find(expected), std::string::npos)
        << check.status().ToString();
  };
  refused({}, "input set 1 lacks input 'x'");
  refused({{"x", good}, {"x", good}}, "gives input 'x' twice");
  refused({{"x", good}, {"z", good}}, "names 'z', which is not an input");
  refused({{"x", RandomTensor(DType::kFloat32, {1, 16, 24, 23}, rng)}},
          "input 'x' is float32[1x16x24x23], the model takes float32[1x16x24x24]");
  refused({{"x", RandomTensor(DType::kInt64, {1, 16, 24, 24}, rng)}}, "input 'x' is int64");
  auto check = AccuracyCheck::Prepare(graph, GlobalBackendRegistry(), 1, {{{"x", good}}}, 0);
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_EQ(check->num_sets(), 1);
}

}  // namespace
}  // namespace collage
