// MKL's products in bf16 (cblas_gemm_bf16bf16f32), where the CPU computes bf16 natively:
// only the MatMul and Gemm rules offer it; every offer matches the float32 reference kernels
// within a bf16 group's bound (GroupErrorBound), with constant and computed operands, batches,
// bias rows and every Gemm form; and an operand is rounded to the nearest bfloat16, ties to
// even, both in the vector loop and in its tail.
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "backend_test_util.h"
#include "collage/available_backends.h"

namespace collage::testing {
namespace {

bool MklOffersBfloat16() {
  if (GlobalBackendRegistry().Find("mkl") == nullptr) return false;
  const Rule* matmul = BackendNamed("mkl").rules().FindRule("matmul");
  return matmul != nullptr && matmul->Computes(Precision::kBfloat16);
}

// Every bf16 offer of `graph` compiled in bf16 and compared at 1 and 2 threads; the rules
// offered.
std::set<std::string> CheckBfloat16Candidates(const Graph& graph) {
  return CheckCandidatesIn(Precision::kBfloat16, graph, "mkl", {1, 2});
}

TEST(MklBfloat16, OnlyTheProductsAreOffered) {
  if (GlobalBackendRegistry().Find("mkl") == nullptr) GTEST_SKIP() << "mkl is not built";
  const std::set<std::string> products = {"matmul", "matmul_bias", "gemm"};
  for (const Rule& rule : BackendNamed("mkl").rules().rules()) {
    EXPECT_EQ(rule.Computes(Precision::kBfloat16),
              MklOffersBfloat16() && products.count(rule.name()) != 0)
        << rule.name();
  }
}

TEST(MklBfloat16, MatMulsWithConstantAndComputedOperandsBatchesAndBias) {
  if (!MklOffersBfloat16()) GTEST_SKIP() << "MKL does not compute bf16 natively on this CPU";
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{5, 64}, {64, 48}}, {{2, 7, 96}, {96, 32}}, {{2, 4, 9, 16}, {2, 4, 16, 9}},
      {{3, 1, 6, 8}, {4, 8, 5}}, {{33}, {33, 7}}};
  for (const auto& [a, w] : cases) {
    for (bool constant : {true, false}) {
      GraphBuilder b("matmul_bf16");
      ValueId x = b.Input("x", DType::kFloat32, a);
      ValueId y = constant ? b.RandomNormal("w", w, 0.3f) : b.Input("w", DType::kFloat32, w);
      ValueId m = b.Node("MatMul", {x, y});
      ValueId bias = b.RandomNormal("bias", {b.dim(m, -1)}, 0.3f);
      b.Output(b.Node("Add", {m, bias}));
      const std::set<std::string> offered = CheckBfloat16Candidates(BuildOrFail(std::move(b)));
      EXPECT_TRUE(offered.count("matmul") != 0) << ShapeToString(a) << " x " << ShapeToString(w);
      if (constant && w.size() == 2) {
        EXPECT_TRUE(offered.count("matmul_bias") != 0) << ShapeToString(a);
      }
    }
  }
}

TEST(MklBfloat16, EveryGemmForm) {
  if (!MklOffersBfloat16()) GTEST_SKIP() << "MKL does not compute bf16 natively on this CPU";
  for (const GemmCase& c : GemmCases()) {
    EXPECT_TRUE(CheckBfloat16Candidates(GemmGraph(c)).count("gemm") != 0);
  }
}

// x [1, 38] times the identity: each output is its input rounded to bfloat16 (the products by
// 1 and the sums with zeros are exact). 38 values: two rounds of the 16-wide loop, 6 in the tail.
TEST(MklBfloat16, OperandsRoundToNearestEven) {
  if (!MklOffersBfloat16()) GTEST_SKIP() << "MKL does not compute bf16 natively on this CPU";
  constexpr int64_t kCount = 38;
  const float ulp = std::ldexp(1.0f, -7);  // bfloat16's step at 1
  // Input -> its nearest bfloat16: halfway values go to the even neighbour.
  const std::vector<std::pair<float, float>> cases = {
      {1.0f + ulp / 2, 1.0f},                 // tie, 1 is even
      {1.0f + 3 * ulp / 2, 1.0f + 2 * ulp},   // tie, 1 + 2 ulp is even
      {1.0f + ulp / 2 + ulp / 64, 1.0f + ulp},  // above the tie
      {-(1.0f + 3 * ulp / 2), -(1.0f + 2 * ulp)},
      {3.0f, 3.0f},
      {0.0f, 0.0f}};
  std::vector<float> x(kCount), expected(kCount);
  for (int64_t i = 0; i < kCount; ++i) {
    const auto& [in, out] = cases[static_cast<size_t>(i) % cases.size()];
    x[static_cast<size_t>(i)] = in;
    expected[static_cast<size_t>(i)] = out;
  }
  std::vector<float> identity(kCount * kCount, 0.0f);
  for (int64_t i = 0; i < kCount; ++i) identity[static_cast<size_t>(i * kCount + i)] = 1.0f;
  GraphBuilder b("round_bf16");
  ValueId in = b.Input("x", DType::kFloat32, {1, kCount});
  b.Output(b.Node("MatMul", {in, b.Constant("eye", Shape{kCount, kCount}, identity)}));
  const Graph graph = BuildOrFail(std::move(b));
  const std::vector<Candidate> candidates = CandidatesOf(graph, "mkl", "matmul");
  ASSERT_EQ(candidates.size(), 1u);
  CompileRequest request = CompileRequest::For(graph, candidates[0].nodes, "matmul", 1);
  request.precision = Precision::kBfloat16;
  auto kernel = BackendNamed("mkl").Compile(request);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  auto outputs = RunKernel(**kernel, request, {Tensor::FromVector<float>({1, kCount}, x)});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const float* got = (*outputs)[0].data_as<float>();
  for (int64_t i = 0; i < kCount; ++i) {
    EXPECT_EQ(got[i], expected[static_cast<size_t>(i)]) << "x[" << i << "] = " << x[static_cast<size_t>(i)];
  }
}

}  // namespace
}  // namespace collage::testing
