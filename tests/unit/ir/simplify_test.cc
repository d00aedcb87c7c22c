// Graph simplifications: each rewrite fires where it may, keeps the outputs of the graph as
// it was (reference kernels, before and after) and their names, and stays away where it may
// not.
#include "ir/simplify.h"

#include <gtest/gtest.h>

#include <random>

#include "ops/graph_builder.h"
#include "simplified_outputs.h"

namespace collage {
namespace {

ValueId ConvBn(GraphBuilder& b, ValueId x, const std::string& name, bool conv_bias) {
  ValueId w = b.RandomNormal(name + ".w", {8, 4, 3, 3}, 0.3f);
  std::vector<ValueId> ins = {x, w};
  if (conv_bias) ins.push_back(b.RandomNormal(name + ".b", {8}, 0.1f));
  ValueId c = b.Node("Conv", ins, {{"pads", {1, 1, 1, 1}}}, name);
  return b.Node(
      "BatchNormalization",
      {c, b.RandomUniform(name + ".scale", {8}, 0.5f, 1.5f),
       b.RandomNormal(name + ".shift", {8}, 0.2f), b.RandomNormal(name + ".mean", {8}, 0.2f),
       b.RandomUniform(name + ".var", {8}, 0.5f, 2.0f)},
      {{"epsilon", 1e-3f}}, name + ".bn");
}

TEST(SimplifyTest, BatchNormFoldsIntoTheConvBeforeIt) {
  GraphBuilder b("bn", 15, 1);
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 6, 6});
  ValueId y = b.Node("Relu", {ConvBn(b, x, "with_bias", true)});
  ValueId z = ConvBn(b, b.Node("Slice", {y, b.Ints("s", {0}), b.Ints("e", {4}), b.Ints("a", {1})}),
                     "without_bias", false);
  b.Output(y, "y");
  b.Output(z, "z");
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  Graph simplified;
  SimplifyStats stats = simplify_test::SimplifyAndCompare(*built, simplified);
  EXPECT_EQ(stats.batchnorms_folded, 2);
  EXPECT_EQ(simplify_test::Count(simplified, "BatchNormalization"), 0);
  EXPECT_EQ(simplify_test::Count(simplified, "Conv"), 2);
  // The original weights are gone with the BatchNormalization's parameters.
  EXPECT_FALSE(simplified.FindValue("with_bias.w").has_value());
  EXPECT_FALSE(simplified.FindValue("with_bias.scale").has_value());
}

TEST(SimplifyTest, BatchNormFoldsIntoTheConvTransposeBeforeIt) {
  // Weights [C_in, M/group, kH, kW]: output channel g * M/group + j is column j of group g's
  // rows; grouped and ungrouped, with and without a bias.
  for (int64_t group : {1, 2}) {
    for (bool bias : {true, false}) {
      SCOPED_TRACE("group " + std::to_string(group) + (bias ? " bias" : ""));
      GraphBuilder b("bn_deconv", 15, 4);
      ValueId x = b.Input("x", DType::kFloat32, {1, 4, 5, 5});
      std::vector<ValueId> in = {x, b.RandomNormal("w", {4, 8 / group, 3, 3}, 0.3f)};
      if (bias) in.push_back(b.RandomNormal("b", {8}, 0.3f));
      ValueId c = b.Node("ConvTranspose", in, {{"group", group}, {"strides", {2, 2}}}, "deconv");
      ValueId y =
          b.Node("BatchNormalization",
                 {c, b.RandomUniform("scale", {8}, 0.5f, 1.5f), b.RandomNormal("shift", {8}, 0.2f),
                  b.RandomNormal("mean", {8}, 0.2f), b.RandomUniform("var", {8}, 0.5f, 2.0f)},
                 {{"epsilon", 1e-3f}}, "bn");
      b.Output(b.Node("Relu", {y}), "y");
      auto built = std::move(b).Build();
      ASSERT_TRUE(built.ok()) << built.status().ToString();
      Graph simplified;
      SimplifyStats stats = simplify_test::SimplifyAndCompare(*built, simplified);
      EXPECT_EQ(stats.batchnorms_folded, 1);
      EXPECT_EQ(simplify_test::Count(simplified, "BatchNormalization"), 0);
      EXPECT_EQ(simplify_test::Count(simplified, "ConvTranspose"), 1);
    }
  }
}

