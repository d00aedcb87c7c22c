#include <gtest/gtest.h>

#include "ops/graph_builder.h"
#include "collage/sdk/rule.h"

namespace collage {
namespace {

// x → Conv(w[, b]) → Relu → output; the conv output optionally also a graph output.
struct ConvRelu {
  Graph graph;
  ValueId x, w, b, conv, relu;
};

ConvRelu BuildConvRelu(bool with_bias, bool conv_is_output = false) {
  GraphBuilder builder("conv_relu");
  ConvRelu g;
  g.x = builder.Input("x", DType::kFloat32, {1, 3, 8, 8});
  g.w = builder.RandomNormal("w", {4, 3, 3, 3}, 0.1f);
  g.b = with_bias ? builder.RandomNormal("b", {4}, 0.1f) : kNoValue;
  std::vector<ValueId> inputs{g.x, g.w};
  if (with_bias) inputs.push_back(g.b);
  g.conv = builder.Node("Conv", inputs, {{"pads", {1, 1, 1, 1}}}, "conv");
  g.relu = builder.Node("Relu", {g.conv}, {}, "relu");
  builder.Output(g.relu);
  if (conv_is_output) builder.Output(g.conv);
  StatusOr<Graph> graph = std::move(builder).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  g.graph = std::move(*graph);
  return g;
}

Pattern ConvReluPattern() { return Op("Relu")(Op("Conv")(Any(), Const(), Optional(Const()))); }

TEST(PatternTest, OpMatchesItsTypesOnly) {
  ConvRelu g = BuildConvRelu(true);
  std::vector<Match> relus = Rule("relu", Op("Relu")).FindAll(g.graph);
  ASSERT_EQ(relus.size(), 1u);
  EXPECT_EQ(relus[0].root, g.graph.value(g.relu).producer);
  EXPECT_EQ(relus[0].op_nodes, std::vector<NodeId>{relus[0].root});
  EXPECT_TRUE(relus[0].captures.empty());  // inputs not given: all boundary, none captured
  EXPECT_EQ(Rule("both", Op({"Relu", "Conv"})).FindAll(g.graph).size(), 2u);
  EXPECT_TRUE(Rule("none", Op("Sigmoid")).FindAll(g.graph).empty());
}

TEST(PatternTest, NestedOpsAreNumberedInPreOrder) {
  ConvRelu g = BuildConvRelu(true);
  Rule rule("conv_relu", ConvReluPattern());
  std::vector<Match> matches = rule.FindAll(g.graph);
  ASSERT_EQ(matches.size(), 1u);
  const Match& m = matches[0];
  EXPECT_EQ(m.root_node().op_type, "Relu");
  ASSERT_EQ(m.op_nodes.size(), 2u);
  EXPECT_EQ(m.node(0).op_type, "Relu");
  EXPECT_EQ(m.node(1).op_type, "Conv");
  EXPECT_EQ(m.captures, (std::vector<ValueId>{g.x, g.w, g.b}));
  EXPECT_TRUE(m.has_capture(2));
  EXPECT_EQ(m.capture_type(0).shape, (Shape{1, 3, 8, 8}));
  EXPECT_EQ(m.output_type().shape, (Shape{1, 4, 8, 8}));
}

TEST(PatternTest, OptionalMatchesAnAbsentInput) {
  ConvRelu g = BuildConvRelu(false);
  std::vector<Match> matches = Rule("conv_relu", ConvReluPattern()).FindAll(g.graph);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0].captures, (std::vector<ValueId>{g.x, g.w, kNoValue}));
  EXPECT_FALSE(matches[0].has_capture(2));
  // Without Optional a node with more inputs than patterns does not match.
  ConvRelu biased = BuildConvRelu(true);
  EXPECT_TRUE(Rule("conv", Op("Conv")(Any(), Const())).FindAll(biased.graph).empty());
  EXPECT_EQ(Rule("conv", Op("Conv")(Any(), Const())).FindAll(g.graph).size(), 1u);
  // A required pattern does not match a missing input.
  EXPECT_TRUE(Rule("conv", Op("Conv")(Any(), Const(), Const())).FindAll(g.graph).empty());
}

