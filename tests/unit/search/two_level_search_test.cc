// The two-level search on real backends: genomes decode into valid placements (regions of
// adjacent groups on a graph-level backend, merges of neighbours on one backend), and its
// answer is never the slower of the two it measures side by side at the end.
#include "search/two_level_search.h"

#include <gtest/gtest.h>

#include <random>

#include "collage/available_backends.h"
#include "optimize_test_util.h"
#include "search/optimizer.h"

namespace collage {
namespace {

using testing::QuickOptimize;
using testing::RepeatedBlocks;
using testing::TempDir;

TEST(TwoLevelSearchTest, GenomesDecodeIntoValidPlacements) {
  BackendRegistry& registry = GlobalBackendRegistry();
  const Backend* graph_level = registry.Find("xnnpack_graph");
  if (graph_level == nullptr) GTEST_SKIP() << "xnnpack is not built";
  Graph graph = RepeatedBlocks(3);
  auto op_level = PlaceOnSingleBackend(graph, *registry.Find("native"), registry);
  ASSERT_TRUE(op_level.ok());
  auto index =
      CandidateIndex::Build(graph, {"xnnpack_graph"}, registry, false, {Precision::kFloat32});
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  GenomeDecoder decoder(graph, *op_level, {graph_level}, *index);
  ASSERT_EQ(decoder.gene_values().size(), op_level->groups.size());
  EXPECT_EQ(decoder.Decode(Genome(op_level->groups.size(), 0)).groups.size(),
            op_level->groups.size());
  // Everything on the graph-level backend: the Conv→Relu→Add chain is one region.
  Placement all = decoder.Decode(decoder.EverythingOn(0));
  ASSERT_TRUE(ValidatePlacement(graph, all, registry).ok());
  ASSERT_EQ(all.groups.size(), 1u);
  EXPECT_EQ(all.groups[0].backend, "xnnpack_graph");
  EXPECT_EQ(all.groups[0].nodes.size(), graph.num_nodes());
  // Random genomes always decode into a placement the executable accepts.
  std::mt19937 rng(2);
  for (int trial = 0; trial < 50; ++trial) {
    Genome genome;
    for (const std::vector<int>& values : decoder.gene_values())
      genome.push_back(values[rng() % values.size()]);
    EXPECT_TRUE(ValidatePlacement(graph, decoder.Decode(genome), registry).ok()) << trial;
  }
}

// Same seed, same op-level placement, a synthetic cost of the decoded placement: the same
// plan, twice. The op-level placement is the native backend's, one group per node, so the
// synthetic cost always leaves the search something to improve (a measured op-level
// placement may already be the synthetic optimum, and then "better than the start" fails).
TEST(TwoLevelSearchTest, TheSameSeedAndCostsGiveTheSamePlan) {
  BackendRegistry& registry = GlobalBackendRegistry();
  const Backend* graph_level = registry.Find("xnnpack_graph");
  if (graph_level == nullptr) GTEST_SKIP() << "xnnpack is not built";
  Graph graph = RepeatedBlocks(4);
  auto op_level = PlaceOnSingleBackend(graph, *registry.Find("native"), registry);
  ASSERT_TRUE(op_level.ok()) << op_level.status().ToString();
  auto index =
      CandidateIndex::Build(graph, {"xnnpack_graph"}, registry, false, {Precision::kFloat32});
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  GenomeDecoder decoder(graph, *op_level, {graph_level}, *index);
  // Regions are cheap, small regions cheaper still: not a sum over the op-level groups.
  auto synthetic = [&](const Genome& genome) -> Fitness {
    double ms = 0;
    for (const PlacedGroup& g : decoder.Decode(genome).groups) {
      ms += g.backend == "xnnpack_graph" ? 0.5 + 0.1 * g.nodes.size() * g.nodes.size() : 1.0;
    }
    return {Cost::Milliseconds(ms), ""};
  };
  EvolutionOptions options;
  options.generations = 20;
  options.seed = 11;
  const std::vector<Genome> seeds = {Genome(decoder.gene_values().size(), 0),
                                     decoder.EverythingOn(0)};
  EvolutionResult a = Evolve(decoder.gene_values(), seeds, synthetic, options);
  EvolutionResult b = Evolve(decoder.gene_values(), seeds, synthetic, options);
  ASSERT_TRUE(a.best_fitness.cost.is_value() && b.best_fitness.cost.is_value());
  Placement pa = decoder.Decode(a.best), pb = decoder.Decode(b.best);
  ASSERT_EQ(pa.groups.size(), pb.groups.size());
  for (size_t g = 0; g < pa.groups.size(); ++g) {
    EXPECT_EQ(pa.groups[g].backend, pb.groups[g].backend);
    EXPECT_EQ(pa.groups[g].rule, pb.groups[g].rule);
    EXPECT_EQ(pa.groups[g].nodes, pb.groups[g].nodes);
  }
  EXPECT_LT(a.best_fitness.cost.ms(), synthetic(seeds[0]).cost.ms());
}

TEST(TwoLevelSearchTest, IsNeverSlowerThanTheOpLevelPlacementItMeasuresBeside) {
  TempDir dir;
  Graph graph = RepeatedBlocks(4);
  OptimizeOptions options = QuickOptimize(dir.file("costs.sqlite"));
  options.search = SearchKind::kTwoLevel;
  options.budget_seconds = 3;
  options.population = 6;
  options.generations = 4;
  int generations_seen = 0;
  options.on_generation = [&](const GenerationProgress&) { ++generations_seen; };
  auto result = OptimizePlacement(graph, GlobalBackendRegistry(), 1, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const OptimizeReport& report = result->report;
  EXPECT_EQ(report.search, SearchKind::kTwoLevel);
  EXPECT_GT(report.evaluations, 0);
  EXPECT_GT(generations_seen, 0);
  // The finalists: the op-level plan first, the two-level best second, then every backend
  // alone; the kept one measured no slower (beyond the tie tolerance) than any other.
  ASSERT_GE(report.finalists.size(), 3u);
  EXPECT_EQ(report.finalists[0].source, PlacementSource::OpLevel());
  EXPECT_EQ(report.finalists[1].source, PlacementSource::TwoLevel());
  int kept = 0;
  for (const FinalistReport& f : report.finalists) {
    if (!f.skipped.empty()) continue;
    EXPECT_GT(f.median_ms, 0) << PlacementSourceName(f.source);
    EXPECT_GE(f.ratio_to_kept, 0.99) << PlacementSourceName(f.source);
    kept += f.kept ? 1 : 0;
    if (f.kept) {
      EXPECT_EQ(f.source, report.kept_finalist);
    }
  }
  EXPECT_EQ(kept, 1);
  EXPECT_GT(report.measured_ms, 0);
  EXPECT_GE(report.decision_rounds, 1);
  EXPECT_TRUE(ValidatePlacement(graph, result->placement, GlobalBackendRegistry()).ok());
  EXPECT_EQ(report.groups.size(), result->placement.groups.size());
}

TEST(TwoLevelSearchTest, BadSettingsAreRefused) {
  TempDir dir;
  Graph graph = RepeatedBlocks(1);
  OptimizeOptions options = QuickOptimize(dir.file("costs.sqlite"));
  EXPECT_FALSE(SearchKindNamed("three-level").has_value());
  options.search = SearchKind::kTwoLevel;
  options.population = 1;
  EXPECT_FALSE(OptimizePlacement(graph, GlobalBackendRegistry(), 1, options).ok());
}

}  // namespace
}  // namespace collage
