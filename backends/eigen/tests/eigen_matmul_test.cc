// The Eigen backend's MatMul and Gemm rules (Eigen matrix products over row-major maps),
// compared with the reference kernels through a KernelRunner. Tolerance 1e-4 (normalized):
// reductions are at most 96 long.
#include <gtest/gtest.h>

#include "backend_test_util.h"

namespace collage::testing {
namespace {

// `rule` offers exactly one candidate on `graph`; compiled for 2 threads, it matches the
// reference on inputs from seed 3.
void ExpectRuleMatches(const Graph& graph, const std::string& rule) {
  collage::testing::ExpectRuleMatches(graph, "eigen", rule, kAnyNodes, 1e-4, 3, /*threads=*/2);
}

TEST(EigenBackendTest, VersionNamesReleaseAndSimd) {
  const std::string version = BackendNamed("eigen").version();
  EXPECT_EQ(version.rfind("Eigen 3.4.", 0), 0u) << version;
  EXPECT_GT(version.size(), std::string("Eigen 3.4.0 ").size()) << version;
}

TEST(EigenMatMulTest, Shapes) {
  struct Case { Shape a, b; bool b_constant; };
  const Case cases[] = {
      {{7, 13}, {13, 5}, false},
      {{7, 13}, {13, 5}, true},
      {{2, 3, 7, 13}, {13, 5}, true},      // batch folds into one product
      {{3, 7, 13}, {3, 13, 5}, false},     // batched
      {{2, 1, 7, 13}, {3, 13, 5}, false},  // batch dims broadcast on both sides
      {{7, 13}, {4, 13, 5}, false},        // A broadcast over B's batch
      {{13}, {4, 13, 5}, false},           // 1-D A
      {{2, 7, 13}, {13}, false},           // 1-D B
      {{13}, {13}, false},                 // dot product
      {{7, 0}, {0, 5}, false},             // empty reduction: zeros
      {{128, 96}, {96, 64}, true},         // big enough for Eigen's parallel GEMM
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ShapeToString(c.a) + " x " + ShapeToString(c.b));
    GraphBuilder b("matmul");
    ValueId x = b.Input("a", DType::kFloat32, c.a);
    ValueId y = c.b_constant ? b.RandomNormal("w", c.b, 1.0f) : b.Input("b", DType::kFloat32, c.b);
    b.Output(b.Node("MatMul", {x, y}));
    ExpectRuleMatches(BuildOrFail(std::move(b)), "matmul");
  }
}

TEST(EigenMatMulTest, RejectsNonFloat32) {
  GraphBuilder b("int_matmul");
  ValueId x = b.Input("a", DType::kInt32, {4, 3});
  ValueId y = b.Input("b", DType::kInt32, {3, 2});
  b.Output(b.Node("MatMul", {x, y}));
  EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(b)), "eigen", "matmul"));
}

TEST(EigenGemmTest, FlagsAndBroadcastC) {
  for (const GemmCase& c : GemmCases()) {
    SCOPED_TRACE(c.ToString());
    ExpectRuleMatches(GemmGraph(c), "gemm");
  }
}

}  // namespace
}  // namespace collage::testing