TEST(SimplifyTest, BatchNormStaysWhenTheConvOutputHasAnotherReader) {
  GraphBuilder b("bn_shared", 15, 2);
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 6, 6});
  ValueId bn = ConvBn(b, x, "conv", true);
  const ValueId conv_out = b.graph().node(b.graph().value(bn).producer).inputs[0];
  b.Output(b.Node("Add", {bn, conv_out}), "y");
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  Graph simplified = *built;
  auto stats = SimplifyGraph(simplified);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->total(), 0);
  EXPECT_EQ(simplify_test::Count(simplified, "BatchNormalization"), 1);
}

// Pow stays as the exporter wrote it, whatever its exponent: the engines' optimizers fuse
// the forms exporters write (GELU's x^3, a variance's square), and the reference kernel
// computes 2 and 3 by multiplying.
TEST(SimplifyTest, PowStaysAsTheExporterWroteIt) {
  GraphBuilder b("pow", 17, 3);
  ValueId x = b.Input("x", DType::kFloat32, {2, 5});
  ValueId cube = b.Node("Pow", {x, b.Scalar<float>("three", 3.0f)}, {}, "cube");
  ValueId square = b.Node("Pow", {x, b.Constant<float>("two", {1}, {2.0f})}, {}, "square");
  ValueId other = b.Node("Pow", {b.Node("Abs", {x}), b.Scalar<float>("half", 2.5f)}, {}, "other");
  b.Output(cube, "cube_out");
  b.Output(b.Node("Add", {square, other}), "rest");
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  Graph simplified;
  SimplifyStats stats = simplify_test::SimplifyAndCompare(*built, simplified);
  EXPECT_EQ(stats.total(), 0);
  EXPECT_EQ(simplify_test::Count(simplified, "Pow"), 3);
  EXPECT_EQ(simplify_test::Count(simplified, "Mul"), 0);
}

TEST(SimplifyTest, TransposesThatUndoEachOtherVanish) {
  GraphBuilder b("transposes", 17, 4);
  ValueId x = b.Input("x", DType::kFloat32, {2, 3, 4});
  ValueId t = b.Node("Transpose", {x}, {{"perm", {1, 2, 0}}});
  ValueId back = b.Node("Transpose", {t}, {{"perm", {2, 0, 1}}});
  ValueId kept = b.Node("Transpose", {b.Node("Relu", {back})}, {{"perm", {1, 0, 2}}});
  ValueId kept2 = b.Node("Transpose", {kept}, {{"perm", {0, 2, 1}}});  // not the inverse
  b.Output(b.Node("Relu", {kept2}), "y");
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  Graph simplified;
  SimplifyStats stats = simplify_test::SimplifyAndCompare(*built, simplified);
  EXPECT_EQ(stats.transposes_cancelled, 1);
  EXPECT_EQ(simplify_test::Count(simplified, "Transpose"), 2);
}

TEST(SimplifyTest, PadsOfZeroVanish) {
  // Opset 11+: pads from a constant input; opset 2: the attribute. A non-zero pad and a zero
  // pad that is a graph output stay.
  for (int64_t opset : {2, 13}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    GraphBuilder b("pads", opset, 6);
    ValueId x = b.Input("x", DType::kFloat32, {1, 3, 4, 4});
    auto pad = [&](ValueId in, std::vector<int64_t> pads) {
      if (opset >= 11) return b.Node("Pad", {in, b.Ints("pads", pads)});
      return b.Node("Pad", {in}, {{"pads", pads}});
    };
    ValueId zero = pad(b.Node("Relu", {x}), {0, 0, 0, 0, 0, 0, 0, 0});
    ValueId real = pad(b.Node("Neg", {zero}), {0, 0, 1, 1, 0, 0, 1, 1});
    b.Output(b.Node("Relu", {real}), "y");
    b.Output(pad(x, {0, 0, 0, 0, 0, 0, 0, 0}), "copy");  // a graph output: kept
    auto built = std::move(b).Build();
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    Graph simplified;
    SimplifyStats stats = simplify_test::SimplifyAndCompare(*built, simplified);
    EXPECT_EQ(stats.zero_pads_removed, 1);
    EXPECT_EQ(simplify_test::Count(simplified, "Pad"), 2);
  }
}

