// The OpenBLAS backend's MatMul, MatMul + bias and Gemm rules: every candidate a rule offers
// is compiled through a KernelRunner and compared with the reference kernels. Tolerance
// 1e-4 (normalized): reductions here are at most 96 long, where float32 rounding stays
// around 1e-6.
#include <gtest/gtest.h>

#include <cblas.h>

#include "ir/graph_builder.h"
#include "native_test_util.h"
#include "pattern/rule.h"

namespace collage::testing {
namespace {

const Backend& Openblas() {
  const Backend* backend = BackendRegistry::Global().Find("openblas");
  EXPECT_NE(backend, nullptr);
  return *backend;
}

std::vector<Candidate> Offered(const Graph& graph, const std::string& rule) {
  std::vector<Candidate> out;
  for (Candidate& c : EnumerateCandidates(graph, Openblas().rules())) {
    if (c.rule == rule) out.push_back(std::move(c));
  }
  return out;
}

// `rule` offers exactly one candidate on `graph`, and it matches the reference.
void ExpectRuleMatches(const Graph& graph, const std::string& rule) {
  std::vector<Candidate> candidates = Offered(graph, rule);
  ASSERT_EQ(candidates.size(), 1u) << "rule '" << rule << "'";
  CompileRequest request = CompileRequest::For(graph, candidates[0].nodes, rule, 2);
  const std::string what = DescribeGroup("openblas", request);
  auto runner = KernelRunner::Create(Openblas(), request, BackendRegistry::Global());
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  const std::vector<Tensor> inputs = RandomInputs(request, 11);
  auto got = (*runner)->Run(inputs);
  ASSERT_TRUE(got.ok()) << what << ": " << got.status().ToString();
  auto ref = RunReferenceGroup(request, inputs);
  ASSERT_TRUE(ref.ok()) << what << ": " << ref.status().ToString();
  ExpectClose(*got, *ref, 1e-4, what);
}

Graph Build(GraphBuilder&& b) {
  StatusOr<Graph> graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(*graph) : Graph();
}

// MatMul of two inputs, or of an input by a constant when b_constant.
Graph MatMulGraph(const Shape& a, const Shape& b, bool b_constant = false) {
  GraphBuilder builder("matmul");
  ValueId x = builder.Input("a", DType::kFloat32, a);
  ValueId y = b_constant ? builder.RandomNormal("w", b, 1.0f) : builder.Input("b", DType::kFloat32, b);
  builder.Output(builder.Node("MatMul", {x, y}));
  return Build(std::move(builder));
}

TEST(OpenblasBackendTest, IsTheOpenmpBuildAndNamesItsCore) {
  // 2 = OpenMP (0 sequential, 1 pthreads): the OpenMP build must win over Debian's default
  // pthread build, which has the same soname.
  EXPECT_EQ(openblas_get_parallel(), 2);
  const std::string version = Openblas().version();
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
    GraphBuilder b("linear");
    ValueId x = b.Input("x", DType::kFloat32, {2, 7, 13});
    ValueId y = b.Node("MatMul", {x, b.RandomNormal("w", {13, 5}, 1.0f)});
    b.Output(b.Node("Add", {y, b.RandomNormal("bias", bias, 1.0f)}));
    Graph graph = Build(std::move(b));
    ExpectRuleMatches(graph, "matmul_bias");
    ExpectRuleMatches(graph, "matmul");  // the MatMul alone is offered too
  }
}

TEST(OpenblasMatMulTest, BiasThatIsNotARowIsNotFused) {
  // [7, 1] broadcasts along the columns, [2, 7, 5] is a full tensor: not a bias row.
  for (const Shape& bias : {Shape{7, 1}, Shape{2, 7, 5}}) {
    GraphBuilder b("not_a_bias");
    ValueId x = b.Input("x", DType::kFloat32, {2, 7, 13});
    ValueId y = b.Node("MatMul", {x, b.RandomNormal("w", {13, 5}, 1.0f)});
    b.Output(b.Node("Add", {y, b.RandomNormal("bias", bias, 1.0f)}));
    EXPECT_TRUE(Offered(Build(std::move(b)), "matmul_bias").empty()) << ShapeToString(bias);
  }
  // A non-constant bias is not fused either.
  GraphBuilder b("input_bias");
  ValueId x = b.Input("x", DType::kFloat32, {7, 13});
  ValueId y = b.Node("MatMul", {x, b.RandomNormal("w", {13, 5}, 1.0f)});
  b.Output(b.Node("Add", {y, b.Input("bias", DType::kFloat32, {5})}));
  EXPECT_TRUE(Offered(Build(std::move(b)), "matmul_bias").empty());
}

TEST(OpenblasMatMulTest, RejectsNonFloat32) {
  GraphBuilder b("int_matmul");
  ValueId x = b.Input("a", DType::kInt32, {4, 3});
  ValueId y = b.Input("b", DType::kInt32, {3, 2});
  b.Output(b.Node("MatMul", {x, y}));
  EXPECT_TRUE(Offered(Build(std::move(b)), "matmul").empty());
}

TEST(OpenblasGemmTest, FlagsAndBroadcastC) {
  struct Case { int trans_a, trans_b; float alpha, beta; Shape c; bool c_constant; };
  const Case cases[] = {
      {0, 0, 1.0f, 1.0f, {6, 5}, true},
      {1, 0, 0.5f, 2.0f, {5}, true},        // C a row
      {0, 1, 1.0f, 1.0f, {6, 1}, true},     // C a column
      {1, 1, -1.5f, 0.25f, {}, true},       // C a scalar
      {0, 1, 1.0f, 1.0f, {1, 1}, false},    // C an input
      {0, 0, 2.0f, 1.0f, {6, 5}, false},
      {0, 0, 1.0f, 0.0f, {6, 5}, true},     // beta 0 ignores C
      {1, 0, 1.0f, 1.0f, {0}, false},       // no C (opset >= 11)
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "transA " << c.trans_a << " transB " << c.trans_b
                                      << " alpha " << c.alpha << " beta " << c.beta << " C "
                                      << ShapeToString(c.c));
    GraphBuilder b("gemm");
    const int64_t m = 6, n = 5, k = 9;
    ValueId a = b.Input("a", DType::kFloat32, c.trans_a ? Shape{k, m} : Shape{m, k});
    ValueId w = b.RandomNormal("b", c.trans_b ? Shape{n, k} : Shape{k, n}, 1.0f);
    std::vector<ValueId> inputs = {a, w};
    if (c.c != Shape{0}) {
      inputs.push_back(c.c_constant ? b.RandomNormal("c", c.c, 1.0f)
                                    : b.Input("c", DType::kFloat32, c.c));
    }
    b.Output(b.Node("Gemm", inputs,
                    {{"transA", c.trans_a}, {"transB", c.trans_b}, {"alpha", c.alpha},
                     {"beta", c.beta}}));
    ExpectRuleMatches(Build(std::move(b)), "gemm");
  }
}

}  // namespace
}  // namespace collage::testing