TEST(PatternTest, ConstMatchesConstantsOnly) {
  GraphBuilder builder("add");
  ValueId x = builder.Input("x", DType::kFloat32, {2, 3});
  ValueId y = builder.Input("y", DType::kFloat32, {2, 3});
  ValueId c = builder.RandomNormal("c", {2, 3}, 1.0f);
  builder.Output(builder.Node("Add", {x, y}, {}, "add_xy"));
  builder.Output(builder.Node("Add", {x, c}, {}, "add_xc"));
  StatusOr<Graph> graph = std::move(builder).Build();
  ASSERT_TRUE(graph.ok());
  std::vector<Match> with_const = Rule("add_const", Op("Add")(Any(), Const())).FindAll(*graph);
  ASSERT_EQ(with_const.size(), 1u);
  EXPECT_EQ(with_const[0].root_node().name, "add_xc");
  EXPECT_EQ(with_const[0].captures, (std::vector<ValueId>{x, c}));
  EXPECT_EQ(Rule("add_any", Op("Add")(Any(), Any())).FindAll(*graph).size(), 2u);
  // An Op pattern does not match a graph input or a constant.
  EXPECT_TRUE(Rule("add_op", Op("Add")(Op("Relu"), Any())).FindAll(*graph).empty());
}

TEST(PatternTest, AltTakesTheFirstMatchingAlternativeWithItsNumbering) {
  GraphBuilder builder("alt");
  ValueId x = builder.Input("x", DType::kFloat32, {1, 3, 8, 8});
  ValueId w = builder.RandomNormal("w", {3, 3, 1, 1}, 0.1f);
  ValueId conv = builder.Node("Conv", {x, w}, {}, "conv");
  ValueId relu_conv = builder.Node("Relu", {conv}, {}, "relu_conv");
  ValueId relu_x = builder.Node("Relu", {x}, {}, "relu_x");
  builder.Output(relu_conv);
  builder.Output(relu_x);
  StatusOr<Graph> graph = std::move(builder).Build();
  ASSERT_TRUE(graph.ok());
  Rule rule("relu", Op("Relu")(Alt({Op("Conv")(Any(), Const()), Any()})));
  std::vector<Match> matches = rule.FindAll(*graph);
  ASSERT_EQ(matches.size(), 2u);
  // The conv alternative: two op nodes, captures x and w.
  EXPECT_EQ(matches[0].root_node().name, "relu_conv");
  ASSERT_EQ(matches[0].op_nodes.size(), 2u);
  EXPECT_EQ(matches[0].node(1).op_type, "Conv");
  EXPECT_EQ(matches[0].captures, (std::vector<ValueId>{x, w}));
  // The Any alternative: the Relu alone, capture x.
  EXPECT_EQ(matches[1].root_node().name, "relu_x");
  EXPECT_EQ(matches[1].op_nodes.size(), 1u);
  EXPECT_EQ(matches[1].captures, (std::vector<ValueId>{x}));
  // Order matters: Any first always wins.
  Rule any_first("relu", Op("Relu")(Alt({Any(), Op("Conv")(Any(), Const())})));
  for (const Match& m : any_first.FindAll(*graph)) EXPECT_EQ(m.op_nodes.size(), 1u);
  (void)relu_conv;
  (void)relu_x;
}

TEST(PatternTest, AbsentOptionalKeepsLaterNumberingStable) {
  GraphBuilder builder("gemm");
  ValueId a = builder.Input("a", DType::kFloat32, {2, 3});
  ValueId b = builder.RandomNormal("b", {3, 3}, 0.1f);
  ValueId gemm = builder.Node("Gemm", {a, b}, {}, "gemm");
  builder.Output(builder.Node("Add", {gemm, a}, {}, "add"));
  StatusOr<Graph> graph = std::move(builder).Build();
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  Rule rule("gemm_add",
            Op("Add")(Op("Gemm")(Any(), Const(), Optional(Alt({Const(), Op("Relu")(Any())}))),
                      Any()));
  std::vector<Match> matches = rule.FindAll(*graph);
  ASSERT_EQ(matches.size(), 1u);
  // Absent C numbered as its first alternative: one kNoValue capture; the Add's second
  // input keeps index 3.
  EXPECT_EQ(matches[0].captures, (std::vector<ValueId>{a, b, kNoValue, a}));
  EXPECT_EQ(matches[0].op_nodes.size(), 2u);
}

