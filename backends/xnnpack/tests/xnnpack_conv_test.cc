// The `xnnpack` backend's convolution, fully connected and pooling rules: each candidate is
// compiled through a KernelRunner and compared with the reference kernels. Tolerance 1e-4
// normalized (reductions here are at most a few hundred terms).
#include <gtest/gtest.h>

#include "backend_test_util.h"

namespace collage {
namespace {

using namespace collage::testing;

struct ConvCase {
  Shape x;
  Shape w;
  NamedAttributes attrs;
  bool bias = true;
};

Graph ConvGraph(const ConvCase& c, const std::string& op = "Conv", const std::string& act = "") {
  GraphBuilder b("conv");
  ValueId x = b.Input("x", DType::kFloat32, c.x);
  ValueId w = b.RandomNormal("w", c.w, 0.2f);
  std::vector<ValueId> inputs = {x, w};
  if (c.bias) inputs.push_back(b.RandomNormal("b", {c.w[0]}, 0.5f));  // Conv: M = w[0]
  ValueId y = b.Node(op, inputs, c.attrs, "conv");
  if (act == "Relu") y = b.Node("Relu", {y});
  if (act == "Clip") y = b.Node("Clip", {y, b.Scalar("lo", -0.5f), b.Scalar("hi", 0.75f)});
  b.Output(y, "y");
  return BuildOrFail(std::move(b));
}

TEST(XnnpackConvTest, Variants) {
  const std::vector<ConvCase> cases = {
      {{1, 8, 10, 10}, {16, 8, 3, 3}, {{"pads", {1, 1, 1, 1}}}},
      {{2, 8, 11, 9}, {12, 8, 3, 3}, {{"strides", {2, 2}}, {"pads", {0, 1, 1, 2}}}, false},
      {{1, 4, 12, 12}, {6, 4, 3, 3}, {{"dilations", {2, 2}}, {"pads", {2, 2, 2, 2}}}},
      {{1, 8, 9, 9}, {12, 4, 3, 3}, {{"group", 2}, {"pads", {1, 1, 1, 1}}}},
      {{1, 8, 9, 9}, {16, 1, 3, 3}, {{"group", 8}, {"pads", {1, 1, 1, 1}}}},  // depthwise x2
      {{1, 8, 9, 9}, {8, 1, 5, 5}, {{"group", 8}, {"strides", {2, 2}}, {"auto_pad", "SAME_UPPER"}}},
      {{1, 3, 10, 7}, {5, 3, 4, 2}, {{"strides", {2, 1}}, {"auto_pad", "SAME_LOWER"}}},
      {{1, 3, 10, 7}, {5, 3, 3, 3}, {{"auto_pad", "VALID"}}},
      {{1, 16, 7, 7}, {32, 16, 1, 1}, {}},
  };
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(ShapeToString(c.x) + " w=" + ShapeToString(c.w));
    Graph g = ConvGraph(c);
    ExpectRuleMatches(g, "xnnpack", "conv", 1);
  }
}

TEST(XnnpackConvTest, FusedClamps) {
  const ConvCase c = {{1, 8, 10, 10}, {16, 8, 3, 3}, {{"pads", {1, 1, 1, 1}}}};
  ExpectRuleMatches(ConvGraph(c, "Conv", "Relu"), "xnnpack", "conv_relu", 2);
  ExpectRuleMatches(ConvGraph(c, "Conv", "Clip"), "xnnpack", "conv_clip", 2);
  // The unfused conv is offered too, and the clamp alone by the unary rules.
  Graph g = ConvGraph(c, "Conv", "Relu");
  EXPECT_TRUE(RuleOffers(g, "xnnpack", "conv"));
  EXPECT_TRUE(RuleOffers(g, "xnnpack", "unary_nhwc"));
}

TEST(XnnpackConvTest, ConvTranspose) {
  const std::vector<ConvCase> cases = {
      {{1, 8, 5, 5},
       {8, 4, 3, 3},
       {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}, {"output_padding", {1, 1}}}},
      {{1, 8, 5, 6}, {8, 3, 4, 4}, {{"strides", {2, 2}}, {"group", 2}, {"pads", {1, 1, 1, 1}}}},
      {{2, 4, 4, 4}, {4, 2, 3, 3}, {{"dilations", {2, 2}}}, false},
      {{1, 4, 4, 4}, {4, 2, 3, 3}, {{"strides", {2, 2}}, {"auto_pad", "SAME_UPPER"}}},
  };
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(ShapeToString(c.x) + " w=" + ShapeToString(c.w));
    ConvCase no_bias = c;
    no_bias.bias = false;
    Graph g = ConvGraph(no_bias, "ConvTranspose");  // a bias of M = w[1]·group is built below
    if (c.bias) {
      // Bias length is M = w[1] * group.
      int64_t group = 1;
      for (const auto& a : c.attrs) {
        if (a.name == "group") group = std::get<int64_t>(a.value);
      }
      GraphBuilder b("deconv");
      ValueId x = b.Input("x", DType::kFloat32, c.x);
      ValueId w = b.RandomNormal("w", c.w, 0.2f);
      ValueId bias = b.RandomNormal("b", {c.w[1] * group}, 0.5f);
      b.Output(b.Node("ConvTranspose", {x, w, bias}, c.attrs, "deconv"), "y");
      g = BuildOrFail(std::move(b));
    }
    ExpectRuleMatches(g, "xnnpack", "conv_transpose", 1);
  }
}

