// The spans an engine is offered between one node and the whole model
// (pattern/narrow_spans.h): cut at the graph's narrow points, of similar sizes, convex, and
// runs of them aligned as a binary tree's subtrees.
#include "pattern/narrow_spans.h"

#include <gtest/gtest.h>

#include <set>

#include "collage/sdk/rule.h"
#include "ops/graph_builder.h"
#include "zoo/zoo.h"

namespace collage {
namespace {

// Node 0: m = Neg(mask), read by every block (a value the whole model carries along, as an
// attention mask). Block k (nodes 3k+1 .. 3k+3): a = Relu(x); b = Mul(a, m); x = Add(b, x).
// Live across a block's end: x and m (2); inside it: 3.
Graph ResidualChain(int blocks) {
  GraphBuilder builder("residual_chain");
  ValueId x = builder.Input("x", DType::kFloat32, {2, 3});
  ValueId m = builder.Node("Neg", {builder.Input("mask", DType::kFloat32, {2, 3})}, {}, "m");
  for (int k = 0; k < blocks; ++k) {
    const std::string id = std::to_string(k);
    ValueId a = builder.Node("Relu", {x}, {}, "a" + id);
    ValueId b = builder.Node("Mul", {a, m}, {}, "b" + id);
    x = builder.Node("Add", {b, x}, {}, "x" + id);
  }
  builder.Output(x);
  StatusOr<Graph> graph = std::move(builder).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(*graph);
}

TEST(NarrowSpansTest, LiveValuesAreCountedAcrossEveryCut) {
  // Nodes m, a0, b0, x0, a1, b1, x1; block 0 reads x, a graph input, which is not counted.
  const Graph g = ResidualChain(2);
  EXPECT_EQ(ValuesLiveAcrossCuts(g), (std::vector<int>{1, 2, 2, 2, 3, 2}));
}

TEST(NarrowSpansTest, SpansEndAtBlockEndsAndNestAsATree) {
  const Graph g = ResidualChain(16);  // 49 nodes
  const std::vector<std::vector<NodeId>> spans = NarrowPointSpans(g, 4);
  // Four finest spans of about 12 nodes, two of two, none of four (the whole graph).
  ASSERT_EQ(spans.size(), 6u);
  std::vector<NodeId> covered;
  for (size_t i = 0; i < 4; ++i) {
    covered.insert(covered.end(), spans[i].begin(), spans[i].end());
    EXPECT_GE(spans[i].size(), 9u);
    EXPECT_LE(spans[i].size(), 15u);
  }
  std::vector<NodeId> all(static_cast<size_t>(g.num_nodes()));
  for (NodeId id = 0; id < g.num_nodes(); ++id) all[static_cast<size_t>(id)] = id;
  EXPECT_EQ(covered, all);
  for (const std::vector<NodeId>& span : spans) {
    EXPECT_TRUE(SubGraph(g.num_nodes(), span).IsConvex(g));
    EXPECT_EQ(span.back() % 3, 0) << "span ends inside a block at node " << span.back();
  }
  // Each coarser span is two finer ones.
  std::vector<NodeId> pair = spans[0];
  pair.insert(pair.end(), spans[1].begin(), spans[1].end());
  EXPECT_EQ(spans[4], pair);
}

TEST(NarrowSpansTest, SmallGraphsHaveNoSpans) {
  EXPECT_TRUE(NarrowPointSpans(ResidualChain(4), 8).empty());  // 13 nodes: one span at most
  EXPECT_TRUE(NarrowPointSpans(ResidualChain(16), 1).empty());
}

TEST(NarrowSpansTest, AFusionKeepsOnlySpansWhoseNodesAllPass) {
  const Graph g = ResidualChain(16);
  const std::vector<OpKind> all = {OpKind::kElementwise, OpKind::kBroadcast};
  Fusion fusion = Fusion("span").Seed(all).Grow(all).MaxOps(1000).NarrowSpans(4);
  EXPECT_EQ(fusion.Generate(g).size(), 6u);
  EXPECT_NE(fusion.Describe().find("narrow points"), std::string::npos) << fusion.Describe();
  // Refusing the last block's Add leaves the spans that do not hold it: two finest, one pair.
  fusion.Where([](const Graph&, const Node& n) { return n.name != "x15"; });
  EXPECT_EQ(fusion.Generate(g).size(), 4u);
}

TEST(NarrowSpansTest, ResNet50SpansEndWhereOneValueIsLive) {
  StatusOr<Graph> model = BuildZooModel("resnet50");
  ASSERT_TRUE(model.ok()) << model.status().message();
  const std::vector<int> live = ValuesLiveAcrossCuts(*model);
  const std::vector<std::vector<NodeId>> spans = NarrowPointSpans(*model, 8);
  ASSERT_EQ(spans.size(), 14u);  // 8 + 4 + 2
  std::set<NodeId> ends;
  for (const std::vector<NodeId>& span : spans) {
    EXPECT_TRUE(SubGraph(model->num_nodes(), span).IsConvex(*model));
    if (span.back() + 1 < model->num_nodes()) {
      EXPECT_EQ(live[static_cast<size_t>(span.back())], 1) << "after node " << span.back();
    }
  }
}

}  // namespace
}  // namespace collage
