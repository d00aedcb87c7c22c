// The op-level search against brute force: on many random small DAGs with synthetic costs
// (a cost table written by the test, standing in for measurements), the search with an
// unbounded beam finds exactly the cheapest placement that an exhaustive enumeration of
// every exact cover finds — conversions between layouts included, each paid once per value
// and layout as the executable runs them, and, on chains with skip connections (where the
// order of the groups is forced), library switches between consecutive groups.
#include "search/op_level_search.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>
#include <set>

#include "search/placement_estimate.h"

namespace collage {
namespace {

const Layout kOpaque = Layout::Opaque("b", "blocked", 256);

// A random DAG of `num_nodes` single-output nodes over one graph input; every value is a
// float32[1x4x2x2]. Node i reads one or two earlier values; values nobody reads are outputs.
Graph RandomDag(int num_nodes, std::mt19937& rng) {
  Graph g;
  const TensorType type{DType::kFloat32, {1, 4, 2, 2}};
  std::vector<ValueId> values = {g.AddValue("x", type)};
  g.AddInput(values[0]);
  for (int i = 0; i < num_nodes; ++i) {
    Node node;
    node.name = "n" + std::to_string(i);
    std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
    node.inputs.push_back(values[pick(rng)]);
    if (rng() % 2 == 0) {
      ValueId second = values[pick(rng)];
      if (second != node.inputs[0]) node.inputs.push_back(second);
    }
    node.op_type = node.inputs.size() == 2 ? "Add" : "Relu";
    node.outputs.push_back(g.AddValue("v" + std::to_string(i), type));
    values.push_back(node.outputs[0]);
    EXPECT_TRUE(g.AddNode(std::move(node)).ok());
  }
  for (size_t v = 1; v < values.size(); ++v) {
    if (g.value(values[v]).consumers.empty() || rng() % 5 == 0) g.AddOutput(values[v]);
  }
  return g;
}

SearchCandidate MakeCandidate(const Graph& g, const std::string& backend, const SubGraph& nodes,
                              std::mt19937& rng, bool random_layouts) {
  SearchCandidate c = SearchCandidateOf(g, {backend, {backend + "_rule", nodes}});
  auto layout = [&] {
    if (random_layouts) return rng() % 2 ? kOpaque : Layout::Plain();
    return backend == "b" ? kOpaque : Layout::Plain();
  };
  for (size_t i = 0; i < c.inputs.size(); ++i) c.input_layouts.push_back(layout());
  for (size_t i = 0; i < c.outputs.size(); ++i) c.output_layouts.push_back(layout());
  c.cost_ms = std::uniform_int_distribution<int>(1, 40)(rng) / 4.0;
  return c;
}

// Single-node candidates on two backends ("a" plain, "b" opaque) for every node, plus random
// connected convex groups of 2-3 nodes with random layouts.
std::vector<SearchCandidate> RandomCandidates(const Graph& g, std::mt19937& rng) {
  std::vector<SearchCandidate> candidates;
  const int n = g.num_nodes();
  for (NodeId i = 0; i < n; ++i) {
    for (const char* backend : {"a", "b"}) {
      candidates.push_back(MakeCandidate(g, backend, SubGraph(n, {i}), rng, false));
    }
  }
  std::set<std::string> seen;
  for (int attempt = 0; attempt < 3 * n; ++attempt) {
    SubGraph group(n, {static_cast<NodeId>(rng() % n)});
    const int size = 2 + static_cast<int>(rng() % 2);
    for (int grow = 1; grow < size; ++grow) {
      std::vector<NodeId> neighbours;
      for (NodeId m : group.Nodes()) {
        for (ValueId in : g.node(m).inputs) {
          if (g.value(in).producer >= 0 && !group.Contains(g.value(in).producer)) neighbours.push_back(g.value(in).producer);
        }
        for (NodeId consumer : g.value(g.node(m).outputs[0]).consumers) {
          if (!group.Contains(consumer)) neighbours.push_back(consumer);
        }
      }
      if (neighbours.empty()) break;
      group.Add(neighbours[rng() % neighbours.size()]);
    }
    if (group.size() < 2 || !group.IsConvex(g) || !seen.insert(group.ToString()).second) continue;
    candidates.push_back(MakeCandidate(g, rng() % 2 ? "a" : "b", group, rng, true));
  }
  return candidates;
}

// Synthetic conversion costs: a fixed price per (value, direction).
TransitionCost SyntheticTransitions(const Graph& g, std::mt19937& rng) {
  auto table = std::make_shared<std::map<std::pair<ValueId, bool>, double>>();
  for (ValueId v = 0; v < g.num_values(); ++v) {
    for (bool to_opaque : {false, true}) (*table)[{v, to_opaque}] = std::uniform_int_distribution<int>(0, 12)(rng) / 4.0;
  }
  return [table](ValueId v, const Layout& from, const Layout& to) {
    if (from == to) return 0.0;
    return table->at({v, to.kind() == LayoutKind::kOpaque});
  };
}

// The cost of one exact cover, computed independently of the search: group costs, plus for
// every value one conversion per distinct layout its readers (and, for outputs, the caller:
// plain) want other than the one its producer wrote. Infinite when the groups depend on
// each other in a cycle (no order runs them).
double CoverCost(const Graph& g, const std::vector<SearchCandidate>& all, const std::vector<int>& cover,
                 const TransitionCost& transition) {
  const size_t k = cover.size();
  std::vector<int> group_of(static_cast<size_t>(g.num_nodes()));
  for (size_t i = 0; i < k; ++i) {
    for (NodeId n : all[static_cast<size_t>(cover[i])].nodes.Nodes()) group_of[static_cast<size_t>(n)] = static_cast<int>(i);
  }
  std::vector<std::set<int>> after(k);
  for (size_t i = 0; i < k; ++i) {
    for (ValueId in : all[static_cast<size_t>(cover[i])].inputs) {
      NodeId p = g.value(in).producer;
      if (p >= 0) after[static_cast<size_t>(group_of[static_cast<size_t>(p)])].insert(static_cast<int>(i));
    }
  }
  std::vector<int> mark(k, 0);
  std::function<bool(int)> cyclic = [&](int i) {
    if (mark[static_cast<size_t>(i)] == 1) return true;
    if (mark[static_cast<size_t>(i)] == 2) return false;
    mark[static_cast<size_t>(i)] = 1;
    for (int j : after[static_cast<size_t>(i)]) {
      if (cyclic(j)) return true;
    }
    mark[static_cast<size_t>(i)] = 2;
    return false;
  };
  for (size_t i = 0; i < k; ++i) {
    if (cyclic(static_cast<int>(i))) return std::numeric_limits<double>::infinity();
  }
  std::map<ValueId, Layout> home;
  for (ValueId in : g.inputs()) home[in] = Layout::Plain();
  std::map<ValueId, std::vector<Layout>> wanted;
  double cost = 0;
  for (int c : cover) {
    const SearchCandidate& cand = all[static_cast<size_t>(c)];
    cost += cand.cost_ms;
    for (size_t o = 0; o < cand.outputs.size(); ++o) home[cand.outputs[o]] = cand.output_layouts[o];
    for (size_t i = 0; i < cand.inputs.size(); ++i) wanted[cand.inputs[i]].push_back(cand.input_layouts[i]);
  }
  for (ValueId out : g.outputs()) wanted[out].push_back(Layout::Plain());
  for (auto& [value, layouts] : wanted) {
    std::vector<Layout> distinct;
    for (const Layout& l : layouts) {
      if (l != home.at(value) && std::find(distinct.begin(), distinct.end(), l) == distinct.end()) distinct.push_back(l);
    }
    for (const Layout& l : distinct) cost += transition(value, home.at(value), l);
  }
  return cost;
}

// The cheapest of every exact cover of the nodes by candidates, whatever the order, each
// priced by `cover_cost`.
double BruteForce(const Graph& g, const std::vector<SearchCandidate>& all,
                  const std::function<double(const std::vector<int>&)>& cover_cost) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> cover;
  std::function<void(const SubGraph&)> recurse = [&](const SubGraph& covered) {
    if (covered.size() == g.num_nodes()) {
      best = std::min(best, cover_cost(cover));
      return;
    }
    NodeId first = 0;
    while (covered.Contains(first)) ++first;
    for (size_t c = 0; c < all.size(); ++c) {
      if (!all[c].nodes.Contains(first) || all[c].nodes.Overlaps(covered)) continue;
      cover.push_back(static_cast<int>(c));
      recurse(covered.Union(all[c].nodes));
      cover.pop_back();
    }
  };
  recurse(SubGraph(g.num_nodes()));
  return best;
}

TEST(OpLevelSearchTest, MatchesBruteForceOnRandomDags) {
  int compared = 0;
  for (unsigned seed = 0; seed < 300; ++seed) {
    std::mt19937 rng(seed);
    Graph g = RandomDag(4 + static_cast<int>(seed % 5), rng);
    std::vector<SearchCandidate> candidates = RandomCandidates(g, rng);
    TransitionCost transition = SyntheticTransitions(g, rng);
    auto found = SearchOpLevel(g, candidates, transition, {});
    ASSERT_TRUE(found.ok()) << found.status().ToString();
    EXPECT_EQ(found->states_cut, 0);
    const double expected =
        BruteForce(g, candidates, [&](const std::vector<int>& cover) { return CoverCost(g, candidates, cover, transition); });
    ASSERT_NEAR(found->cost_ms, expected, 1e-9) << "seed " << seed;
    // The groups it returns cost what it says, in an order the executable can run.
    EXPECT_NEAR(CoverCost(g, candidates, found->groups, transition), found->cost_ms, 1e-9) << "seed " << seed;
    SubGraph covered(g.num_nodes());
    for (int c : found->groups) {
      for (ValueId in : candidates[static_cast<size_t>(c)].inputs) {
        NodeId p = g.value(in).producer;
        EXPECT_TRUE(p < 0 || covered.Contains(p)) << "seed " << seed << ": group runs before its input";
      }
      covered = covered.Union(candidates[static_cast<size_t>(c)].nodes);
    }
    EXPECT_EQ(covered.size(), g.num_nodes());
    ++compared;
  }
  EXPECT_EQ(compared, 300);
}

TEST(OpLevelSearchTest, ANarrowBeamIsReportedAndNeverBeatsTheExactSearch) {
  int cut_somewhere = 0;
  for (unsigned seed = 0; seed < 50; ++seed) {
    std::mt19937 rng(seed);
    Graph g = RandomDag(8, rng);
    std::vector<SearchCandidate> candidates = RandomCandidates(g, rng);
    TransitionCost transition = SyntheticTransitions(g, rng);
    auto exact = SearchOpLevel(g, candidates, transition, {});
    auto narrow = SearchOpLevel(g, candidates, transition, {.beam_width = 1});
    ASSERT_TRUE(exact.ok() && narrow.ok());
    EXPECT_GE(narrow->cost_ms, exact->cost_ms - 1e-9);
    if (narrow->states_cut > 0) {
      ++cut_somewhere;
      EXPECT_GT(narrow->levels_cut, 0);
    }
  }
  EXPECT_GT(cut_somewhere, 0);
}

// x -> p ; q(p), r(p) both read p in the opaque layout: the conversion is paid once.
TEST(OpLevelSearchTest, AConversionIsPaidOncePerValueAndLayout) {
  Graph g;
  const TensorType type{DType::kFloat32, {1, 4, 2, 2}};
  ValueId x = g.AddValue("x", type), p = g.AddValue("p", type), q = g.AddValue("q", type),
          r = g.AddValue("r", type);
  g.AddInput(x);
  ASSERT_TRUE(g.AddNode({"np", "Relu", "", {}, {x}, {p}}).ok());
  ASSERT_TRUE(g.AddNode({"nq", "Relu", "", {}, {p}, {q}}).ok());
  ASSERT_TRUE(g.AddNode({"nr", "Relu", "", {}, {p}, {r}}).ok());
  g.AddOutput(q);
  g.AddOutput(r);
  auto single = [&](const std::string& backend, NodeId n, ValueId in, ValueId out, Layout in_layout,
                    double ms) {
    return SearchCandidate{
        {backend, {"rule", SubGraph(3, {n})}}, {in}, {out}, {in_layout}, {Layout::Plain()}, ms};
  };
  std::vector<SearchCandidate> candidates = {single("a", 0, x, p, Layout::Plain(), 1.0),
                                             single("b", 1, p, q, kOpaque, 1.0), single("a", 1, p, q, Layout::Plain(), 4.0),
                                             single("b", 2, p, r, kOpaque, 1.0), single("a", 2, p, r, Layout::Plain(), 4.0)};
  int asked = 0;
  TransitionCost transition = [&](ValueId, const Layout& from, const Layout& to) {
    ++asked;
    return from == to ? 0.0 : 2.5;
  };
  auto found = SearchOpLevel(g, candidates, transition, {});
  ASSERT_TRUE(found.ok());
  // 1 + 1 + 1 for the kernels, 2.5 once for p in the opaque layout (two consumers share it).
  EXPECT_DOUBLE_EQ(found->cost_ms, 5.5);
  EXPECT_GT(asked, 0);
}

// A group holding a node and the Add of a branch that comes later in topological order
// (a convolution fused with a residual Add) must be reachable.
TEST(OpLevelSearchTest, FindsAGroupThatWaitsForALaterBranch) {
  Graph g;
  const TensorType type{DType::kFloat32, {1, 4, 2, 2}};
  ValueId x = g.AddValue("x", type), a = g.AddValue("a", type), b = g.AddValue("b", type),
          s = g.AddValue("s", type);
  g.AddInput(x);
  ASSERT_TRUE(g.AddNode({"conv_a", "Relu", "", {}, {x}, {a}}).ok());     // 0
  ASSERT_TRUE(g.AddNode({"conv_b", "Relu", "", {}, {x}, {b}}).ok());     // 1
  ASSERT_TRUE(g.AddNode({"add", "Add", "", {}, {a, b}, {s}}).ok());      // 2
  g.AddOutput(s);
  const Layout plain = Layout::Plain();
  std::vector<SearchCandidate> candidates = {
      {{"a", {"single", SubGraph(3, {0})}}, {x}, {a}, {plain}, {plain}, 3.0},
      {{"a", {"single", SubGraph(3, {1})}}, {x}, {b}, {plain}, {plain}, 3.0},
      {{"a", {"single", SubGraph(3, {2})}}, {a, b}, {s}, {plain, plain}, {plain}, 3.0},
      // conv_a + add reads b, computed by node 1, which comes after node 0.
      {{"b", {"conv_add", SubGraph(3, {0, 2})}}, {x, b}, {s}, {plain, plain}, {plain}, 3.5},
  };
  TransitionCost none = [](ValueId, const Layout&, const Layout&) { return 0.0; };
  auto found = SearchOpLevel(g, candidates, none, {});
  ASSERT_TRUE(found.ok());
  EXPECT_DOUBLE_EQ(found->cost_ms, 6.5);
  ASSERT_EQ(found->groups.size(), 2u);
  EXPECT_EQ(found->groups[0], 1);  // conv_b first, then the fused group
  EXPECT_EQ(found->groups[1], 3);
}

// A chain with skip connections: node i reads node i-1's output (so the nodes, and the groups
// of any cover, have one order only) and sometimes an earlier value too.
Graph RandomChainWithSkips(int num_nodes, std::mt19937& rng) {
  Graph g;
  const TensorType type{DType::kFloat32, {1, 4, 2, 2}};
  std::vector<ValueId> values = {g.AddValue("x", type)};
  g.AddInput(values[0]);
  for (int i = 0; i < num_nodes; ++i) {
    Node node;
    node.name = "n" + std::to_string(i);
    node.inputs.push_back(values.back());
    if (values.size() > 2 && rng() % 2 == 0) {
      ValueId skip = values[std::uniform_int_distribution<size_t>(0, values.size() - 2)(rng)];
      node.inputs.push_back(skip);
    }
    node.op_type = node.inputs.size() == 2 ? "Add" : "Relu";
    node.outputs.push_back(g.AddValue("v" + std::to_string(i), type));
    values.push_back(node.outputs[0]);
    EXPECT_TRUE(g.AddNode(std::move(node)).ok());
  }
  g.AddOutput(values.back());
  if (rng() % 2 == 0) g.AddOutput(values[values.size() / 2]);
  return g;
}

// Switching from backend "a" to "b" and back costs differently by direction.
double SyntheticLibrarySwitch(const std::string& from, const std::string& to) {
  if (from == to) return 0;
  return from == "a" ? 0.75 : 1.25;
}

// The cover's cost plus a switch wherever consecutive groups (in their only order: by first
// node) are of different backends.
double CoverCostWithSwitches(const Graph& g, const std::vector<SearchCandidate>& all,
                             std::vector<int> cover, const TransitionCost& transition) {
  std::sort(cover.begin(), cover.end(), [&](int x, int y) {
    return all[static_cast<size_t>(x)].nodes.Nodes().front() <
           all[static_cast<size_t>(y)].nodes.Nodes().front();
  });
  double cost = CoverCost(g, all, cover, transition);
  for (size_t i = 1; i < cover.size(); ++i) {
    cost += SyntheticLibrarySwitch(all[static_cast<size_t>(cover[i - 1])].backend,
                                   all[static_cast<size_t>(cover[i])].backend);
  }
  return cost;
}

TEST(OpLevelSearchTest, LibrarySwitchesMatchBruteForceOnChainsWithSkips) {
  int switched = 0;
  for (unsigned seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(seed);
    Graph g = RandomChainWithSkips(4 + static_cast<int>(seed % 6), rng);
    std::vector<SearchCandidate> candidates = RandomCandidates(g, rng);
    TransitionCost transition = SyntheticTransitions(g, rng);
    auto found = SearchOpLevel(g, candidates, transition, SyntheticLibrarySwitch, {});
    ASSERT_TRUE(found.ok()) << found.status().ToString();
    const double best = BruteForce(g, candidates, [&](const std::vector<int>& cover) {
      return CoverCostWithSwitches(g, candidates, cover, transition);
    });
    ASSERT_NEAR(found->cost_ms, best, 1e-9) << "seed " << seed;
    // The placement it returns is priced the same by EstimatePlacement.
    Placement placement;
    for (int c : found->groups) placement.groups.push_back(candidates[static_cast<size_t>(c)]);
    std::optional<double> estimate =
        EstimatePlacement(g, placement, candidates, transition, SyntheticLibrarySwitch);
    ASSERT_TRUE(estimate.has_value());
    EXPECT_NEAR(*estimate, found->cost_ms, 1e-9) << "seed " << seed;
    // Without switch costs the same search may choose differently, never worse.
    auto free_switch = SearchOpLevel(g, candidates, transition, {});
    ASSERT_TRUE(free_switch.ok());
    EXPECT_LE(free_switch->cost_ms, found->cost_ms + 1e-9);
    if (free_switch->cost_ms < found->cost_ms - 1e-9) ++switched;
  }
  EXPECT_GT(switched, 0)
      << "the switch costs never changed a cost: the test does not exercise them";
}

// Two backends: alternating would be cheapest per kernel, but each switch costs more than it
// saves, so the search keeps the chain on one backend.
TEST(OpLevelSearchTest, ASwitchThatCostsMoreThanItSavesIsAvoided) {
  Graph g;
  const TensorType type{DType::kFloat32, {4}};
  ValueId x = g.AddValue("x", type), a = g.AddValue("a", type), b = g.AddValue("b", type),
          c = g.AddValue("c", type);
  g.AddInput(x);
  ASSERT_TRUE(g.AddNode({"n0", "Relu", "", {}, {x}, {a}}).ok());
  ASSERT_TRUE(g.AddNode({"n1", "Relu", "", {}, {a}, {b}}).ok());
  ASSERT_TRUE(g.AddNode({"n2", "Relu", "", {}, {b}, {c}}).ok());
  g.AddOutput(c);
  const Layout plain = Layout::Plain();
  auto single = [&](const std::string& backend, NodeId n, ValueId in, ValueId out, double ms) {
    return SearchCandidate{{backend, {"rule", SubGraph(3, {n})}}, {in}, {out}, {plain}, {plain}, ms};
  };
  std::vector<SearchCandidate> candidates = {single("a", 0, x, a, 1.0), single("b", 0, x, a, 2.0),
                                             single("a", 1, a, b, 2.0), single("b", 1, a, b, 1.0),
                                             single("a", 2, b, c, 1.0), single("b", 2, b, c, 2.0)};
  TransitionCost none = [](ValueId, const Layout&, const Layout&) { return 0.0; };
  auto free_switch = SearchOpLevel(g, candidates, none, {});
  ASSERT_TRUE(free_switch.ok());
  EXPECT_DOUBLE_EQ(free_switch->cost_ms, 3.0);  // a, b, a
  auto priced = SearchOpLevel(g, candidates, none, SyntheticLibrarySwitch, {});
  ASSERT_TRUE(priced.ok());
  EXPECT_DOUBLE_EQ(priced->cost_ms, 4.0);  // a, a, a: 1 + 2 + 1, no switch
  EXPECT_EQ(priced->groups, (std::vector<int>{0, 2, 4}));
}

TEST(OpLevelSearchTest, ANodeWithoutCandidatesIsNamed) {
  Graph g;
  const TensorType type{DType::kFloat32, {2}};
  ValueId x = g.AddValue("x", type), y = g.AddValue("y", type);
  g.AddInput(x);
  ASSERT_TRUE(g.AddNode({"lonely", "Relu", "", {}, {x}, {y}}).ok());
  g.AddOutput(y);
  auto found = SearchOpLevel(g, {}, [](ValueId, const Layout&, const Layout&) { return 0.0; }, {});
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.status().message().find("lonely"), std::string::npos) << found.status().message();
}

}  // namespace
}  // namespace collage