TEST(XnnpackConvTest, RejectsWhatItCannotRun) {
  // 1-D convolution (3-D input).
  {
    GraphBuilder b;
    ValueId x = b.Input("x", DType::kFloat32, {1, 4, 10});
    b.Output(b.Node("Conv", {x, b.RandomNormal("w", {4, 4, 3}, 0.1f)}), "y");
    Graph g = BuildOrFail(std::move(b));
    EXPECT_FALSE(RuleOffers(g, "xnnpack", "conv"));
    EXPECT_FALSE(RuleOffers(g, "xnnpack_graph", "single"));
  }
  // Non-constant weights.
  {
    GraphBuilder b;
    ValueId x = b.Input("x", DType::kFloat32, {1, 4, 6, 6});
    ValueId w = b.Input("w", DType::kFloat32, {4, 4, 3, 3});
    b.Output(b.Node("Conv", {x, w}), "y");
    Graph g = BuildOrFail(std::move(b));
    EXPECT_FALSE(RuleOffers(g, "xnnpack", "conv"));
  }
  // Negative ConvTranspose padding (output_shape larger than the scatter covers).
  {
    GraphBuilder b;
    ValueId x = b.Input("x", DType::kFloat32, {1, 4, 4, 4});
    b.Output(b.Node("ConvTranspose", {x, b.RandomNormal("w", {4, 2, 3, 3}, 0.1f)},
                    {{"output_shape", {12, 12}}}),
             "y");
    Graph g = BuildOrFail(std::move(b));
    EXPECT_FALSE(RuleOffers(g, "xnnpack", "conv_transpose"));
  }
}

Graph FcGraph(const std::string& op, Shape a_shape, Shape w_shape, NamedAttributes attrs,
              Shape c_shape, const std::string& act = "") {
  GraphBuilder b("fc");
  ValueId a = b.Input("a", DType::kFloat32, a_shape);
  std::vector<ValueId> inputs = {a, b.RandomNormal("w", w_shape, 0.2f)};
  if (!c_shape.empty() || op == "Gemm") {
    if (c_shape != Shape{0}) inputs.push_back(b.RandomNormal("c", c_shape, 1.0f));
  }
  ValueId y = b.Node(op, inputs, attrs, "fc");
  if (act == "Relu") y = b.Node("Relu", {y});
  if (act == "Clip") y = b.Node("Clip", {y, b.Scalar("lo", 0.0f), b.Scalar("hi", 6.0f)});
  b.Output(y, "y");
  return BuildOrFail(std::move(b));
}

TEST(XnnpackFcTest, GemmAndMatMul) {
  ExpectRuleMatches(FcGraph("Gemm", {4, 32}, {16, 32}, {{"transB", 1}}, {16}), "xnnpack", "gemm",
                    1);
  ExpectRuleMatches(FcGraph("Gemm", {3, 32}, {32, 16}, {{"alpha", 0.5f}, {"beta", 2.0f}}, {1, 16}),
                    "xnnpack", "gemm", 1);
  ExpectRuleMatches(FcGraph("Gemm", {3, 32}, {32, 16}, {}, {0}), "xnnpack", "gemm", 1);
  ExpectRuleMatches(FcGraph("Gemm", {1, 20}, {20, 7}, {}, {}), "xnnpack", "gemm", 1);
  ExpectRuleMatches(FcGraph("Gemm", {2, 20}, {7, 20}, {{"transB", 1}}, {7}, "Relu"), "xnnpack",
                    "gemm_relu", 2);
  ExpectRuleMatches(FcGraph("MatMul", {2, 3, 24}, {24, 10}, {}, {}), "xnnpack", "matmul", 1);
  ExpectRuleMatches(FcGraph("MatMul", {24}, {24, 10}, {}, {}), "xnnpack", "matmul", 1);
  ExpectRuleMatches(FcGraph("MatMul", {5, 24}, {24, 10}, {}, {}, "Clip"), "xnnpack", "matmul_clip",
                    2);
}

Graph MatMulBiasGraph(Shape a_shape, Shape bias_shape, bool bias_first, const std::string& act) {
  GraphBuilder b("linear");
  ValueId a = b.Input("a", DType::kFloat32, a_shape);
  ValueId y = b.Node("MatMul", {a, b.RandomNormal("w", {a_shape.back(), 12}, 0.2f)}, {}, "mm");
  ValueId bias = b.RandomNormal("bias", bias_shape, 1.0f);
  y = b.Node("Add", bias_first ? std::vector<ValueId>{bias, y} : std::vector<ValueId>{y, bias});
  if (act == "Relu") y = b.Node("Relu", {y});
  b.Output(y, "y");
  return BuildOrFail(std::move(b));
}

