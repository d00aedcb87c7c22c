// MatMul/Gemm, pooling, eltwise, binary and normalization on the oneDNN backend: every
// candidate against the reference kernels.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend_test_util.h"
#include "collage/session.h"
#include "session/session_access.h"

namespace collage::testing {
namespace {

TEST(OnednnMatmul, BatchedBroadcastWithBiasAndActivation) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{5, 7}, {7, 3}}, {{2, 3, 5, 8}, {8, 6}}, {{4, 1, 6, 5}, {3, 5, 2}}, {{1, 9, 16}, {2, 16, 4}}};
  for (const auto& [a, w] : cases) {
    for (bool constant : {true, false}) {
      GraphBuilder b("matmul");
      ValueId x = b.Input("x", DType::kFloat32, a);
      ValueId y = constant ? b.RandomNormal("w", w, 0.3f) : b.Input("w", DType::kFloat32, w);
      ValueId m = b.Node("MatMul", {x, y});
      ValueId bias = b.RandomNormal("bias", {b.dim(m, -1)}, 0.3f);
      b.Output(b.Node("Tanh", {b.Node("Add", {m, bias})}));
      Graph g = BuildOrFail(std::move(b));
      // Reductions of up to 16 terms: float32 sums in another order.
      auto offered = CheckAllCandidates(g, "onednn", 1e-4);
      EXPECT_TRUE(Offers(offered, "matmul"));
      EXPECT_TRUE(Offers(offered, "matmul_bias"));
      EXPECT_TRUE(Offers(offered, "matmul_bias_act"));
    }
  }
}

TEST(OnednnMatmul, BiasAndSiluFuseAsOnePrimitive) {
  GraphBuilder b("matmul_silu");
  ValueId x = b.Input("x", DType::kFloat32, {2, 7, 16});
  ValueId m = b.Node("MatMul", {x, b.RandomNormal("w", {16, 12}, 0.3f)});
  ValueId y = b.Node("Add", {m, b.RandomNormal("bias", {12}, 0.3f)});
  b.Output(b.Node("Mul", {y, b.Node("Sigmoid", {y})}));
  Graph g = BuildOrFail(std::move(b));
  auto offered = CheckAllCandidates(g, "onednn", 1e-4);
  ExpectRuleMatches(g, "onednn", "matmul_bias_act", 4);  // MatMul, Add, Sigmoid, Mul
  EXPECT_TRUE(Offers(offered, "matmul_bias"));
}

// A Linear layer then GELU in its erf form, as exporters write it; `variant` commutes
// operands, scales by 1/sqrt(2) instead of dividing by sqrt(2), or spoils a constant.
Graph LinearGeluGraph(const std::string& variant) {
  GraphBuilder b("linear_gelu");
  ValueId x = b.Input("x", DType::kFloat32, {2, 5, 16});
  ValueId m = b.Node("MatMul", {x, b.RandomNormal("w", {16, 24}, 0.3f)});
  ValueId y = b.Node("Add", {m, b.RandomNormal("bias", {24}, 0.3f)});
  const bool mul = variant == "mul_by_rsqrt2";
  ValueId s =
      b.Node(mul ? "Mul" : "Div", {y, b.Scalar<float>("c", mul                  ? 0.70710677f
                                                           : variant == "wrong" ? 2.0f
                                                                                : 1.4142135f)});
  ValueId e = b.Node("Erf", {s});
  ValueId one = b.Scalar<float>("one", 1.0f);
  ValueId a = variant == "commuted" ? b.Node("Add", {one, e}) : b.Node("Add", {e, one});
  ValueId p = variant == "commuted" ? b.Node("Mul", {a, y}) : b.Node("Mul", {y, a});
  ValueId half = b.Scalar<float>("half", 0.5f);
  b.Output(variant == "commuted" ? b.Node("Mul", {half, p}) : b.Node("Mul", {p, half}));
  return BuildOrFail(std::move(b));
}

TEST(OnednnMatmul, BiasAndGeluFuseAsOnePrimitive) {
  for (const std::string variant : {"pytorch", "commuted", "mul_by_rsqrt2", "wrong"}) {
    SCOPED_TRACE(variant);
    Graph g = LinearGeluGraph(variant);
    CheckAllCandidates(g, "onednn", 1e-4);
    // MatMul, bias Add and GELU's five ops in one group; never with a wrong constant.
    std::vector<Candidate> fused = CandidatesOf(g, "onednn", "matmul_bias_act");
    if (variant == "wrong") {
      EXPECT_TRUE(fused.empty());
    } else {
      ExpectRuleMatches(g, "onednn", "matmul_bias_act", 7);
    }
  }
}

