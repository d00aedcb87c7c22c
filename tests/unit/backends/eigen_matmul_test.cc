// The Eigen backend's MatMul and Gemm rules (Eigen matrix products over row-major maps),
// compared with the reference kernels through a KernelRunner. Tolerance 1e-4 (normalized):
// reductions are at most 96 long.
#include <gtest/gtest.h>

#include "ir/graph_builder.h"
#include "native_test_util.h"
#include "pattern/rule.h"

namespace collage::testing {
namespace {

const Backend& EigenBackend() {
  const Backend* backend = BackendRegistry::Global().Find("eigen");
  EXPECT_NE(backend, nullptr);
  return *backend;
}

std::vector<Candidate> Offered(const Graph& graph, const std::string& rule) {
  std::vector<Candidate> out;
  for (Candidate& c : EnumerateCandidates(graph, EigenBackend().rules())) {
    if (c.rule == rule) out.push_back(std::move(c));
  }
  return out;
}

void ExpectRuleMatches(const Graph& graph, const std::string& rule) {
  std::vector<Candidate> candidates = Offered(graph, rule);
  ASSERT_EQ(candidates.size(), 1u) << "rule '" << rule << "'";
  CompileRequest request = CompileRequest::For(graph, candidates[0].nodes, rule, 2);
  const std::string what = DescribeGroup("eigen", request);
  auto runner = KernelRunner::Create(EigenBackend(), request, BackendRegistry::Global());
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  const std::vector<Tensor> inputs = RandomInputs(request, 3);
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

TEST(EigenBackendTest, VersionNamesReleaseAndSimd) {
  const std::string version = EigenBackend().version();
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
    ExpectRuleMatches(Build(std::move(b)), "matmul");
  }
}

TEST(EigenMatMulTest, RejectsNonFloat32) {
  GraphBuilder b("int_matmul");
  ValueId x = b.Input("a", DType::kInt32, {4, 3});
  ValueId y = b.Input("b", DType::kInt32, {3, 2});
  b.Output(b.Node("MatMul", {x, y}));
  EXPECT_TRUE(Offered(Build(std::move(b)), "matmul").empty());
}

TEST(EigenGemmTest, FlagsAndBroadcastC) {
  struct Case { int trans_a, trans_b; float alpha, beta; Shape c; bool c_constant; };
  const Case cases[] = {
      {0, 0, 1.0f, 1.0f, {6, 5}, true},
      {1, 0, 0.5f, 2.0f, {5}, true},
      {0, 1, 1.0f, 1.0f, {6, 1}, true},
      {1, 1, -1.5f, 0.25f, {}, true},
      {0, 1, 1.0f, 1.0f, {1, 1}, false},
      {0, 0, 2.0f, 1.0f, {6, 5}, false},
      {0, 0, 1.0f, 0.0f, {6, 5}, true},
      {1, 0, 1.0f, 1.0f, {0}, false},  // no C
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