TEST(PatternTest, Predicates) {
  ConvRelu g = BuildConvRelu(true);
  auto count = [&](const Pattern& p) { return Rule("r", p).FindAll(g.graph).size(); };
  EXPECT_EQ(count(Op("Relu").WithDType(DType::kFloat32)), 1u);
  EXPECT_EQ(count(Op("Relu").WithDType(DType::kInt64)), 0u);
  EXPECT_EQ(count(Op("Relu").WithRank(4)), 1u);
  EXPECT_EQ(count(Op("Relu").WithRank(3)), 0u);
  // Predicates on leaves test the captured value.
  EXPECT_EQ(count(Op("Conv")(Any().WithRank(4), Const(), Optional(Const()))), 1u);
  EXPECT_EQ(count(Op("Conv")(Any().WithRank(3), Const(), Optional(Const()))), 0u);
  EXPECT_EQ(count(Op("Conv")(Any(), Const().WithRank(4), Optional(Const().WithRank(1)))), 1u);
  EXPECT_EQ(count(Op("Conv")(Any(), Const(), Optional(Const().WithRank(2)))), 0u);
  // Int attributes: absent never matches.
  EXPECT_EQ(count(Op("Conv").WithAttr("group", 1)), 0u);
  EXPECT_EQ(count(Op("Conv").If([](const Graph&, const Node& n) {
              return n.attributes.GetInts("pads") == std::vector<int64_t>{1, 1, 1, 1};
            })),
            1u);
  EXPECT_EQ(count(Op("Conv").IfValue([](const Graph& graph, ValueId v) {
              return graph.value(v).type.shape[1] == 5;
            })),
            0u);
  // Constraints run on the match.
  Rule constrained("conv_relu", ConvReluPattern());
  constrained.Where([](const Match& m) { return m.capture_type(1).shape[0] == 4; });
  EXPECT_EQ(constrained.FindAll(g.graph).size(), 1u);
  constrained.Where([](const Match& m) { return !m.has_capture(2); });
  EXPECT_EQ(constrained.FindAll(g.graph).size(), 0u);
}

TEST(PatternTest, WithAttrComparesIntAttributes) {
  GraphBuilder builder("softmax");
  ValueId x = builder.Input("x", DType::kFloat32, {2, 3});
  builder.Output(builder.Node("Softmax", {x}, {{"axis", 0}}, "s0"));
  builder.Output(builder.Node("Softmax", {x}, {{"axis", 1}}, "s1"));
  StatusOr<Graph> graph = std::move(builder).Build();
  ASSERT_TRUE(graph.ok());
  std::vector<Match> m = Rule("s", Op("Softmax").WithAttr("axis", 1)).FindAll(*graph);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].root_node().name, "s1");
}

TEST(PatternTest, OtherDomainsDoNotMatch) {
  ConvRelu g = BuildConvRelu(true);
  NodeId relu = g.graph.value(g.relu).producer;
  g.graph.mutable_node(relu).domain = "com.example";
  EXPECT_TRUE(Rule("relu", Op("Relu")).FindAll(g.graph).empty());
  g.graph.mutable_node(relu).domain = "ai.onnx";
  EXPECT_EQ(Rule("relu", Op("Relu")).FindAll(g.graph).size(), 1u);
}

TEST(PatternTest, EscapingInteriorValuesAreRejected) {
  ConvRelu g = BuildConvRelu(true, /*conv_is_output=*/true);
  Rule rule("conv_relu", ConvReluPattern());
  Match match;
  // The pattern itself matches...
  EXPECT_TRUE(rule.MatchAt(g.graph, g.graph.value(g.relu).producer, &match));
  // ...but the conv's output is a graph output, so the group could not provide it.
  EXPECT_TRUE(rule.FindAll(g.graph).empty());

  // Same with the interior value read by a node outside the match.
  GraphBuilder builder("escape");
  ValueId x = builder.Input("x", DType::kFloat32, {4});
  ValueId r = builder.Node("Relu", {x}, {}, "relu");
  ValueId s = builder.Node("Sigmoid", {r}, {}, "sigmoid");
  builder.Output(builder.Node("Neg", {r}, {}, "neg"));
  builder.Output(s);
  StatusOr<Graph> graph = std::move(builder).Build();
  ASSERT_TRUE(graph.ok());
  EXPECT_TRUE(Rule("sig_relu", Op("Sigmoid")(Op("Relu")(Any()))).FindAll(*graph).empty());
  EXPECT_EQ(Rule("sig", Op("Sigmoid")(Any())).FindAll(*graph).size(), 1u);
}

