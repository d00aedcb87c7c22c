#include "search/two_level_search.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "search/plan_bench.h"
#include "collage/sdk/errors.h"

namespace collage {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

GenomeDecoder::GenomeDecoder(const Graph& graph, const Placement& op_level,
                             const std::vector<const Backend*>& graph_level,
                             const CandidateIndex& index)
    : graph_(graph), op_level_(op_level), graph_level_(graph_level) {
  const size_t groups = op_level.groups.size();
  for (const Backend* backend : graph_level_) {
    // A node the backend offers in some candidate; the largest candidate's rule names regions.
    std::vector<bool> offered(static_cast<size_t>(graph.num_nodes()), false);
    std::string rule;
    int largest = 0;
    for (const Candidate* c : index.Float32OffersOf(backend->name())) {
      for (NodeId n : c->nodes.Nodes()) offered[static_cast<size_t>(n)] = true;
      if (c->nodes.size() > largest) {
        largest = c->nodes.size();
        rule = c->rule;
      }
    }
    region_rule_.push_back(rule);
    std::vector<bool> can_take(groups, false);
    for (size_t g = 0; g < groups; ++g) {
      const PlacedGroup& group = op_level.groups[g];
      bool all = !rule.empty();
      for (NodeId n : group.nodes.Nodes()) all = all && offered[static_cast<size_t>(n)];
      can_take[g] = all;
    }
    can_take_group_.push_back(std::move(can_take));
  }
  for (const PlacedGroup& group : op_level.groups) {
    if (offered_.count({group.backend, ""})) continue;
    offered_[{group.backend, ""}] = "";  // once per backend
    for (const Candidate* c : index.Float32OffersOf(group.backend)) {
      offered_.try_emplace({group.backend, c->nodes.ToString()}, c->rule);
    }
  }
  merge_gene_ = 1 + static_cast<int>(graph_level_.size());
  for (size_t g = 0; g < groups; ++g) {
    std::vector<int> values = {0};
    for (size_t b = 0; b < graph_level_.size(); ++b) {
      if (can_take_group_[b][g]) values.push_back(1 + static_cast<int>(b));
    }
    if (g + 1 < groups && op_level.groups[g].backend == op_level.groups[g + 1].backend &&
        OfferedRule(op_level.groups[g].backend,
                    op_level.groups[g].nodes.Union(op_level.groups[g + 1].nodes))) {
      values.push_back(merge_gene_);
    }
    gene_values_.push_back(std::move(values));
  }
}

const std::string* GenomeDecoder::OfferedRule(const std::string& backend,
                                              const SubGraph& nodes) const {
  auto it = offered_.find({backend, nodes.ToString()});
  return it == offered_.end() ? nullptr : &it->second;
}

Genome GenomeDecoder::EverythingOn(size_t b) const {
  Genome genome(op_level_.groups.size(), 0);
  for (size_t g = 0; g < genome.size(); ++g) {
    if (can_take_group_[b][g]) genome[g] = 1 + static_cast<int>(b);
  }
  return genome;
}

Placement GenomeDecoder::Decode(const Genome& genome) const {
  Placement placement;
  for (size_t g = 0; g < op_level_.groups.size(); ++g) {
    PlacedGroup group = op_level_.groups[g];
    const int gene = g < genome.size() ? genome[g] : 0;
    const bool to_graph_level = gene >= 1 && gene < merge_gene_;
    if (to_graph_level) {
      group.backend = graph_level_[static_cast<size_t>(gene - 1)]->name();
      group.rule = region_rule_[static_cast<size_t>(gene - 1)];
    }
    if (!placement.groups.empty()) {
      PlacedGroup& last = placement.groups.back();
      const int previous_gene = genome[g - 1];
      // Consecutive groups in a runnable order: their union is convex and runs at the same
      // point, so merging keeps the placement valid.
      const bool same_region = to_graph_level && previous_gene == gene;
      if (same_region) {
        last.nodes = last.nodes.Union(group.nodes);
        continue;
      }
      if (previous_gene == merge_gene_ && !to_graph_level && last.backend == group.backend) {
        // Merged only into what a rule of the backend offers (a chain of merges stops
        // where no rule covers the whole).
        const SubGraph merged = last.nodes.Union(group.nodes);
        if (const std::string* rule = OfferedRule(group.backend, merged)) {
          last.nodes = merged;
          last.rule = *rule;
          continue;
        }
      }
    }
    placement.groups.push_back(std::move(group));
  }
  return placement;
}

StatusOr<TwoLevelResult> SearchTwoLevel(const Graph& graph, const PlanBench& bench,
                                        const Placement& op_level, const CandidateIndex& index,
                                        const OptimizeOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<const Backend*> graph_level;
  for (const Backend* backend : index.backends()) {
    if (backend->graph_level()) graph_level.push_back(backend);
  }

  GenomeDecoder decoder(graph, op_level, graph_level, index);
  std::vector<Genome> seeds = {Genome(op_level.groups.size(), 0)};
  for (size_t b = 0; b < graph_level.size(); ++b) seeds.push_back(decoder.EverythingOn(b));
  std::map<std::string, Fitness> by_placement;
  int placement_hits = 0;
  auto fitness = [&](const Genome& genome) -> Fitness {
    Placement placement = decoder.Decode(genome);
    const std::string key = PlacementKey(placement);
    if (auto it = by_placement.find(key); it != by_placement.end()) {
      ++placement_hits;
      return it->second;
    }
    Fitness f = bench.Measure(placement);
    by_placement.emplace(key, f);
    return f;
  };
  EvolutionOptions evolution;
  evolution.population = options.population;
  evolution.generations = options.generations;
  evolution.budget_seconds = options.budget_seconds;
  evolution.seed = options.seed;
  evolution.cancel = options.cancel;
  EvolutionResult evolved =
      Evolve(decoder.gene_values(), seeds, fitness, evolution, options.on_generation);
  TwoLevelResult result;
  result.generations = evolved.generations;
  result.evaluations = static_cast<int>(by_placement.size());
  result.genome_cache_hits = evolved.cache_hits + placement_hits;
  result.invalid_genomes = evolved.invalid;
  result.invalid_genome_reasons = evolved.invalid_reasons;
  result.evolve_seconds = SecondsSince(start);
  if (options.cancel.cancelled()) {
    return Status(StatusCode::kCancelled,
                  "interrupted during the graph-level search; every measurement made so far is kept");
  }
  if (!evolved.best_fitness.cost.is_value())
    return Internal("the graph-level search found no valid placement");

  result.best = decoder.Decode(evolved.best);
  return result;
}

}  // namespace collage
