#include <gtest/gtest.h>

#include <random>

#include "collage/sdk/subgraph.h"

namespace collage {
namespace {

// A random DAG: node i reads the outputs of up to two earlier nodes (or the graph input).
Graph RandomDag(int num_nodes, std::mt19937& rng) {
  Graph g;
  TensorType t{DType::kFloat32, {1}};
  ValueId x = g.AddValue("x", t);
  g.AddInput(x);
  std::vector<ValueId> outs;
  for (int i = 0; i < num_nodes; ++i) {
    Node n;
    n.name = "n" + std::to_string(i);
    n.op_type = "Add";
    int fan_in = i == 0 ? 1 : 1 + static_cast<int>(rng() % 2);
    for (int k = 0; k < fan_in; ++k) {
      n.inputs.push_back(i == 0 ? x : outs[rng() % outs.size()]);
    }
    ValueId out = g.AddValue("v" + std::to_string(i), t);
    n.outputs.push_back(out);
    outs.push_back(out);
    EXPECT_TRUE(g.AddNode(std::move(n)).ok());
  }
  g.AddOutput(outs.back());
  return g;
}

// Brute force: convex iff no non-member lies on a path between two members.
bool ConvexByReachability(const Graph& g, const SubGraph& s) {
  int n = g.num_nodes();
  std::vector<std::vector<bool>> reach(static_cast<size_t>(n), std::vector<bool>(static_cast<size_t>(n), false));
  for (NodeId i = n - 1; i >= 0; --i) {
    for (ValueId out : g.node(i).outputs) {
      for (NodeId c : g.value(out).consumers) {
        reach[static_cast<size_t>(i)][static_cast<size_t>(c)] = true;
        for (NodeId k = 0; k < n; ++k) {
          if (reach[static_cast<size_t>(c)][static_cast<size_t>(k)]) reach[static_cast<size_t>(i)][static_cast<size_t>(k)] = true;
        }
      }
    }
  }
  for (NodeId a : s.Nodes()) {
    for (NodeId mid = 0; mid < n; ++mid) {
      if (s.Contains(mid) || !reach[static_cast<size_t>(a)][static_cast<size_t>(mid)]) continue;
      for (NodeId b : s.Nodes()) {
        if (reach[static_cast<size_t>(mid)][static_cast<size_t>(b)]) return false;
      }
    }
  }
  return true;
}

TEST(SubGraphTest, SetOperations) {
  SubGraph a(130, {0, 64, 129});
  SubGraph b(130, {1, 129});
  EXPECT_EQ(a.size(), 3);
  EXPECT_TRUE(a.Contains(129));
  EXPECT_FALSE(a.Contains(1));
  EXPECT_FALSE(a.Contains(-1));
  EXPECT_TRUE(a.Overlaps(b));
  EXPECT_EQ(a.Union(b).Nodes(), (std::vector<NodeId>{0, 1, 64, 129}));
  a.Remove(129);
  EXPECT_FALSE(a.Overlaps(b));
  EXPECT_EQ(a.ToString(), "{0,64}");
  EXPECT_TRUE(SubGraph(5).empty());
}

TEST(SubGraphTest, DiamondBoundaryAndConvexity) {
  // x → a → b → d, a → c → d: {a, d} is not convex (paths through b and c), {a, b, c} is.
  Graph g;
  TensorType t{DType::kFloat32, {1}};
  ValueId x = g.AddValue("x", t);
  g.AddInput(x);
  auto add = [&](const std::string& name, std::vector<ValueId> in) {
    ValueId out = g.AddValue(name + "_out", t);
    Node n;
    n.name = name;
    n.op_type = "Relu";
    n.inputs = std::move(in);
    n.outputs = {out};
    EXPECT_TRUE(g.AddNode(std::move(n)).ok());
    return out;
  };
  ValueId a = add("a", {x});
  ValueId b = add("b", {a});
  ValueId c = add("c", {a});
  ValueId d = add("d", {b, c});
  g.AddOutput(d);

  SubGraph abc(g.num_nodes(), {0, 1, 2});
  EXPECT_TRUE(abc.IsConvex(g));
  EXPECT_EQ(abc.Inputs(g), (std::vector<ValueId>{x}));
  EXPECT_EQ(abc.Outputs(g), (std::vector<ValueId>{b, c}));
  SubGraph ad(g.num_nodes(), {0, 3});
  EXPECT_FALSE(ad.IsConvex(g));
  SubGraph bd(g.num_nodes(), {1, 3});
  EXPECT_TRUE(bd.IsConvex(g));  // c feeds d from outside, but no path leaves {b, d} and returns
  SubGraph d_only(g.num_nodes(), {3});
  EXPECT_EQ(d_only.Outputs(g), (std::vector<ValueId>{d}));
}

TEST(SubGraphTest, ConvexityMatchesBruteForceOnRandomDags) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    Graph g = RandomDag(8, rng);
    SubGraph s(g.num_nodes());
    for (NodeId n = 0; n < g.num_nodes(); ++n) {
      if (rng() % 3 == 0) s.Add(n);
    }
    EXPECT_EQ(s.IsConvex(g), ConvexByReachability(g, s)) << "trial " << trial << " set " << s.ToString();
  }
}

}  // namespace
}  // namespace collage