TEST(PatternTest, NonConvexMatchIsRejected) {
  // add = Add(relu, sigmoid(relu)): {add, relu} leaves through sigmoid and comes back.
  GraphBuilder builder("nonconvex");
  ValueId x = builder.Input("x", DType::kFloat32, {4});
  ValueId r = builder.Node("Relu", {x}, {}, "relu");
  ValueId s = builder.Node("Sigmoid", {r}, {}, "sigmoid");
  builder.Output(builder.Node("Add", {r, s}, {}, "add"));
  StatusOr<Graph> graph = std::move(builder).Build();
  ASSERT_TRUE(graph.ok());
  Rule rule("add_relu", Op("Add")(Op("Relu")(Any()), Any()));
  Match match;
  NodeId add = graph->num_nodes() - 1;
  ASSERT_TRUE(rule.MatchAt(*graph, add, &match));
  SubGraph nodes(graph->num_nodes(), match.op_nodes);
  EXPECT_FALSE(nodes.IsConvex(*graph));
  EXPECT_TRUE(rule.FindAll(*graph).empty());
  // Taking the whole diamond is convex and matches.
  Rule whole("add_all", Op("Add")(Op("Relu")(Any()), Op("Sigmoid")(Op("Relu")(Any()))));
  std::vector<Match> all = whole.FindAll(*graph);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].op_nodes.size(), 4u);  // the Relu is numbered twice, once per path
}

TEST(RuleSetTest, EnumerateCandidatesKeepsRuleOrderAndDeduplicates) {
  ConvRelu g = BuildConvRelu(true);
  RuleSet rules;
  rules.Add(Rule("conv", Op("Conv")(Any(), Const(), Optional(Const()))))
      .Add(Fusion("conv_chain").Seed({OpKind::kOutEWiseFusable}).Grow({OpKind::kElementwise}))
      .Add(Rule("conv_relu", ConvReluPattern()));
  EXPECT_EQ(rules.size(), 3u);
  std::vector<Candidate> candidates = EnumerateCandidates(g.graph, rules);
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_EQ(candidates[0].rule, "conv");
  EXPECT_EQ(candidates[0].nodes.size(), 1);
  EXPECT_EQ(candidates[1].rule, "conv_relu");  // rules first, then fusions
  EXPECT_EQ(candidates[1].nodes.size(), 2);
  EXPECT_EQ(candidates[2].rule, "conv_chain");
  EXPECT_EQ(candidates[2].nodes, candidates[1].nodes);  // two rules may offer the same set
}

}  // namespace
}  // namespace collage

namespace collage {
namespace {

// Ops of another domain are named "domain::op" in patterns; a bare name is the ONNX op only.
TEST(PatternTest, OpsOfOtherDomainsAreNamedWithTheirDomain) {
  GraphBuilder builder("domains");
  const ValueId x = builder.Input("x", DType::kUInt8, {4});
  const ValueId s = builder.Scalar<float>("s", 0.5f);
  const ValueId z = builder.Scalar<uint8_t>("z", 0);
  const std::vector<ValueId> y =
      builder.NodeMulti("QLinearSigmoid", {x, s, z, s, z}, 1, {}, "sigmoid", "com.microsoft");
  builder.Output(y[0]);
  StatusOr<Graph> graph = std::move(builder).Build();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(Rule("qualified", Op("com.microsoft::QLinearSigmoid")).FindAll(*graph).size(), 1u);
  EXPECT_TRUE(Rule("bare", Op("QLinearSigmoid")).FindAll(*graph).empty());
}

}  // namespace
}  // namespace collage
