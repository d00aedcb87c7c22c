// The evolutionary search behind the graph-level placement (the paper's second level,
// DESIGN.md 1.5), written over genomes and a fitness function only, so that it can be tested
// with synthetic, deliberately non-additive costs.
//
// A genome is one gene per op-level group, each gene a small integer (what the gene values
// mean is the decoder's business, src/search/two_level_search.h). The population starts
// from the given seeds plus random genomes; each generation keeps the elites, and fills the
// rest by tournament selection, two-point crossover and per-gene mutation. Fitness is asked
// once per distinct genome (cached); an invalid genome never wins. It stops after the
// generation cap or the time budget, whichever comes first; a fixed seed and a deterministic
// fitness give the same result every time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collage/optimize.h"
#include "cost/cost.h"

namespace collage {

using Genome = std::vector<int>;

struct Fitness {
  Cost cost;           // lower is better; invalid: the placement cannot run
  std::string reason;  // why invalid
};

struct EvolutionOptions {
  int population = 16;
  int generations = 30;
  double budget_seconds = 120;
  uint32_t seed = 1;
  int tournament = 3;
  int elites = 2;
  // Per-gene mutation probability; 0 = 1 / number of genes.
  double mutation_rate = 0;
  CancellationToken cancel;  // cancelled: the search ends after the fitness in flight
};

struct EvolutionResult {
  Genome best;
  Fitness best_fitness;
  int generations = 0;   // completed
  int evaluations = 0;   // distinct genomes whose fitness was asked
  int cache_hits = 0;    // genomes met again
  int invalid = 0;
  std::vector<std::string> invalid_reasons;  // a few, for the report
};

// `gene_values[i]`: the values gene i may take (0 always among them: "keep"). `seeds` are put
// in the first population as they are (their length must be the number of genes).
EvolutionResult Evolve(const std::vector<std::vector<int>>& gene_values, const std::vector<Genome>& seeds,
                       const std::function<Fitness(const Genome&)>& fitness, const EvolutionOptions& options,
                       const std::function<void(const GenerationProgress&)>& on_progress = {});

}  // namespace collage
