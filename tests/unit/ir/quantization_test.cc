// The graph's view of quantization: how coarse a value is by construction
// (ir/quantization_step.h), and the copies of a DequantizeLinear per reader that let each
// reader's integer kernel take its own (ir/dequantize_per_reader.h, part of the
// simplification).
#include <gtest/gtest.h>

#include "ir/dequantize_per_reader.h"
#include "ir/output_judgement.h"
#include "ir/quantization_step.h"
#include "ops/graph_builder.h"
#include "simplified_outputs.h"

namespace collage {
namespace {

NodeId Producer(const Graph& g, ValueId v) { return g.value(v).producer; }

// x (float) → QuantizeLinear (int8, scale 0.25) → DequantizeLinear → Relu → Add(x) →
// QuantizeLinear (scale 0.5).
struct QdqChain {
  Graph graph;
  ValueId q1, dq, relu, add, q2;
};

QdqChain BuildChain() {
  GraphBuilder b("qdq", 13, 1);
  QdqChain c;
  const ValueId x = b.Input("x", DType::kFloat32, {2, 3});
  const ValueId s1 = b.Scalar<float>("s1", 0.25f);
  const ValueId z1 = b.Scalar<int8_t>("z1", 1);
  c.q1 = b.Node("QuantizeLinear", {x, s1, z1}, {}, "q1");
  c.dq = b.Node("DequantizeLinear", {c.q1, s1, z1}, {}, "dq");
  c.relu = b.Node("Relu", {c.dq}, {}, "relu");
  c.add = b.Node("Add", {c.relu, x}, {}, "add");
  c.q2 = b.Node("QuantizeLinear", {c.add, b.Scalar<float>("s2", 0.5f), b.Scalar<int8_t>("z2", 0)},
                {}, "q2");
  b.Output(c.q2, "y");
  b.Output(c.relu, "r");
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  c.graph = std::move(*graph);
  return c;
}

TEST(QuantizationStepTest, QuantizedIntegersHaveAStepOfOne) {
  const QdqChain c = BuildChain();
  EXPECT_EQ(QuantizationStep(c.graph, c.q1), 1);
  EXPECT_EQ(QuantizationStep(c.graph, c.q2), 1);
}

TEST(QuantizationStepTest, DequantizedFloatsHaveTheScaleThroughSlopeOneOps) {
  const QdqChain c = BuildChain();
  EXPECT_FLOAT_EQ(QuantizationStep(c.graph, c.dq), 0.25);
  EXPECT_FLOAT_EQ(QuantizationStep(c.graph, c.relu), 0.25);
  // An Add mixes in a value of another precision: no step.
  EXPECT_EQ(QuantizationStep(c.graph, c.add), 0);
  // A graph input has none either.
  EXPECT_EQ(QuantizationStep(c.graph, c.graph.inputs()[0]), 0);
}

TEST(QuantizationStepTest, AScopeLooksOnlyThroughItsOwnNodes) {
  const QdqChain c = BuildChain();
  SubGraph relu_only(c.graph.num_nodes(), {Producer(c.graph, c.relu)});
  EXPECT_EQ(QuantizationStep(c.graph, c.relu, &relu_only), 0);
  SubGraph both(c.graph.num_nodes(), {Producer(c.graph, c.dq), Producer(c.graph, c.relu)});
  EXPECT_FLOAT_EQ(QuantizationStep(c.graph, c.relu, &both), 0.25);
}

TEST(QuantizationToleranceTest, OneStepPerGroupAndTheSquareRootOfTheRoundingsOnTheWay) {
  const QdqChain c = BuildChain();
  // dq and relu are one rounding deep (q1): one step.
  EXPECT_FLOAT_EQ(QuantizationTolerance(c.graph, c.relu), 0.25);
  // q2 is two deep (q1, then q2 itself): ceil(sqrt 2) = 2 steps of 1.
  EXPECT_FLOAT_EQ(QuantizationTolerance(c.graph, c.q2), 2);
  // Checked as a group of q2 alone it rounds once: one step.
  SubGraph q2_only(c.graph.num_nodes(), {Producer(c.graph, c.q2)});
  EXPECT_FLOAT_EQ(QuantizationTolerance(c.graph, c.q2, &q2_only), 1);
  EXPECT_EQ(QuantizationTolerance(c.graph, c.add), 0);  // no step, no tolerance
}

TEST(JudgeOutputTest, QuantizedOutputsPassWithinTheirStepsAndNoFurther) {
  const QdqChain c = BuildChain();  // q2: int8, two roundings deep, so 2 steps allowed
  const Tensor reference = Tensor::FromVector<int8_t>({2, 3}, {0, 10, -5, 7, 100, -100});
  const Tensor two_off = Tensor::FromVector<int8_t>({2, 3}, {2, 10, -5, 7, 98, -100});
  const Tensor three_off = Tensor::FromVector<int8_t>({2, 3}, {3, 10, -5, 7, 100, -100});
  const OutputJudgement near = JudgeOutput(c.graph, c.q2, nullptr, two_off, reference, 1e-4);
  EXPECT_TRUE(near.quantized);
  EXPECT_TRUE(near.within_steps);
  EXPECT_TRUE(near.ok);
  const OutputJudgement far = JudgeOutput(c.graph, c.q2, nullptr, three_off, reference, 1e-4);
  EXPECT_FALSE(far.ok);
  // As a group of q2 alone it rounds once: one step, so two off fails there.
  SubGraph q2_only(c.graph.num_nodes(), {Producer(c.graph, c.q2)});
  EXPECT_FALSE(JudgeOutput(c.graph, c.q2, &q2_only, two_off, reference, 1e-4).ok);
  // A float output with no step is held to the tolerance alone.
  const Tensor f = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor g = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6.01f});
  const OutputJudgement plain = JudgeOutput(c.graph, c.add, nullptr, g, f, 1e-4);
  EXPECT_FALSE(plain.quantized);
  EXPECT_FALSE(plain.ok);
  EXPECT_TRUE(JudgeOutput(c.graph, c.add, nullptr, g, f, 1e-2).ok);
}

