// The arithmetic `collage info` and the model summary report: a multiply-add is two
// operations, every other op one per output element.
#include "ops/flops.h"

#include <gtest/gtest.h>

#include "ops/graph_builder.h"

namespace collage {
namespace {

Graph BuildOrDie(GraphBuilder&& builder) {
  auto graph = std::move(builder).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(*graph) : Graph();
}

TEST(FlopsTest, ProductsCountTwoPerMultiplyAdd) {
  GraphBuilder b("products");
  ValueId x = b.Input("x", DType::kFloat32, {1, 2, 5, 5});
  // 3 output channels of 5x5, each a sum over 2 channels of 3x3.
  ValueId conv = b.Node("Conv", {x, b.RandomNormal("w", {3, 2, 3, 3}, 1.0f)},
                        {{"pads", {1, 1, 1, 1}}}, "conv");
  b.Output(conv, "conv_out");
  ValueId m = b.Input("m", DType::kFloat32, {2, 3});
  b.Output(b.Node("MatMul", {m, b.RandomNormal("k", {3, 4}, 1.0f)}, {}, "matmul"), "mm");
  // transA: A is [k=6, m=5], so each of the 5x4 outputs sums 6 products.
  ValueId a = b.Input("a", DType::kFloat32, {6, 5});
  b.Output(b.Node("Gemm", {a, b.RandomNormal("g", {6, 4}, 1.0f)}, {{"transA", 1}}, "gemm"),
           "gemm_out");
  b.Output(b.Node("Relu", {m}, {}, "relu"), "r");
  Graph g = BuildOrDie(std::move(b));
  ASSERT_EQ(g.num_nodes(), 4);
  EXPECT_DOUBLE_EQ(NodeFlops(g, g.node(0)), 2.0 * 75 * 2 * 9);
  EXPECT_DOUBLE_EQ(NodeFlops(g, g.node(1)), 2.0 * 8 * 3);
  EXPECT_DOUBLE_EQ(NodeFlops(g, g.node(2)), 2.0 * 20 * 6);
  EXPECT_DOUBLE_EQ(NodeFlops(g, g.node(3)), 6.0);
  EXPECT_DOUBLE_EQ(GraphFlops(g), 2700.0 + 48.0 + 240.0 + 6.0);
  ModelSummary summary = SummarizeGraph(g);
  EXPECT_EQ(summary.num_nodes, 4);
  EXPECT_EQ(summary.op_counts["Gemm"], 1);
  EXPECT_DOUBLE_EQ(summary.flops, GraphFlops(g));
}

}  // namespace
}  // namespace collage