TEST(SimplifyTest, TransposeIntoAGraphOutputOrReadTwiceStays) {
  GraphBuilder b("transposes_kept", 17, 5);
  ValueId x = b.Input("x", DType::kFloat32, {2, 3});
  ValueId t = b.Node("Transpose", {x}, {{"perm", {1, 0}}});
  b.Output(b.Node("Transpose", {t}, {{"perm", {1, 0}}}), "y");  // a graph output
  ValueId u = b.Node("Transpose", {b.Node("Relu", {x})}, {{"perm", {1, 0}}});
  ValueId back = b.Node("Transpose", {u}, {{"perm", {1, 0}}});
  b.Output(b.Node("Add", {back, back}), "z");
  b.Output(u, "u");  // the one between is read elsewhere
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  Graph simplified = *built;
  auto stats = SimplifyGraph(simplified);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->total(), 0);
}

TEST(SimplifyTest, ANodeComputingWhatAnEarlierOneComputesGoes) {
  GraphBuilder b("duplicates", 17, 7);
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 6, 6});
  // Two branches each with their own Relu of x, then a chain (Relu, Neg) twice.
  ValueId left = b.Node("Conv", {b.Node("Relu", {x}), b.RandomNormal("wl", {4, 4, 1, 1}, 0.3f)});
  ValueId right = b.Node("Conv", {b.Node("Relu", {x}), b.RandomNormal("wr", {4, 4, 1, 1}, 0.3f)});
  ValueId chain1 = b.Node("Neg", {b.Node("Relu", {x})});
  ValueId chain2 = b.Node("Neg", {b.Node("Relu", {x})});
  // Same pooling twice; a pooling with other attributes stays.
  auto pool = [&](int64_t stride) {
    return b.Node(
        "AveragePool", {x},
        {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}, {"strides", {stride, stride}}});
  };
  ValueId pools = b.Node("Add", {pool(1), pool(1)});
  ValueId strided = pool(2);
  b.Output(b.Node("Add", {b.Node("Add", {left, right}), b.Node("Add", {chain1, chain2})}), "y");
  b.Output(pools, "pools");
  b.Output(strided, "strided");
  b.Output(b.Node("Relu", {x}), "relu_out");  // writes a graph output: stays, named
  auto built = std::move(b).Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  Graph simplified;
  SimplifyStats stats = simplify_test::SimplifyAndCompare(*built, simplified);
  // Relu ×3 (a branch, both chains; the graph output's stays), Neg ×1, AveragePool ×1.
  EXPECT_EQ(stats.duplicates_removed, 5);
  EXPECT_EQ(simplify_test::Count(simplified, "Relu"), 2);
  EXPECT_EQ(simplify_test::Count(simplified, "Neg"), 1);
  EXPECT_EQ(simplify_test::Count(simplified, "AveragePool"), 2);
}

TEST(SimplifyTest, TwoRandomDrawsOverOneInputStayTwo) {
  // Built by hand: no backend runs a random op, but a graph may hold one.
  Graph g;
  const TensorType type{DType::kFloat32, {2, 3}};
  const ValueId x = g.AddValue("x", type);
  g.AddInput(x);
  std::vector<ValueId> draws;
  for (const char* name : {"draw1", "draw2"}) {
    draws.push_back(g.AddValue(name, type));
    Node draw;
    draw.name = name;
    draw.op_type = "RandomUniformLike";
    draw.inputs = {x};
    draw.outputs = {draws.back()};
    ASSERT_TRUE(g.AddNode(std::move(draw)).ok());
  }
  Node add;
  add.name = "sum";
  add.op_type = "Add";
  add.inputs = draws;
  add.outputs = {g.AddValue("y", type)};
  g.AddOutput(add.outputs[0]);
  ASSERT_TRUE(g.AddNode(std::move(add)).ok());
  auto stats = SimplifyGraph(g);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->total(), 0);
  EXPECT_EQ(simplify_test::Count(g, "RandomUniformLike"), 2);
}

}  // namespace
}  // namespace collage