// Two linear layers whose activations are quantized at run time, as quantize_dynamic writes
// them: DynamicQuantizeLinear → MatMulInteger → Cast → Mul by both scales, then Relu.
struct DynamicChain {
  Graph graph;
  ValueId first, second;
};

DynamicChain BuildDynamicChain() {
  GraphBuilder b("dynamic", 13, 4);
  DynamicChain c;
  ValueId x = b.Input("x", DType::kFloat32, {2, 4});
  for (int layer = 0; layer < 2; ++layer) {
    const std::vector<ValueId> q = b.NodeMulti("DynamicQuantizeLinear", {x}, 3);
    const ValueId w = b.Constant<int8_t>("w" + std::to_string(layer), {4, 4},
                                         std::vector<int8_t>(16, static_cast<int8_t>(3)));
    const ValueId product = b.Node("MatMulInteger", {q[0], w, q[2]});
    const ValueId as_float = b.Node("Cast", {product}, {{"to", Attribute(int64_t{1})}});  // float
    const ValueId scale =
        b.Node("Mul", {q[1], b.Scalar<float>("ws" + std::to_string(layer), 0.01f)});
    x = b.Node("Relu", {b.Node("Mul", {as_float, scale})});
    (layer == 0 ? c.first : c.second) = x;
  }
  b.Output(c.second, "y");
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  c.graph = std::move(*graph);
  return c;
}

