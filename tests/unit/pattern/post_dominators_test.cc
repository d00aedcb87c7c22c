#include "pattern/post_dominators.h"

#include <gtest/gtest.h>

#include <random>

namespace collage {
namespace {

// A random DAG: node i reads one to three earlier values (graph inputs or node outputs);
// a few random nodes also become graph outputs, and the last always is.
Graph RandomDag(int num_nodes, std::mt19937& rng) {
  Graph g;
  TensorType t{DType::kFloat32, {1}};
  std::vector<ValueId> values{g.AddValue("x0", t), g.AddValue("x1", t)};
  g.AddInput(values[0]);
  g.AddInput(values[1]);
  for (int i = 0; i < num_nodes; ++i) {
    Node n;
    n.name = "n" + std::to_string(i);
    n.op_type = "Sum";
    int fan_in = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < fan_in; ++k) n.inputs.push_back(values[rng() % values.size()]);
    ValueId out = g.AddValue("v" + std::to_string(i), t);
    n.outputs.push_back(out);
    values.push_back(out);
    EXPECT_TRUE(g.AddNode(std::move(n)).ok());
    if (rng() % 6 == 0) g.AddOutput(out);
  }
  g.AddOutput(values.back());
  return g;
}

// Straight from the definition: p post-dominates n when the sink cannot be reached from n
// once p is removed; the immediate post-dominator is the strict one nearest n, i.e. (all
// strict post-dominators lying on every path, in topological order) the smallest id.
std::vector<NodeId> BruteForceIpdom(const Graph& g) {
  const NodeId sink = g.num_nodes();
  auto reaches_sink_without = [&](NodeId from, NodeId removed) {
    std::vector<bool> seen(static_cast<size_t>(sink) + 1, false);
    std::vector<NodeId> stack{from};
    seen[static_cast<size_t>(from)] = true;
    while (!stack.empty()) {
      NodeId n = stack.back();
      stack.pop_back();
      if (n == sink) return true;
      for (NodeId s : SuccessorsWithSink(g, n)) {
        if (s == removed || seen[static_cast<size_t>(s)]) continue;
        seen[static_cast<size_t>(s)] = true;
        stack.push_back(s);
      }
    }
    return false;
  };
  std::vector<NodeId> ipdom(static_cast<size_t>(sink), sink);
  for (NodeId n = 0; n < sink; ++n) {
    for (NodeId p = n + 1; p < sink; ++p) {
      if (!reaches_sink_without(n, p)) {
        ipdom[static_cast<size_t>(n)] = p;
        break;
      }
    }
  }
  return ipdom;
}

TEST(PostDominatorsTest, Diamond) {
  // a → {b, c} → d → e
  Graph g;
  TensorType t{DType::kFloat32, {1}};
  ValueId x = g.AddValue("x", t);
  g.AddInput(x);
  auto add = [&](const std::string& name, std::vector<ValueId> inputs) {
    ValueId out = g.AddValue(name, t);
    Node n;
    n.name = name;
    n.op_type = "Sum";
    n.inputs = std::move(inputs);
    n.outputs = {out};
    EXPECT_TRUE(g.AddNode(std::move(n)).ok());
    return out;
  };
  ValueId a = add("a", {x});
  ValueId b = add("b", {a});
  ValueId c = add("c", {a});
  ValueId d = add("d", {b, c});
  ValueId e = add("e", {d});
  g.AddOutput(e);
  EXPECT_EQ(ImmediatePostDominators(g), (std::vector<NodeId>{3, 3, 3, 4, 5}));
  // Making b a graph output: only the sink post-dominates a and b.
  g.AddOutput(b);
  EXPECT_EQ(ImmediatePostDominators(g), (std::vector<NodeId>{5, 5, 3, 4, 5}));
}

TEST(PostDominatorsTest, NodeWithoutConsumersFeedsTheSink) {
  Graph g;
  TensorType t{DType::kFloat32, {1}};
  ValueId x = g.AddValue("x", t);
  g.AddInput(x);
  ValueId a = g.AddValue("a", t), dead = g.AddValue("dead", t), b = g.AddValue("b", t);
  ASSERT_TRUE(g.AddNode(Node{"a", "Relu", "", {}, {x}, {a}}).ok());
  ASSERT_TRUE(g.AddNode(Node{"dead", "Relu", "", {}, {a}, {dead}}).ok());
  ASSERT_TRUE(g.AddNode(Node{"b", "Relu", "", {}, {a}, {b}}).ok());
  g.AddOutput(b);
  EXPECT_EQ(ImmediatePostDominators(g), (std::vector<NodeId>{3, 3, 3}));
}

TEST(PostDominatorsTest, MatchesBruteForceOnRandomDags) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    Graph g = RandomDag(1 + static_cast<int>(rng() % 30), rng);
    ASSERT_EQ(ImmediatePostDominators(g), BruteForceIpdom(g)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace collage
