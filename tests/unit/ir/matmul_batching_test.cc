// Small MatMuls batched: siblings of one input merged into a wider product, products of one
// weight over independent inputs stacked into a taller one — each with the graph's outputs
// unchanged (reference kernels, before and after) — and left alone where the products have
// many rows, depend on one another or have no constant weight.
#include "ir/matmul_batching.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/graph_builder.h"
#include "simplified_outputs.h"
#include "zoo/zoo.h"

namespace collage {
namespace {

using simplify_test::Count;
using simplify_test::SimplifyAndCompare;

TEST(MatMulBatchingTest, SiblingsOfOneInputMergeIntoOneProduct) {
  // A vector, a row and a batch of rows; the Split written for each opset's form.
  for (int64_t opset : {11, 17}) {
    for (const Shape& shape : std::vector<Shape>{{64}, {1, 64}, {2, 1, 64}}) {
      SCOPED_TRACE("opset " + std::to_string(opset) + " input " + ShapeToString(shape));
      GraphBuilder b("siblings", opset, 1);
      ValueId a = b.Node("Relu", {b.Input("x", DType::kFloat32, shape)});
      ValueId p1 = b.Node("MatMul", {a, b.RandomNormal("w1", {64, 16}, 0.2f)}, {}, "p1");
      ValueId p2 = b.Node("MatMul", {a, b.RandomNormal("w2", {64, 24}, 0.2f)}, {}, "p2");
      ValueId p3 = b.Node("MatMul", {a, b.RandomNormal("w3", {64, 8}, 0.2f)}, {}, "p3");
      b.Output(p1, "first");  // a product straight into a graph output keeps its name
      b.Output(b.Node("Tanh", {p2}), "second");
      b.Output(b.Node("Sigmoid", {p3}), "third");
      auto built = std::move(b).Build();
      ASSERT_TRUE(built.ok()) << built.status().ToString();
      Graph simplified;
      SimplifyStats stats = SimplifyAndCompare(*built, simplified);
      EXPECT_EQ(stats.matmuls_merged, 3);
      EXPECT_EQ(Count(simplified, "MatMul"), 1);
      EXPECT_EQ(Count(simplified, "Split"), 1);
      EXPECT_FALSE(simplified.FindValue("w1").has_value());  // the merged weight replaces it
    }
  }
}

TEST(MatMulBatchingTest, ProductsOfOneWeightOverIndependentInputsStack) {
  GraphBuilder b("steps", 17, 2);
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 32});
  ValueId w = b.RandomNormal("w", {32, 64}, 0.2f);
  ValueId sum = kNoValue;
  for (int64_t t = 0; t < 4; ++t) {
    ValueId xt =
        b.Node("Gather", {x, b.Scalar<int64_t>("t" + std::to_string(t), t)}, {{"axis", 1}});
    ValueId y = b.Node("Tanh", {b.Node("MatMul", {xt, w})});
    sum = sum == kNoValue ? y : b.Node("Add", {sum, y});
  }
  b.Output(sum, "y");
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  Graph simplified;
  SimplifyStats stats = SimplifyAndCompare(*built, simplified);
  EXPECT_EQ(stats.matmuls_stacked, 4);
  EXPECT_EQ(Count(simplified, "MatMul"), 1);
  EXPECT_EQ(Count(simplified, "Concat"), 1);
}

TEST(MatMulBatchingTest, ARecurrenceStacksItsInputsButNotItsState) {
  // h <- Tanh(h·U + x_t·W): the x_t·W stack, each h·U needs the one before.
  GraphBuilder b("recurrence", 17, 3);
  ValueId x = b.Input("x", DType::kFloat32, {1, 5, 32});
  ValueId h = b.Input("h0", DType::kFloat32, {1, 32});
  ValueId w = b.RandomNormal("w", {32, 32}, 0.2f);
  ValueId u = b.RandomNormal("u", {32, 32}, 0.2f);
  for (int64_t t = 0; t < 5; ++t) {
    ValueId xt =
        b.Node("Gather", {x, b.Scalar<int64_t>("t" + std::to_string(t), t)}, {{"axis", 1}});
    h = b.Node("Tanh", {b.Node("Add", {b.Node("MatMul", {h, u}), b.Node("MatMul", {xt, w})})});
  }
  b.Output(h, "h");
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  Graph simplified;
  SimplifyStats stats = SimplifyAndCompare(*built, simplified);
  EXPECT_EQ(stats.matmuls_stacked, 5);
  EXPECT_EQ(stats.matmuls_merged, 0);
  EXPECT_EQ(Count(simplified, "MatMul"), 1 + 5);
}