TEST(QuantizationToleranceTest, RunTimeQuantizationAllowsAFractionOfTheMagnitude) {
  const DynamicChain c = BuildDynamicChain();
  EXPECT_DOUBLE_EQ(DynamicQuantizationTolerance(c.graph, c.first), kDynamicQuantizationStep);
  // Two roundings on the way: ceil(sqrt 2) = 2 steps.
  EXPECT_DOUBLE_EQ(DynamicQuantizationTolerance(c.graph, c.second), 2 * kDynamicQuantizationStep);
  EXPECT_EQ(DynamicQuantizationTolerance(c.graph, c.graph.inputs()[0]), 0);
  // A group of the second layer's float ops alone rounds nothing: exact, as any float group.
  NodeId last_rounding = 0;
  for (NodeId n = 0; n < c.graph.num_nodes(); ++n) {
    if (c.graph.node(n).op_type == "DynamicQuantizeLinear") last_rounding = n;
  }
  SubGraph float_tail(c.graph.num_nodes(), {});
  for (NodeId n = last_rounding + 1; n < c.graph.num_nodes(); ++n) float_tail.Add(n);
  EXPECT_EQ(DynamicQuantizationTolerance(c.graph, c.second, &float_tail), 0);
  // A static QDQ graph has none.
  const QdqChain q = BuildChain();
  EXPECT_EQ(DynamicQuantizationTolerance(q.graph, q.q2), 0);
}

// A quantized activation read by a convolution and by a residual Add through one
// DequantizeLinear, as quantizers write a ResNet block.
Graph SharedDequantize() {
  GraphBuilder b("shared", 13, 2);
  const ValueId x = b.Input("x", DType::kUInt8, {1, 4, 5, 5});
  const ValueId s = b.Scalar<float>("s", 0.1f);
  const ValueId z = b.Scalar<uint8_t>("z", 128);
  const ValueId dq = b.Node("DequantizeLinear", {x, s, z}, {}, "dq");
  const ValueId conv = b.Node("Conv", {dq, b.RandomNormal("w", {4, 4, 3, 3}, 0.2f)},
                              {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
  const ValueId add = b.Node("Add", {conv, dq}, {}, "add");
  b.Output(b.Node("Mul", {dq, dq}, {}, "square"), "sq");
  b.Output(add, "y");
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(*graph);
}

int CountOp(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op_type == op;
  return n;
}

TEST(DequantizePerReaderTest, EachReaderGetsItsOwnCopy) {
  Graph g = SharedDequantize();
  auto copies = DequantizePerReader(g);
  ASSERT_TRUE(copies.ok()) << copies.status().ToString();
  // Three readers (the Mul reads it twice, but is one reader): two copies.
  EXPECT_EQ(*copies, 2);
  EXPECT_EQ(CountOp(g, "DequantizeLinear"), 3);
  for (const Node& node : g.nodes()) {
    if (node.op_type != "DequantizeLinear") continue;
    const std::vector<NodeId>& readers = g.value(node.outputs[0]).consumers;
    ASSERT_FALSE(readers.empty()) << node.name;
    for (NodeId r : readers) EXPECT_EQ(r, readers.front()) << node.name << " has several readers";
  }
  EXPECT_TRUE(g.Validate().ok());
}

TEST(DequantizePerReaderTest, TheSimplifiedGraphComputesTheSameOutputs) {
  const Graph built = SharedDequantize();
  Graph simplified;
  const SimplifyStats stats = simplify_test::SimplifyAndCompare(built, simplified, 0);
  EXPECT_EQ(stats.dequantizes_copied, 2);
  EXPECT_EQ(CountOp(simplified, "DequantizeLinear"), 3);
}

TEST(DequantizePerReaderTest, ASingleReaderLeavesTheGraphAlone) {
  GraphBuilder b("single", 13, 3);
  const ValueId x = b.Input("x", DType::kInt8, {4});
  b.Output(b.Node("DequantizeLinear", {x, b.Scalar<float>("s", 0.5f)}, {}, "dq"), "y");
  auto g = std::move(b).Build();
  ASSERT_TRUE(g.ok());
  auto copies = DequantizePerReader(*g);
  ASSERT_TRUE(copies.ok());
  EXPECT_EQ(*copies, 0);
}

}  // namespace
}  // namespace collage