TEST(OnednnGemm, TransposeFlagsAlphaBetaAndBroadcastC) {
  const std::vector<Shape> c_shapes = {{}, {6}, {1, 6}, {4, 1}, {4, 6}};
  for (int trans_a : {0, 1}) {
    for (int trans_b : {0, 1}) {
      for (const Shape& c : c_shapes) {
        GraphBuilder b("gemm");
        ValueId x = b.Input("a", DType::kFloat32, trans_a ? Shape{5, 4} : Shape{4, 5});
        ValueId w = b.RandomNormal("b", trans_b ? Shape{6, 5} : Shape{5, 6}, 0.3f);
        std::vector<ValueId> in = {x, w};
        if (!c.empty()) in.push_back(b.RandomNormal("c", c, 0.3f));
        ValueId y = b.Node("Gemm", in, {{"transA", trans_a}, {"transB", trans_b}, {"alpha", 0.7f}, {"beta", 1.5f}});
        b.Output(b.Node("Relu", {y}));
        Graph g = BuildOrFail(std::move(b));
        auto offered = CheckAllCandidates(g, "onednn");
        EXPECT_TRUE(Offers(offered, "gemm"));
        EXPECT_TRUE(Offers(offered, "gemm_act"));
      }
    }
  }
  // B as a graph input, transposed, and C as a graph input with beta 1.
  GraphBuilder b("gemm_inputs");
  ValueId x = b.Input("a", DType::kFloat32, {3, 4});
  ValueId w = b.Input("b", DType::kFloat32, {5, 4});
  ValueId c = b.Input("c", DType::kFloat32, {5});
  b.Output(b.Node("Gemm", {x, w, c}, {{"transB", 1}}));
  EXPECT_TRUE(Offers(CheckAllCandidates(BuildOrFail(std::move(b)), "onednn"), "gemm"));
}

TEST(OnednnPooling, MaxAverageGlobal) {
  struct Case {
    std::string op;
    NamedAttributes attrs;
  };
  const std::vector<Case> cases = {
      {"MaxPool", {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}},
      {"MaxPool", {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"ceil_mode", 1}}},
      {"MaxPool", {{"kernel_shape", {2, 2}}, {"dilations", {2, 2}}}},
      {"AveragePool", {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}, {"count_include_pad", 1}}},
      {"AveragePool", {{"kernel_shape", {3, 2}}, {"strides", {2, 2}}, {"pads", {1, 0, 1, 1}}}},
      {"AveragePool", {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"ceil_mode", 1}}},
      {"AveragePool", {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"auto_pad", "SAME_UPPER"}}},
      {"GlobalAveragePool", {}},
      {"GlobalMaxPool", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    GraphBuilder b("pool");
    ValueId x = b.Input("x", DType::kFloat32, {2, 32, 10, 9});
    b.Output(b.Node(c.op, {x}, c.attrs));
    auto offered = CheckAllCandidates(BuildOrFail(std::move(b)), "onednn");
    EXPECT_EQ(offered.size(), 2u);  // plain and blocked
  }
}

TEST(OnednnPooling, MaxPoolWithIndicesIsNotOffered) {
  GraphBuilder b("pool_indices");
  ValueId x = b.Input("x", DType::kFloat32, {1, 16, 8, 8});
  auto outs = b.NodeMulti("MaxPool", {x}, 2, {{"kernel_shape", {2, 2}}});
  b.Output(outs[0]);
  b.Output(outs[1]);
  Graph g = BuildOrFail(std::move(b));
  EXPECT_TRUE(EnumerateCandidates(g, BackendNamed("onednn").rules()).empty());
}

TEST(OnednnEltwise, ActivationsAndBinaryBroadcast) {
  for (const std::string op : {"Relu", "Sigmoid", "Tanh", "Elu", "LeakyRelu", "HardSwish", "Exp", "Abs",
                               "Sqrt", "Log", "Softplus", "Neg", "Reciprocal"}) {
    SCOPED_TRACE(op);
    GraphBuilder b("eltwise");
    ValueId x = b.Input("x", DType::kFloat32, {2, 16, 5, 5});
    b.Output(b.Node(op, {x}));
    auto offered = CheckAllCandidates(BuildOrFail(std::move(b)), "onednn", 1e-4, /*positive=*/op == "Log" || op == "Sqrt" || op == "Reciprocal");
    EXPECT_TRUE(Offers(offered, "eltwise"));
  }
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 16, 4, 4}, {2, 16, 4, 4}},
      {{2, 16, 4, 4}, {16, 1, 1}},
      {{1, 4}, {3, 1, 4}},
      {{3, 5}, {}},
      // A squeeze-and-excitation scale: the blocked variant may take it where oneDNN has an
      // optimized implementation (CheckAllCandidates runs whatever is offered).
      {{1, 32, 7, 7}, {1, 32, 1, 1}},
      {{2, 16, 4, 4}, {2, 16, 1, 1}}};
  for (const std::string op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    for (const auto& [sa, sb] : shapes) {
      SCOPED_TRACE(op + " " + ShapeToString(sa) + " " + ShapeToString(sb));
      GraphBuilder b("binary");
      ValueId x = b.Input("x", DType::kFloat32, sa);
      ValueId y = b.Input("y", DType::kFloat32, sb);
      b.Output(b.Node("Relu", {b.Node(op, {x, y})}));
      Graph g = BuildOrFail(std::move(b));
      auto offered = CheckAllCandidates(g, "onednn", 1e-4, /*positive=*/op == "Div");
      // src0 must have the output's shape: a Sub/Div whose first operand broadcasts is refused.
      const bool swappable = op == "Add" || op == "Mul" || op == "Max" || op == "Min";
      const bool expected = sa.size() >= sb.size() || swappable;
      EXPECT_EQ(Offers(offered, "binary_act"), expected);
    }
  }
}

