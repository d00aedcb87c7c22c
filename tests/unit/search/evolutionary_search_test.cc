// The evolutionary search with a synthetic, deliberately non-additive cost (written in the
// test): groups 0 and 1 are cheaper together on the graph-level backend than apart, which no
// sum of per-group costs can express. The op-level search, given those per-group costs,
// keeps every group where it is; the evolutionary search finds the known optimum, and the
// same seed gives the same answer.
#include <gtest/gtest.h>

#include "search/evolutionary_search.h"
#include "search/op_level_search.h"

namespace collage {
namespace {

constexpr int kGroups = 12;

// Gene 1 costs 0.5 more than gene 0 in every group; genes 0 and 1 both being 1 saves 2.0 (a
// region compiled whole). Optimum: {1,1,0,...,0} at kGroups + 1.0 - 2.0; either gene alone
// is worse than none.
Fitness NonAdditive(const Genome& g) {
  double ms = 0;
  for (int gene : g) ms += gene == 1 ? 1.5 : 1.0;
  if (g[0] == 1 && g[1] == 1) ms -= 2.0;
  return {Cost::Milliseconds(ms), ""};
}

const double kOptimum = kGroups + 1.0 - 2.0;

std::vector<std::vector<int>> Binary() { return std::vector<std::vector<int>>(kGroups, {0, 1}); }

std::vector<Genome> Seeds() { return {Genome(kGroups, 0), Genome(kGroups, 1)}; }

TEST(EvolutionarySearchTest, FindsTheOptimumThatAdditiveCostsMiss) {
  // The op-level view: a chain of kGroups nodes, each with a candidate per gene, costing what
  // the gene costs alone.
  Graph g;
  const TensorType type{DType::kFloat32, {4}};
  ValueId v = g.AddValue("x", type);
  g.AddInput(v);
  std::vector<SearchCandidate> candidates;
  for (int i = 0; i < kGroups; ++i) {
    ValueId out = g.AddValue("v" + std::to_string(i), type);
    ASSERT_TRUE(g.AddNode({"n" + std::to_string(i), "Relu", "", {}, {v}, {out}}).ok());
    for (int gene : {0, 1}) {
      candidates.push_back({{gene == 0 ? "op" : "graph", {"rule", SubGraph(kGroups, {i})}}, {v}, {out},
                            {Layout::Plain()}, {Layout::Plain()}, gene == 0 ? 1.0 : 1.5});
    }
    v = out;
  }
  g.AddOutput(v);
  auto additive = SearchOpLevel(g, candidates, [](ValueId, const Layout&, const Layout&) { return 0.0; }, {});
  ASSERT_TRUE(additive.ok());
  Genome op_level_genome;
  for (int c : additive->groups) op_level_genome.push_back(candidates[static_cast<size_t>(c)].backend == "graph");
  EXPECT_EQ(op_level_genome, Genome(kGroups, 0));
  EXPECT_GT(NonAdditive(op_level_genome).cost.ms(), kOptimum);

  Genome optimum(kGroups, 0);
  optimum[0] = optimum[1] = 1;
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u}) {
    EvolutionOptions options;
    options.population = 16;
    options.generations = 100;
    options.seed = seed;
    int progress_calls = 0;
    EvolutionResult result = Evolve(Binary(), Seeds(), NonAdditive, options,
                                    [&](const GenerationProgress& p) {
                                      ++progress_calls;
                                      EXPECT_GE(p.evaluations, 1);
                                    });
    ASSERT_TRUE(result.best_fitness.cost.is_value());
    EXPECT_DOUBLE_EQ(result.best_fitness.cost.ms(), kOptimum) << "seed " << seed;
    EXPECT_EQ(result.best, optimum) << "seed " << seed;
    EXPECT_EQ(result.generations, 100);
    EXPECT_EQ(progress_calls, 101);
    EXPECT_GT(result.cache_hits, 0);  // genomes met again are not evaluated again
  }
}

TEST(EvolutionarySearchTest, TheSameSeedGivesTheSameResult) {
  EvolutionOptions options;
  options.generations = 15;
  options.seed = 3;
  int calls_a = 0, calls_b = 0;
  EvolutionResult a = Evolve(Binary(), Seeds(), [&](const Genome& g) { ++calls_a; return NonAdditive(g); }, options);
  EvolutionResult b = Evolve(Binary(), Seeds(), [&](const Genome& g) { ++calls_b; return NonAdditive(g); }, options);
  EXPECT_EQ(a.best, b.best);
  EXPECT_EQ(a.evaluations, b.evaluations);
  EXPECT_EQ(calls_a, calls_b);
  EXPECT_EQ(calls_a, a.evaluations);
  options.seed = 4;
  EvolutionResult c = Evolve(Binary(), Seeds(), NonAdditive, options);
  EXPECT_TRUE(c.best_fitness.cost.is_value());
}

TEST(EvolutionarySearchTest, InvalidGenomesNeverWinAndTheirReasonsAreKept) {
  // The cheapest genomes are invalid (as a plan that fails to compile or disagrees).
  auto fitness = [](const Genome& g) -> Fitness {
    int ones = 0;
    for (int gene : g) ones += gene;
    if (ones > kGroups / 2) return {Cost::Invalid(), "region does not compile"};
    return {Cost::Milliseconds(100.0 - ones), ""};
  };
  EvolutionOptions options;
  options.generations = 40;
  EvolutionResult result = Evolve(Binary(), Seeds(), fitness, options);
  ASSERT_TRUE(result.best_fitness.cost.is_value());
  int ones = 0;
  for (int gene : result.best) ones += gene;
  EXPECT_LE(ones, kGroups / 2);
  EXPECT_GT(result.invalid, 0);
  ASSERT_FALSE(result.invalid_reasons.empty());
  EXPECT_EQ(result.invalid_reasons[0], "region does not compile");
}

TEST(EvolutionarySearchTest, StopsAtTheTimeBudget) {
  EvolutionOptions options;
  options.generations = 1000000;
  options.budget_seconds = 0.2;
  const auto start = std::chrono::steady_clock::now();
  EvolutionResult result = Evolve(Binary(), Seeds(), NonAdditive, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);
  EXPECT_LT(result.generations, 1000000);
  EXPECT_TRUE(result.best_fitness.cost.is_value());
}

}  // namespace
}  // namespace collage
