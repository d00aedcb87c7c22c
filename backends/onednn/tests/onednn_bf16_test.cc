// oneDNN's convolutions and matmuls in bf16, where the CPU computes it: every offer against
// the float32 reference kernels within a bf16 group's bound (GroupErrorBound), each in the
// layouts and forms the float32 rules take; where the CPU does not, no rule offers bf16.
#include "backend_test_util.h"

namespace collage::testing {
namespace {

bool OffersBfloat16() {
  const Rule* conv = BackendNamed("onednn").rules().FindRule("conv");
  return conv != nullptr && conv->Computes(Precision::kBfloat16);
}

// Every bf16 offer of `graph` compiled in bf16 and compared; the rules offered. Shapes oneDNN
// runs in bf16 only by its reference implementation are not offered (Rule::WhereIn): every
// offer compiles.
std::set<std::string> CheckBfloat16Candidates(const Graph& graph) {
  return CheckCandidatesIn(Precision::kBfloat16, graph, "onednn");
}

TEST(OnednnBfloat16, OnlyConvolutionsAndMatmulsAreOfferedAndOnlyWhereTheCpuComputesIt) {
  for (const Rule& rule : BackendNamed("onednn").rules().rules()) {
    const bool bf16 = rule.Computes(Precision::kBfloat16);
    const bool product =
        rule.name().rfind("conv", 0) == 0 && rule.name().rfind("conv_transpose", 0) != 0;
    const bool matmul = rule.name().rfind("matmul", 0) == 0 || rule.name().rfind("gemm", 0) == 0;
    EXPECT_EQ(bf16, OffersBfloat16() && (product || matmul)) << rule.name();
  }
}

TEST(OnednnBfloat16, ConvolutionsInEveryLayoutWithTheirEpilogues) {
  if (!OffersBfloat16()) GTEST_SKIP() << "oneDNN does not compute bf16 natively on this CPU";
  struct Case {
    Shape x, w;
    int64_t group;
  };
  const std::vector<Case> cases = {{{1, 16, 12, 12}, {32, 16, 3, 3}, 1},
                                   {{1, 32, 10, 10}, {32, 1, 3, 3}, 32},  // depthwise
                                   {{2, 16, 9, 9}, {16, 4, 1, 1}, 4},     // grouped 1x1
                                   {{1, 8, 20}, {16, 8, 5}, 1}};          // 1-D
  for (const Case& c : cases) {
    GraphBuilder b("conv_bf16");
    ValueId x = b.Input("x", DType::kFloat32, c.x);
    ValueId w = b.RandomNormal("w", c.w, 0.3f);
    ValueId bias = b.RandomNormal("bias", {c.w[0]}, 0.3f);
    const int64_t pad = c.w.back() / 2;
    std::vector<int64_t> pads(2 * (c.x.size() - 2), pad);
    ValueId conv = b.Node("Conv", {x, w, bias}, {{"pads", pads}, {"group", c.group}});
    ValueId residual = b.Input("r", DType::kFloat32, b.shape(conv));
    b.Output(b.Node("Relu", {b.Node("Add", {conv, residual})}));
    Graph g = BuildOrFail(std::move(b));
    const std::set<std::string> offered = CheckBfloat16Candidates(g);
    EXPECT_FALSE(offered.empty()) << ShapeToString(c.x);
  }
}

TEST(OnednnBfloat16, MatmulsWithConstantAndComputedOperandsAndGemmForms) {
  if (!OffersBfloat16()) GTEST_SKIP() << "oneDNN does not compute bf16 natively on this CPU";
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{5, 64}, {64, 48}}, {{2, 7, 96}, {96, 32}}, {{2, 4, 9, 16}, {2, 4, 16, 9}}};
  for (const auto& [a, w] : cases) {
    for (bool constant : {true, false}) {
      GraphBuilder b("matmul_bf16");
      ValueId x = b.Input("x", DType::kFloat32, a);
      ValueId y = constant ? b.RandomNormal("w", w, 0.3f) : b.Input("w", DType::kFloat32, w);
      ValueId m = b.Node("MatMul", {x, y});
      ValueId bias = b.RandomNormal("bias", {b.dim(m, -1)}, 0.3f);
      b.Output(b.Node("Tanh", {b.Node("Add", {m, bias})}));
      Graph g = BuildOrFail(std::move(b));
      const std::set<std::string> offered = CheckBfloat16Candidates(g);
      EXPECT_TRUE(offered.count("matmul") != 0) << ShapeToString(a) << " x " << ShapeToString(w);
      EXPECT_TRUE(offered.count("matmul_bias_act") != 0) << ShapeToString(a);
    }
  }
  // Every Gemm form; oneDNN 2.6 runs some of these small ones (K = 9) in bf16 only by its
  // reference implementation, and those are not offered.
  for (const GemmCase& c : GemmCases()) CheckBfloat16Candidates(GemmGraph(c));
  // A linear layer's Gemm (transB, a bias row), as exporters write it.
  GraphBuilder b("gemm_bf16");
  ValueId x = b.Input("x", DType::kFloat32, {8, 128});
  ValueId w = b.RandomNormal("w", {64, 128}, 0.1f);
  ValueId bias = b.RandomNormal("bias", {64}, 0.3f);
  b.Output(b.Node("Gemm", {x, w, bias}, {{"transB", int64_t{1}}}));
  EXPECT_TRUE(CheckBfloat16Candidates(BuildOrFail(std::move(b))).count("gemm") != 0);
}

}  // namespace
}  // namespace collage::testing
