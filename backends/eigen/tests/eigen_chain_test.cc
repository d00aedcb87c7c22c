// The Eigen backend's elementwise_chain fusion: the groups it offers, and the tiled kernel
// compared with the reference kernels through a KernelRunner. Tolerance 1e-4 (normalized):
// Eigen's vectorised exp/tanh/erf/logistic are accurate to a few ulp.
#include <gtest/gtest.h>

#include <cmath>

#include "backend_test_util.h"

namespace collage::testing {
namespace {

std::vector<Candidate> Chains(const Graph& graph) {
  return CandidatesOf(graph, "eigen", "elementwise_chain");
}

// Compiled for 2 threads, the group matches the reference on inputs from seed 9.
void ExpectGroupMatches(const Graph& graph, const SubGraph& nodes) {
  ExpectMatchesReference("eigen", CompileRequest::For(graph, nodes, "elementwise_chain", 2), 1e-4,
                         9);
}

// The fusion offers the whole graph as one chain, and every chain it offers matches.
void ExpectWholeChainMatches(const Graph& graph) {
  bool whole = false;
  for (const Candidate& c : Chains(graph)) {
    whole = whole || c.nodes.size() == graph.num_nodes();
    ExpectGroupMatches(graph, c.nodes);
  }
  EXPECT_TRUE(whole) << "no chain of all " << graph.num_nodes() << " nodes was offered";
}

TEST(EigenChainTest, UnaryOps) {
  GraphBuilder b("unary");
  ValueId x = b.Input("x", DType::kFloat32, {3, 100, 131});  // several tiles, a partial last one
  ValueId y = b.Node("Relu", {x});
  y = b.Node("Add", {y, b.Scalar("one", 1.0f)});
  y = b.Node("Log", {y});
  y = b.Node("Sqrt", {y});
  y = b.Node("Sigmoid", {y});
  y = b.Node("Tanh", {y});
  y = b.Node("Exp", {y});
  y = b.Node("Neg", {y});
  b.Output(y);
  ExpectWholeChainMatches(BuildOrFail(std::move(b)));
}

TEST(EigenChainTest, MoreUnaryOps) {
  GraphBuilder b("unary2", 13);
  ValueId x = b.Input("x", DType::kFloat32, {2, 1000});
  ValueId y = b.Node("LeakyRelu", {x}, {{"alpha", 0.2f}});
  y = b.Node("Abs", {b.Node("Erf", {y})});
  y = b.Node("Reciprocal", {b.Node("Add", {y, b.Scalar("half", 0.5f)})});
  y = b.Node("Clip", {y, b.Scalar("lo", 0.8f), b.Scalar("hi", 1.7f)});
  b.Output(y);
  ExpectWholeChainMatches(BuildOrFail(std::move(b)));
}

TEST(EigenChainTest, ClipBoundsAsAttributesBeforeOpset11) {
  GraphBuilder b("clip10", 10);
  ValueId x = b.Input("x", DType::kFloat32, {4, 50});
  b.Output(b.Node("Relu", {b.Node("Clip", {x}, {{"min", -0.5f}, {"max", 0.75f}})}));
  ExpectWholeChainMatches(BuildOrFail(std::move(b)));
  GraphBuilder open("clip_open", 13);  // an absent bound leaves that side open
  ValueId z = open.Input("x", DType::kFloat32, {4, 50});
  ValueId lo = open.Scalar("lo", -0.25f);
  open.Output(open.Node("Neg", {open.Node("Clip", {z, lo})}));
  ExpectWholeChainMatches(BuildOrFail(std::move(open)));
}

TEST(EigenChainTest, GeluErfForm) {
  // BERT's GELU: 0.5 * x * (1 + erf(x / sqrt(2))), x read twice.
  GraphBuilder b("gelu");
  ValueId x = b.Input("x", DType::kFloat32, {1, 128, 300});
  ValueId y = b.Node("Div", {x, b.Scalar("sqrt2", std::sqrt(2.0f))});
  y = b.Node("Erf", {y});
  y = b.Node("Add", {y, b.Scalar("one", 1.0f)});
  y = b.Node("Mul", {x, y});
  y = b.Node("Mul", {y, b.Scalar("half", 0.5f)});
  b.Output(y);
  ExpectWholeChainMatches(BuildOrFail(std::move(b)));
}

TEST(EigenChainTest, ConstantBroadcastForms) {
  // Against [2, 5, 7]: a last-dim row, a middle block, a leading block, a block that spans
  // the batch (so tiles wrap around it), a same-shape constant, scalars on either side.
  GraphBuilder b("broadcast");
  ValueId x = b.Input("x", DType::kFloat32, {2, 5, 7});
  ValueId y = b.Node("Add", {x, b.RandomNormal("row", {7}, 1.0f)});
  y = b.Node("Mul", {b.RandomNormal("mid", {5, 1}, 1.0f), y});
  y = b.Node("Sub", {y, b.RandomNormal("lead", {2, 1, 1}, 1.0f)});
  y = b.Node("Add", {y, b.RandomNormal("span", {1, 5, 7}, 1.0f)});
  y = b.Node("Div", {y, b.RandomUniform("full", {2, 5, 7}, 1.0f, 2.0f)});
  y = b.Node("Sub", {b.Scalar("three", 3.0f), y});
  y = b.Node("Div", {b.Constant<float>("two", {1, 1, 1}, {2.0f}), y});
  b.Output(y);
  ExpectWholeChainMatches(BuildOrFail(std::move(b)));
}

TEST(EigenChainTest, PerChannelConstantOnLargeTensor) {
  // [C, 1, 1] against NCHW, large enough for tiles to run on several threads.
  GraphBuilder b("per_channel");
  ValueId x = b.Input("x", DType::kFloat32, {1, 32, 40, 40});
  ValueId y = b.Node("Mul", {x, b.RandomNormal("scale", {32, 1, 1}, 1.0f)});
  y = b.Node("Add", {y, b.RandomNormal("shift", {32, 1, 1}, 1.0f)});
  b.Output(b.Node("Relu", {y}));
  ExpectWholeChainMatches(BuildOrFail(std::move(b)));
}

TEST(EigenChainTest, IntermediateReadOutsideIsAnOutput) {
  // r = Relu(x) is a graph output and read inside: the group has two outputs.
  GraphBuilder b("two_outputs");
  ValueId x = b.Input("x", DType::kFloat32, {6, 700});
  ValueId r = b.Node("Relu", {x});
  ValueId s = b.Node("Add", {r, b.Node("Exp", {r})});
  b.Output(r);
  b.Output(s);
  Graph graph = BuildOrFail(std::move(b));
  SubGraph all(graph.num_nodes());
  for (NodeId n = 0; n < graph.num_nodes(); ++n) all.Add(n);
  ASSERT_EQ(CompileRequest::For(graph, all, "elementwise_chain", 2).outputs.size(), 2u);
  ExpectGroupMatches(graph, all);
}

TEST(EigenChainTest, RejectsUnsupportedForms) {
  auto offered_nodes = [](const Graph& graph) {
    SubGraph any(graph.num_nodes());
    for (const Candidate& c : Chains(graph)) any = any.Union(c.nodes);
    return any;
  };
  {  // a non-constant operand broadcast: the Add is never part of a chain
    GraphBuilder b("input_broadcast");
    ValueId x = b.Input("x", DType::kFloat32, {4, 8});
    ValueId y = b.Node("Add", {b.Node("Relu", {x}), b.Input("bias", DType::kFloat32, {8})});
    b.Output(b.Node("Exp", {y}));
    Graph graph = BuildOrFail(std::move(b));
    EXPECT_FALSE(offered_nodes(graph).Contains(1)) << offered_nodes(graph).ToString();
  }
  {  // a constant broadcast in the middle of the shape is not a block
    GraphBuilder b("gap_broadcast");
    ValueId x = b.Input("x", DType::kFloat32, {4, 5, 8});
    ValueId y = b.Node("Mul", {b.Node("Relu", {x}), b.RandomNormal("c", {4, 1, 8}, 1.0f)});
    b.Output(b.Node("Exp", {y}));
    Graph graph = BuildOrFail(std::move(b));
    EXPECT_FALSE(offered_nodes(graph).Contains(1));
  }
  {  // int32 and ops outside the list (Pow) are not offered
    GraphBuilder b("int_and_pow");
    ValueId i = b.Input("i", DType::kInt32, {16});
    b.Output(b.Node("Neg", {b.Node("Abs", {i})}));
    ValueId x = b.Input("x", DType::kFloat32, {16});
    b.Output(b.Node("Exp", {b.Node("Pow", {x, b.Scalar("p", 2.0f)})}));
    Graph graph = BuildOrFail(std::move(b));
    const SubGraph offered = offered_nodes(graph);
    EXPECT_FALSE(offered.Contains(0));
    EXPECT_FALSE(offered.Contains(1));
    EXPECT_FALSE(offered.Contains(2));
  }
  {  // Clip with a bound that is an input
    GraphBuilder b("clip_input", 13);
    ValueId x = b.Input("x", DType::kFloat32, {16});
    ValueId y = b.Node("Clip", {b.Node("Relu", {x}), b.Input("lo", DType::kFloat32, {})});
    b.Output(b.Node("Exp", {y}));
    EXPECT_FALSE(offered_nodes(BuildOrFail(std::move(b))).Contains(1));
  }
  {  // before opset 7 nothing is offered (binary ops broadcast by attribute then)
    GraphBuilder b("opset6", 6);
    ValueId x = b.Input("x", DType::kFloat32, {16});
    b.Output(b.Node("Exp", {b.Node("Relu", {x})}));
    EXPECT_TRUE(Chains(BuildOrFail(std::move(b))).empty());
  }
}

}  // namespace
}  // namespace collage::testing