TEST(XnnpackFcTest, MatMulWithBiasAdd) {
  ExpectRuleMatches(MatMulBiasGraph({2, 5, 16}, {12}, false, ""), "xnnpack", "matmul_bias", 2);
  ExpectRuleMatches(MatMulBiasGraph({5, 16}, {1, 12}, true, ""), "xnnpack", "matmul_bias", 2);
  ExpectRuleMatches(MatMulBiasGraph({3, 16}, {12}, true, "Relu"), "xnnpack", "matmul_bias_relu", 3);
  // A bias that varies along M is not a bias vector.
  EXPECT_FALSE(RuleOffers(MatMulBiasGraph({5, 16}, {5, 12}, false, ""), "xnnpack", "matmul_bias"));
  // A bias that broadcasts the output to a larger shape neither.
  EXPECT_FALSE(
      RuleOffers(MatMulBiasGraph({5, 16}, {2, 1, 12}, false, ""), "xnnpack", "matmul_bias"));
}

TEST(XnnpackFcTest, RejectsNonBiasC) {
  // C of shape [M, N] is not a bias vector.
  EXPECT_FALSE(RuleOffers(FcGraph("Gemm", {3, 8}, {8, 4}, {}, {3, 4}), "xnnpack", "gemm"));
  // transA.
  EXPECT_FALSE(
      RuleOffers(FcGraph("Gemm", {8, 3}, {8, 4}, {{"transA", 1}}, {4}), "xnnpack", "gemm"));
  // Batched B.
  GraphBuilder b;
  ValueId a = b.Input("a", DType::kFloat32, {2, 3, 8});
  b.Output(b.Node("MatMul", {a, b.RandomNormal("w", {2, 8, 4}, 0.1f)}), "y");
  EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(b)), "xnnpack", "matmul"));
}

Graph PoolGraph(const std::string& op, Shape x, NamedAttributes attrs) {
  GraphBuilder b("pool");
  ValueId in = b.Input("x", DType::kFloat32, x);
  b.Output(b.Node(op, {in}, attrs, "pool"), "y");
  return BuildOrFail(std::move(b));
}

TEST(XnnpackPoolTest, Pooling) {
  const Shape x = {2, 8, 11, 11};
  ExpectRuleMatches(
      PoolGraph("MaxPool", x,
                {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}),
      "xnnpack", "max_pool", 1);
  ExpectRuleMatches(PoolGraph("MaxPool", x, {{"kernel_shape", {2, 3}}, {"dilations", {2, 2}}}),
                    "xnnpack", "max_pool", 1);
  ExpectRuleMatches(
      PoolGraph("MaxPool", x,
                {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"auto_pad", "SAME_UPPER"}}),
      "xnnpack", "max_pool", 1);
  ExpectRuleMatches(
      PoolGraph("AveragePool", x,
                {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}),
      "xnnpack", "average_pool", 1);
  ExpectRuleMatches(
      PoolGraph("AveragePool", x,
                {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}, {"count_include_pad", 1}}),
      "xnnpack", "average_pool", 1);
  // ceil_mode that does not change the output size.
  ExpectRuleMatches(PoolGraph("MaxPool", {1, 4, 9, 9},
                              {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"ceil_mode", 1}}),
                    "xnnpack", "max_pool", 1);
  // Strides larger than the window; asymmetric padding (averages count in-image elements).
  ExpectRuleMatches(PoolGraph("MaxPool", x, {{"kernel_shape", {2, 2}}, {"strides", {3, 3}}}),
                    "xnnpack", "max_pool", 1);
  ExpectRuleMatches(
      PoolGraph("AveragePool", x,
                {{"kernel_shape", {3, 2}}, {"strides", {1, 3}}, {"pads", {1, 0, 2, 1}}}),
      "xnnpack", "average_pool", 1);
  ExpectRuleMatches(PoolGraph("GlobalAveragePool", x, {}), "xnnpack", "global_average_pool", 1);
}

TEST(XnnpackPoolTest, RejectsMismatchedSemantics) {
  // count_include_pad = 1 with padding: XNNPACK divides by the in-image count.
  EXPECT_FALSE(RuleOffers(
      PoolGraph("AveragePool", {1, 4, 8, 8},
                {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}, {"count_include_pad", 1}}),
      "xnnpack", "average_pool"));
  // ceil_mode adding a window.
  EXPECT_FALSE(
      RuleOffers(PoolGraph("MaxPool", {1, 4, 10, 10},
                           {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"ceil_mode", 1}}),
                 "xnnpack", "max_pool"));
  // 1-D pooling.
  EXPECT_FALSE(
      RuleOffers(PoolGraph("MaxPool", {1, 4, 10}, {{"kernel_shape", {3}}}), "xnnpack", "max_pool"));
}

}  // namespace
}  // namespace collage