TEST(OnednnEltwise, BinaryOfOneValueWithItself) {
  for (const std::string op : {"Add", "Sub", "Mul", "Max"}) {
    SCOPED_TRACE(op);
    GraphBuilder b("binary_self");
    ValueId x = b.Node("Relu", {b.Input("x", DType::kFloat32, {1, 32, 6, 6})});
    b.Output(b.Node(op, {x, x}));
    auto offered = CheckAllCandidates(BuildOrFail(std::move(b)), "onednn", 1e-5);
    EXPECT_TRUE(Offers(offered, "binary"));
  }
}

TEST(OnednnNorm, SoftmaxLayerNormBatchNorm) {
  for (int64_t opset : {11, 13}) {
    for (int64_t axis : {-1, 1}) {
      GraphBuilder b("softmax", opset);
      ValueId x = b.Input("x", DType::kFloat32, {2, 3, 7});
      b.Output(b.Node("Softmax", {x}, {{"axis", axis}}));
      EXPECT_TRUE(Offers(CheckAllCandidates(BuildOrFail(std::move(b)), "onednn"), "softmax"));
    }
  }
  {
    GraphBuilder b("layernorm");
    ValueId x = b.Input("x", DType::kFloat32, {2, 5, 32});
    ValueId s = b.RandomNormal("s", {32}, 0.5f, 1.0f);
    ValueId bias = b.RandomNormal("b", {32}, 0.5f);
    b.Output(b.Node("LayerNormalization", {x, s, bias}, {{"axis", -1}, {"epsilon", 1e-5f}}));
    EXPECT_TRUE(Offers(CheckAllCandidates(BuildOrFail(std::move(b)), "onednn"), "layer_norm"));
  }
  {
    GraphBuilder b("batchnorm");
    ValueId x = b.Input("x", DType::kFloat32, {2, 24, 5, 5});
    ValueId s = b.RandomNormal("s", {24}, 0.5f, 1.0f);
    ValueId bias = b.RandomNormal("b", {24}, 0.5f);
    ValueId mean = b.RandomNormal("m", {24}, 0.5f);
    ValueId var = b.RandomUniform("v", {24}, 0.5f, 2.0f);
    b.Output(b.Node("BatchNormalization", {x, s, bias, mean, var}, {{"epsilon", 1e-5f}}));
    auto offered = CheckAllCandidates(BuildOrFail(std::move(b)), "onednn");
    EXPECT_TRUE(Offers(offered, "batch_norm"));
    EXPECT_TRUE(Offers(offered, "batch_norm_blocked"));
  }
}

}  // namespace
}  // namespace collage::testing

namespace collage::testing {
namespace {

// Products with an empty dimension (M, N or K = 0): oneDNN's primitives divide by dims when
// they plan their work, so oneDNN offers no candidate for them and a session on oneDNN runs
// them elsewhere, giving the empty output (or, K = 0, zeros) the reference kernels give.
TEST(OnednnOpsTest, ProductsWithAnEmptyDimensionAreLeftToOtherBackends) {
  struct Case {
    Shape a, b;
  };
  for (const Case& c : {Case{{0, 4}, {4, 3}}, Case{{2, 4}, {4, 0}}, Case{{2, 0}, {0, 3}}}) {
    SCOPED_TRACE(fmt::format("{} x {}", fmt::join(c.a, "x"), fmt::join(c.b, "x")));
    GraphBuilder b("empty_product");
    ValueId a = b.Input("a", DType::kFloat32, c.a);
    ValueId w = b.RandomNormal("w", c.b, 1.0f);
    b.Output(b.Node("MatMul", {a, w}), "y");
    const Graph graph = BuildOrFail(std::move(b));
    EXPECT_TRUE(EnumerateCandidates(graph, BackendNamed("onednn").rules()).empty());
    SessionOptions options;
    options.backend = "onednn";
    auto session = SessionAccess::FromGraph(graph, options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto out = (*session)->Run({{"a", Tensor(DType::kFloat32, c.a)}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const Tensor& y = out->at("y");
    EXPECT_EQ(y.shape(), (Shape{c.a[0], c.b[1]}));
    for (float value : y.ToVector<float>()) EXPECT_EQ(value, 0.0f);
  }
}

}  // namespace
}  // namespace collage::testing
