// The OpenBLAS backend's MatMul, MatMul + bias and Gemm rules: every candidate a rule offers
// is compiled through a KernelRunner and compared with the reference kernels. Tolerance
// 1e-4 (normalized): reductions here are at most 96 long, where float32 rounding stays
// around 1e-6.
#include <gtest/gtest.h>

#include <cblas.h>

#include "backend_test_util.h"

namespace collage::testing {
namespace {

// `rule` offers exactly one candidate on `graph`; compiled for 2 threads, it matches the
// reference on inputs from seed 11.
void ExpectRuleMatches(const Graph& graph, const std::string& rule) {
  collage::testing::ExpectRuleMatches(graph, "openblas", rule, kAnyNodes, 1e-4, 11, /*threads=*/2);
}

// MatMul of two inputs, or of an input by a constant when b_constant.
Graph MatMulGraph(const Shape& a, const Shape& b, bool b_constant = false) {
  GraphBuilder builder("matmul");
  ValueId x = builder.Input("a", DType::kFloat32, a);
  ValueId y = b_constant ? builder.RandomNormal("w", b, 1.0f) : builder.Input("b", DType::kFloat32, b);
  builder.Output(builder.Node("MatMul", {x, y}));
  return BuildOrFail(std::move(builder));
}

TEST(OpenblasBackendTest, IsTheOpenmpBuildAndNamesItsCore) {
  // 2 = OpenMP (0 sequential, 1 pthreads): the OpenMP build must win over Debian's default
  // pthread build, which has the same soname.
  EXPECT_EQ(openblas_get_parallel(), 2);
  const std::string version = BackendNamed("openblas").version();
  EXPECT_EQ(version.rfind("OpenBLAS 0.3.21 ", 0), 0u) << version;
  EXPECT_NE(version.find(openblas_get_corename()), std::string::npos) << version;
}

TEST(OpenblasMatMulTest, Shapes) {
  struct Case { Shape a, b; bool b_constant; };
  const Case cases[] = {
      {{7, 13}, {13, 5}, false},           // plain 2-D
      {{7, 13}, {13, 5}, true},            // constant weight
      {{2, 3, 7, 13}, {13, 5}, true},      // batch folds into one GEMM
      {{3, 7, 13}, {3, 13, 5}, false},     // batched
      {{2, 1, 7, 13}, {3, 13, 5}, false},  // batch dims broadcast on both sides
      {{7, 13}, {4, 13, 5}, false},        // A broadcast over B's batch
      {{13}, {4, 13, 5}, false},           // 1-D A: a row, dropped from the output
      {{2, 7, 13}, {13}, false},           // 1-D B: a column, dropped
      {{13}, {13}, false},                 // dot product: a scalar
      {{7, 0}, {0, 5}, false},             // empty reduction: zeros
      {{128, 96}, {96, 64}, true},         // big enough to use the threads
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ShapeToString(c.a) + " x " + ShapeToString(c.b));
    ExpectRuleMatches(MatMulGraph(c.a, c.b, c.b_constant), "matmul");
  }
}

TEST(OpenblasMatMulTest, FusesBiasRow) {
  for (const Shape& bias : {Shape{5}, Shape{1, 5}, Shape{1}, Shape{}}) {
    SCOPED_TRACE("bias " + ShapeToString(bias));
    Graph graph = MatMulAddGraph(bias);
    ExpectRuleMatches(graph, "matmul_bias");
    ExpectRuleMatches(graph, "matmul");  // the MatMul alone is offered too
  }
}

TEST(OpenblasMatMulTest, BiasThatIsNotARowIsNotFused) {
  // [7, 1] broadcasts along the columns, [2, 7, 5] is a full tensor: not a bias row.
  for (const Shape& bias : {Shape{7, 1}, Shape{2, 7, 5}}) {
    EXPECT_FALSE(RuleOffers(MatMulAddGraph(bias), "openblas", "matmul_bias"))
        << ShapeToString(bias);
  }
  // A non-constant bias is not fused either.
  GraphBuilder b("input_bias");
  ValueId x = b.Input("x", DType::kFloat32, {7, 13});
  ValueId y = b.Node("MatMul", {x, b.RandomNormal("w", {13, 5}, 1.0f)});
  b.Output(b.Node("Add", {y, b.Input("bias", DType::kFloat32, {5})}));
  EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(b)), "openblas", "matmul_bias"));
}

TEST(OpenblasMatMulTest, RejectsNonFloat32) {
  GraphBuilder b("int_matmul");
  ValueId x = b.Input("a", DType::kInt32, {4, 3});
  ValueId y = b.Input("b", DType::kInt32, {3, 2});
  b.Output(b.Node("MatMul", {x, y}));
  EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(b)), "openblas", "matmul"));
}

TEST(OpenblasGemmTest, FlagsAndBroadcastC) {
  for (const GemmCase& c : GemmCases()) {
    SCOPED_TRACE(c.ToString());
    ExpectRuleMatches(GemmGraph(c), "gemm");
  }
}

}  // namespace
}  // namespace collage::testing
