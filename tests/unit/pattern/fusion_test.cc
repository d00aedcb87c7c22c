#include <gtest/gtest.h>

#include <set>

#include "ops/graph_builder.h"
#include "collage/sdk/op_registry.h"
#include "collage/sdk/rule.h"
#include "zoo/zoo.h"

namespace collage {
namespace {

std::vector<std::vector<NodeId>> NodeLists(const std::vector<SubGraph>& groups) {
  std::vector<std::vector<NodeId>> lists;
  for (const SubGraph& g : groups) lists.push_back(g.Nodes());
  return lists;
}

// 0 a=Relu(x); 1 b=Sigmoid(a); 2 c=Tanh(a); 3 d=Add(b,c); 4 e=Neg(d) → output
Graph Diamond() {
  GraphBuilder builder("diamond");
  ValueId x = builder.Input("x", DType::kFloat32, {2, 3});
  ValueId a = builder.Node("Relu", {x}, {}, "a");
  ValueId b = builder.Node("Sigmoid", {a}, {}, "b");
  ValueId c = builder.Node("Tanh", {a}, {}, "c");
  ValueId d = builder.Node("Add", {b, c}, {}, "d");
  builder.Output(builder.Node("Neg", {d}, {}, "e"));
  StatusOr<Graph> graph = std::move(builder).Build();
  EXPECT_TRUE(graph.ok());
  return std::move(*graph);
}

TEST(FusionTest, DiamondGrowsAlongPostDominators) {
  Graph g = Diamond();
  Fusion fusion = Fusion("ew").Seed({OpKind::kElementwise, OpKind::kBroadcast})
                      .Grow({OpKind::kElementwise, OpKind::kBroadcast});
  EXPECT_EQ(NodeLists(fusion.Generate(g)),
            (std::vector<std::vector<NodeId>>{
                {0, 1, 2, 3}, {0, 1, 2, 3, 4}, {1, 3}, {1, 3, 4}, {2, 3}, {2, 3, 4}, {3, 4}}));
  // Growing from `a` jumps straight to size 4: with MaxOps(3) it emits nothing.
  fusion.MaxOps(3);
  EXPECT_EQ(NodeLists(fusion.Generate(g)),
            (std::vector<std::vector<NodeId>>{{1, 3}, {1, 3, 4}, {2, 3}, {2, 3, 4}, {3, 4}}));
  fusion.MaxOps(8).MinOps(4);
  EXPECT_EQ(NodeLists(fusion.Generate(g)),
            (std::vector<std::vector<NodeId>>{{0, 1, 2, 3}, {0, 1, 2, 3, 4}}));
  fusion.MinOps(1).MaxOps(1);
  EXPECT_EQ(fusion.Generate(g).size(), 5u);  // every node alone
}

TEST(FusionTest, DiamondStopsAtKindsAndPredicates) {
  Graph g = Diamond();
  // Add is a broadcast op: not a grow kind here, so nothing grows past the branches.
  Fusion fusion = Fusion("ew").Seed({OpKind::kElementwise}).Grow({OpKind::kElementwise});
  EXPECT_TRUE(fusion.Generate(g).empty());
  // The seed's kind need not be a grow kind.
  Fusion from_add = Fusion("ew").Seed({OpKind::kBroadcast}).Grow({OpKind::kElementwise});
  EXPECT_EQ(NodeLists(from_add.Generate(g)), (std::vector<std::vector<NodeId>>{{3, 4}}));
  // A predicate refusing Tanh stops the group from `a` (it would contain c).
  Fusion no_tanh = Fusion("ew").Seed({OpKind::kElementwise, OpKind::kBroadcast})
                       .Grow({OpKind::kElementwise, OpKind::kBroadcast})
                       .Where([](const Graph&, const Node& n) { return n.op_type != "Tanh"; });
  EXPECT_EQ(NodeLists(no_tanh.Generate(g)),
            (std::vector<std::vector<NodeId>>{{1, 3}, {1, 3, 4}, {3, 4}}));
}

// x → Conv → Relu → Sigmoid → Relu → Transpose → Relu → output
Graph ConvChain() {
  GraphBuilder builder("chain");
  ValueId x = builder.Input("x", DType::kFloat32, {1, 3, 8, 8});
  ValueId w = builder.RandomNormal("w", {4, 3, 1, 1}, 0.1f);
  ValueId v = builder.Node("Conv", {x, w}, {}, "conv");
  v = builder.Node("Relu", {v}, {}, "r1");
  v = builder.Node("Sigmoid", {v}, {}, "s");
  v = builder.Node("Relu", {v}, {}, "r2");
  v = builder.Node("Transpose", {v}, {{"perm", {0, 2, 3, 1}}}, "t");
  v = builder.Node("Relu", {v}, {}, "r3");
  builder.Output(v);
  StatusOr<Graph> graph = std::move(builder).Build();
  EXPECT_TRUE(graph.ok());
  return std::move(*graph);
}

TEST(FusionTest, ChainsRespectMinAndMaxOps) {
  Graph g = ConvChain();
  Fusion fusion = Fusion("conv_ew").Seed({OpKind::kOutEWiseFusable}).Grow({OpKind::kElementwise});
  EXPECT_EQ(NodeLists(fusion.Generate(g)),
            (std::vector<std::vector<NodeId>>{{0, 1}, {0, 1, 2}, {0, 1, 2, 3}}));
  fusion.MaxOps(3);
  EXPECT_EQ(NodeLists(fusion.Generate(g)), (std::vector<std::vector<NodeId>>{{0, 1}, {0, 1, 2}}));
  fusion.MinOps(3);
  EXPECT_EQ(NodeLists(fusion.Generate(g)), (std::vector<std::vector<NodeId>>{{0, 1, 2}}));
  // Growing through injective ops reaches past the Transpose.
  Fusion wide = Fusion("w").Seed({OpKind::kOutEWiseFusable})
                    .Grow({OpKind::kElementwise, OpKind::kInjective});
  EXPECT_EQ(wide.Generate(g).back().Nodes(), (std::vector<NodeId>{0, 1, 2, 3, 4, 5}));
}

TEST(FusionTest, MaximalRegionsCoverWhatPassesInConvexRegions) {
  Graph g = Diamond();
  const std::vector<OpKind> all = {OpKind::kElementwise, OpKind::kBroadcast};
  Fusion fusion = Fusion("whole").Seed(all).Grow(all).MaxOps(100).MaximalRegions();
  EXPECT_EQ(NodeLists(fusion.Generate(g)), (std::vector<std::vector<NodeId>>{{0, 1, 2, 3, 4}}));
  // Refusing `c` splits the diamond: `d` depends on the region through `c`, so it starts the
  // next region instead of making the first one non-convex.
  fusion.Where([](const Graph&, const Node& n) { return n.op_type != "Tanh"; });
  EXPECT_EQ(NodeLists(fusion.Generate(g)), (std::vector<std::vector<NodeId>>{{0, 1}, {3, 4}}));
  // MaxOps bounds a region; a node left alone (below MinOps) is no region.
  Fusion bounded = Fusion("whole").Seed(all).Grow(all).MaxOps(2).MaximalRegions();
  EXPECT_EQ(NodeLists(bounded.Generate(g)), (std::vector<std::vector<NodeId>>{{0, 1}, {2, 3}}));
  EXPECT_NE(bounded.Describe().find("maximal"), std::string::npos) << bounded.Describe();
}

TEST(FusionTest, MaximalRegionsSpanBranchesThatPostDominatorsCannot) {
  // Two graph outputs and an independent second input: no node post-dominates another, so
  // post-dominator chains stay single nodes, but the whole graph is one convex region.
  GraphBuilder builder("outputs");
  ValueId x = builder.Input("x", DType::kFloat32, {2, 3});
  ValueId y = builder.Input("y", DType::kFloat32, {2, 3});
  ValueId a = builder.Node("Relu", {x}, {}, "a");
  builder.Output(a);
  builder.Output(builder.Node("Sigmoid", {a}, {}, "b"));
  builder.Output(builder.Node("Neg", {y}, {}, "c"));
  StatusOr<Graph> g = std::move(builder).Build();
  ASSERT_TRUE(g.ok());
  const std::vector<OpKind> all = {OpKind::kElementwise};
  EXPECT_TRUE(Fusion("chain").Seed(all).Grow(all).Generate(*g).empty());
  EXPECT_EQ(NodeLists(Fusion("whole").Seed(all).Grow(all).MaximalRegions().Generate(*g)),
            (std::vector<std::vector<NodeId>>{{0, 1, 2}}));
}

TEST(FusionTest, UnknownOpsAreNeverFused) {
  Graph g = ConvChain();
  g.mutable_node(2).op_type = "NoSuchOp";
  Fusion fusion = Fusion("conv_ew").Seed({OpKind::kOutEWiseFusable}).Grow({OpKind::kElementwise});
  EXPECT_EQ(NodeLists(fusion.Generate(g)), (std::vector<std::vector<NodeId>>{{0, 1}}));
}

TEST(FusionTest, ResNet50ConvReluGroups) {
  StatusOr<Graph> model = BuildZooModel("resnet50");
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Graph& g = *model;
  Fusion fusion = Fusion("conv_ew").Seed({OpKind::kOutEWiseFusable})
                      .Grow({OpKind::kElementwise, OpKind::kBroadcast}).MaxOps(4);
  std::vector<SubGraph> groups = fusion.Generate(g);
  ASSERT_FALSE(groups.empty());
  std::set<std::vector<NodeId>> distinct;
  int conv_relu = 0;
  for (const SubGraph& group : groups) {
    EXPECT_TRUE(group.IsConvex(g)) << group.ToString();
    EXPECT_GE(group.size(), 2);
    EXPECT_LE(group.size(), 4);
    EXPECT_TRUE(distinct.insert(group.Nodes()).second) << "duplicate " << group.ToString();
    std::vector<NodeId> nodes = group.Nodes();
    const OpDef* seed = OpRegistry::Global().Find("", g.node(nodes[0]).op_type);
    EXPECT_EQ(seed->kind, OpKind::kOutEWiseFusable);
    if (nodes.size() == 2 && g.node(nodes[0]).op_type == "Conv" &&
        g.node(nodes[1]).op_type == "Relu") {
      ++conv_relu;
    }
    // Only the last node's outputs leave the group.
    for (ValueId out : group.Outputs(g)) EXPECT_EQ(g.value(out).producer, nodes.back());
  }
  // Every Conv followed by a Relu in ResNet-50 (the convs before a residual Add are not).
  EXPECT_GE(conv_relu, 30);

  RuleSet rules;
  rules.Add(Rule("conv_relu", Op("Relu")(Op("Conv")(Any(), Const(), Optional(Const())))));
  std::vector<Candidate> candidates = EnumerateCandidates(g, rules);
  EXPECT_EQ(static_cast<int>(candidates.size()), conv_relu);
  for (const Candidate& c : candidates) EXPECT_TRUE(c.nodes.IsConvex(g));
}

}  // namespace
}  // namespace collage