TEST(MatMulBatchingTest, StacksThatWouldWaitOnEachOtherLeaveTheGraphAsItWas) {
  // p1, p2 share w and q1, q2 share u, each pair independent; but x2 needs q1 and y2 needs p1,
  // so one product for the p's and one for the q's would each wait on the other.
  GraphBuilder b("crossed", 17, 5);
  ValueId x1 = b.Input("x1", DType::kFloat32, {1, 64});
  ValueId y1 = b.Input("y1", DType::kFloat32, {1, 64});
  ValueId w = b.RandomNormal("w", {64, 64}, 0.2f);
  ValueId u = b.RandomNormal("u", {64, 64}, 0.2f);
  ValueId p1 = b.Node("MatMul", {x1, w});
  ValueId q1 = b.Node("MatMul", {y1, u});
  ValueId p2 = b.Node("MatMul", {b.Node("Tanh", {q1}), w});
  ValueId q2 = b.Node("MatMul", {b.Node("Tanh", {p1}), u});
  b.Output(b.Node("Add", {p2, q2}), "y");
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  Graph simplified;
  SimplifyStats stats = SimplifyAndCompare(*built, simplified);
  EXPECT_EQ(stats.matmuls_stacked, 0);
  EXPECT_EQ(Count(simplified, "MatMul"), 4);
}

TEST(MatMulBatchingTest, TheNasRnnCellBecomesOneProductForTheInputsAndOnePerStep) {
  // 8 steps × (8 maps of the input + 8 of the state, none at step 0) = 120 products: the input
  // maps of every step in one, each later step's state maps in one.
  StatusOr<Graph> built = BuildZooModel("nasrnn");
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  ASSERT_EQ(Count(*built, "MatMul"), 120);
  Graph simplified;
  SimplifyStats stats = SimplifyAndCompare(*built, simplified, 1e-4);
  EXPECT_EQ(stats.matmuls_merged, 120);
  EXPECT_EQ(Count(simplified, "MatMul"), 1 + 7);
  EXPECT_EQ(stats.matmuls_stacked, 8);
  // Each weight kept once: only the Splits' sizes are new.
  EXPECT_LT(simplified.NumParameters() - built->NumParameters(), 1000);
}

TEST(MatMulBatchingTest, ProductsWithManyRowsOrNoConstantWeightStay) {
  GraphBuilder b("kept", 17, 4);
  ValueId a = b.Input("a", DType::kFloat32, {128, 64});
  ValueId c = b.Input("c", DType::kFloat32, {128, 64});
  ValueId w = b.RandomNormal("w", {64, 64}, 0.2f);
  // Many rows: siblings (a·w, a·v) and one weight over two inputs (a·w, c·w) stay.
  b.Output(b.Node("MatMul", {a, w}), "aw");
  b.Output(b.Node("MatMul", {a, b.RandomNormal("v", {64, 64}, 0.2f)}), "av");
  b.Output(b.Node("MatMul", {c, w}), "cw");
  // One row, but the second operand is computed, not a weight.
  ValueId row = b.Input("row", DType::kFloat32, {1, 64});
  ValueId square = b.Input("square", DType::kFloat32, {64, 64});
  b.Output(b.Node("MatMul", {row, square}), "r1");
  b.Output(b.Node("MatMul", {row, b.Node("Relu", {square})}), "r2");
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  Graph simplified = *built;
  auto stats = SimplifyGraph(simplified);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->total(), 0);
  EXPECT_EQ(Count(simplified, "MatMul"), 5);
}

}  // namespace
}  // namespace collage
