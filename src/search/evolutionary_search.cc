#include "search/evolutionary_search.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <random>

namespace collage {
namespace {

constexpr size_t kReasonsKept = 6;

class Evolution {
 public:
  Evolution(const std::vector<std::vector<int>>& gene_values, const std::function<Fitness(const Genome&)>& fitness,
            const EvolutionOptions& options, const std::function<void(const GenerationProgress&)>& on_progress)
      : values_(gene_values),
        fitness_(fitness),
        options_(options),
        on_progress_(on_progress),
        rng_(options.seed),
        start_(std::chrono::steady_clock::now()) {
    mutation_rate_ = options.mutation_rate > 0 ? options.mutation_rate
                                               : 1.0 / static_cast<double>(std::max<size_t>(1, values_.size()));
  }

  EvolutionResult Run(const std::vector<Genome>& seeds) {
    std::vector<Genome> population;
    for (const Genome& seed : seeds) {
      if (seed.size() == values_.size() && static_cast<int>(population.size()) < options_.population) {
        population.push_back(seed);
      }
    }
    while (static_cast<int>(population.size()) < std::max(2, options_.population)) population.push_back(Random());
    for (const Genome& g : population) Score(g);
    Report(0);
    for (int generation = 1; generation <= options_.generations && !OutOfTime(); ++generation) {
      std::vector<Genome> ranked = population;
      std::stable_sort(ranked.begin(), ranked.end(), [&](const Genome& a, const Genome& b) { return Better(a, b); });
      std::vector<Genome> next(ranked.begin(), ranked.begin() + std::min<size_t>(ranked.size(), options_.elites));
      while (next.size() < population.size() && !OutOfTime()) {
        // Two statements: the parents are drawn in this order whatever the compiler's order of
        // evaluating arguments, so a seed means the same search everywhere.
        const Genome& mother = Tournament(population);
        const Genome& father = Tournament(population);
        Genome child = Crossover(mother, father);
        Mutate(child);
        Score(child);
        next.push_back(std::move(child));
      }
      if (next.size() < population.size()) break;  // the budget ran out mid-generation
      population = std::move(next);
      result_.generations = generation;
      Report(generation);
    }
    return result_;
  }

 private:
  // Asks (or remembers) a genome's fitness and keeps the best; `count_hit` for a genome just
  // bred (comparisons of scored genomes are no hits).
  const Fitness& Score(const Genome& genome, bool count_hit = true) {
    auto found = cache_.find(genome);
    if (found != cache_.end()) {
      if (count_hit) ++result_.cache_hits;
      return found->second;
    }
    Fitness f = fitness_(genome);
    ++result_.evaluations;
    if (!f.cost.is_value()) {
      ++result_.invalid;
      if (result_.invalid_reasons.size() < kReasonsKept) result_.invalid_reasons.push_back(f.reason);
    } else if (f.cost < result_.best_fitness.cost) {
      result_.best = genome;
      result_.best_fitness = f;
    }
    return cache_.emplace(genome, std::move(f)).first->second;
  }

  bool Better(const Genome& a, const Genome& b) {
    return Score(a, false).cost < Score(b, false).cost;
  }

  Genome Random() {
    Genome g(values_.size());
    for (size_t i = 0; i < g.size(); ++i) g[i] = values_[i][rng_() % values_[i].size()];
    return g;
  }

  const Genome& Tournament(const std::vector<Genome>& population) {
    const Genome* best = &population[rng_() % population.size()];
    for (int k = 1; k < options_.tournament; ++k) {
      const Genome& other = population[rng_() % population.size()];
      if (Better(other, *best)) best = &other;
    }
    return *best;
  }

  // Two-point crossover: the child is `a` with the genes in [cut1, cut2) from `b`.
  Genome Crossover(const Genome& a, const Genome& b) {
    Genome child = a;
    if (child.size() < 2) return child;
    size_t cut1 = rng_() % child.size(), cut2 = rng_() % child.size();
    if (cut1 > cut2) std::swap(cut1, cut2);
    for (size_t i = cut1; i < cut2; ++i) child[i] = b[i];
    return child;
  }

  void Mutate(Genome& g) {
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    for (size_t i = 0; i < g.size(); ++i) {
      if (values_[i].size() > 1 && coin(rng_) < mutation_rate_) g[i] = values_[i][rng_() % values_[i].size()];
    }
  }

  // A cancellation ends the search like the budget does; the caller decides what to keep.
  bool OutOfTime() const {
    return Elapsed() >= options_.budget_seconds || options_.cancel.cancelled();
  }
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  void Report(int generation) {
    if (!on_progress_) return;
    on_progress_({generation, result_.best_fitness.cost.ms(), result_.evaluations,
                  result_.cache_hits, Elapsed()});
  }

  const std::vector<std::vector<int>>& values_;
  const std::function<Fitness(const Genome&)>& fitness_;
  const EvolutionOptions& options_;
  const std::function<void(const GenerationProgress&)>& on_progress_;
  std::mt19937 rng_;
  double mutation_rate_ = 0;
  const std::chrono::steady_clock::time_point start_;
  std::map<Genome, Fitness> cache_;
  EvolutionResult result_;
};

}  // namespace

EvolutionResult Evolve(const std::vector<std::vector<int>>& gene_values, const std::vector<Genome>& seeds,
                       const std::function<Fitness(const Genome&)>& fitness, const EvolutionOptions& options,
                       const std::function<void(const GenerationProgress&)>& on_progress) {
  Evolution evolution(gene_values, fitness, options, on_progress);
  return evolution.Run(seeds);
}

}  // namespace collage
