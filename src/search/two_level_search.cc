#include "search/two_level_search.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <random>

#include "cost/measure.h"
#include "runtime/executable.h"
#include "util/errors.h"
#include "util/interrupt.h"
#include "util/latency_stats.h"
#include "util/normalized_error.h"
#include "util/random_tensor.h"

namespace collage {
namespace {

constexpr double kTolerance = 1e-3;  // as `run --check`: whole models reassociate long sums

// Names a placement completely: equal strings, equal plans (different genomes may decode to
// the same placement).
std::string PlacementKey(const Placement& placement) {
  std::string key;
  for (const PlacedGroup& g : placement.groups)
    key += g.backend + "/" + g.rule + g.nodes.ToString() + ";";
  return key;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Compiles and times whole placements on one set of inputs, checking each against the
// reference outputs first.
class PlanBench {
 public:
  // Whole plans are timed with 3 to 15 runs (0.5 s cap), or fewer where `options` asks
  // fewer runs of the candidates.
  PlanBench(const Graph& graph, const BackendRegistry& registry, int threads,
            const OptimizeOptions& options)
      : graph_(graph), registry_(registry), threads_(threads) {
    settings_.warmup_runs = 1;
    settings_.min_runs = std::max(1, std::min(3, options.min_runs));
    settings_.max_runs = std::max(settings_.min_runs, std::min(15, options.max_runs));
    settings_.max_seconds = 0.5;
  }

  // Seeded inputs, and the outputs of the reference kernels (native alone) on them.
  Status Prepare() {
    std::mt19937 rng(99);
    for (ValueId in : graph_.inputs()) {
      const TensorType& type = graph_.value(in).type;
      inputs_.push_back(RandomTensor(type.dtype, type.shape, rng));
    }
    const Backend* native = registry_.Find("native");
    if (native == nullptr) return NotFound("the native backend is not registered");
    COLLAGE_ASSIGN_OR_RETURN(Placement reference, PlaceOnSingleBackend(graph_, *native, registry_));
    COLLAGE_ASSIGN_OR_RETURN(auto exe, Executable::Create(graph_, reference, registry_, threads_));
    COLLAGE_ASSIGN_OR_RETURN(reference_outputs_, exe->Run(inputs_));
    return Status();
  }

  StatusOr<std::unique_ptr<Executable>> Compile(const Placement& placement) const {
    return Executable::Create(graph_, placement, registry_, threads_);
  }

  Fitness Measure(const Placement& placement) const {
    auto exe = Compile(placement);
    if (!exe.ok()) return {false, 0, "does not compile: " + exe.status().message()};
    auto outputs = (*exe)->Run(inputs_);
    if (!outputs.ok()) return {false, 0, "run failed: " + outputs.status().message()};
    for (size_t o = 0; o < outputs->size(); ++o) {
      const double error = NormalizedError((*outputs)[o], reference_outputs_[o]);
      if (!(error <= kTolerance)) {
        return {
            false, 0,
            fmt::format("output {} differs from the reference kernels (error {:.3g})", o, error)};
      }
    }
    CostRecord timed = TimeRepeatedly([&] { return (*exe)->Run(inputs_).status(); }, settings_);
    if (!timed.valid) return {false, 0, timed.reason};
    return {true, timed.median_ms, ""};
  }

  // The median of each executable, all run in turns, so that the machine's drift touches
  // them alike.
  StatusOr<std::vector<double>> SideBySide(const std::vector<const Executable*>& contenders,
                                           int rounds) const {
    std::vector<std::vector<double>> times(contenders.size());
    for (int r = 0; r < rounds + 1; ++r) {
      for (size_t i = 0; i < contenders.size(); ++i) {
        const auto start = std::chrono::steady_clock::now();
        COLLAGE_RETURN_IF_ERROR(contenders[i]->Run(inputs_).status());
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        if (r > 0) times[i].push_back(ms);  // round 0 warms up
      }
    }
    std::vector<double> medians;
    for (const auto& t : times) medians.push_back(ComputeLatencyStats(t).p50_ms);
    return medians;
  }

 private:
  const Graph& graph_;
  const BackendRegistry& registry_;
  const int threads_;
  MeasureSettings settings_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> reference_outputs_;
};

}  // namespace

GenomeDecoder::GenomeDecoder(const Graph& graph, const Placement& op_level,
                             const std::vector<const Backend*>& graph_level,
                             const BackendRegistry& registry, bool strict_non_finite)
    : graph_(graph), op_level_(op_level), graph_level_(graph_level) {
  const size_t groups = op_level.groups.size();
  for (const Backend* backend : graph_level_) {
    // A node the backend offers in some candidate; the largest candidate's rule names regions.
    std::vector<bool> offered(static_cast<size_t>(graph.num_nodes()), false);
    std::string rule;
    int largest = 0;
    for (const Candidate& c : EnumerateCandidates(graph, backend->rules(), strict_non_finite)) {
      for (NodeId n : c.nodes.Nodes()) offered[static_cast<size_t>(n)] = true;
      if (c.nodes.size() > largest) {
        largest = c.nodes.size();
        rule = c.rule;
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
    offered_[{group.backend, ""}] = "";  // enumerated once per backend
    const Backend* backend = registry.Find(group.backend);
    if (backend == nullptr) continue;
    for (const Candidate& c : EnumerateCandidates(graph, backend->rules(), strict_non_finite)) {
      offered_.try_emplace({group.backend, c.nodes.ToString()}, c.rule);
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

StatusOr<Placement> SearchTwoLevel(const Graph& graph, BackendRegistry& registry, int threads,
                                   const Placement& op_level,
                                   const std::vector<std::string>& backends,
                                   const OptimizeOptions& options, OptimizeReport* report) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<const Backend*> graph_level;
  for (const std::string& name : backends) {
    const Backend* backend = registry.Find(name);
    if (backend != nullptr && backend->graph_level()) graph_level.push_back(backend);
  }
  report->search = "two-level";
  PlanBench bench(graph, registry, threads, options);
  COLLAGE_RETURN_IF_ERROR(bench.Prepare());

  GenomeDecoder decoder(graph, op_level, graph_level, registry, options.strict_non_finite);
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
  EvolutionResult evolved =
      Evolve(decoder.gene_values(), seeds, fitness, evolution, options.on_generation);
  report->generations = evolved.generations;
  report->evaluations = static_cast<int>(by_placement.size());
  report->genome_cache_hits = evolved.cache_hits + placement_hits;
  report->invalid_genomes = evolved.invalid;
  report->invalid_genome_reasons = evolved.invalid_reasons;
  report->evolve_seconds = SecondsSince(start);
  if (InterruptRequested()) {
    return Status(StatusCode::kCancelled,
                  "interrupted during the graph-level search; every measurement made so far is kept");
  }
  if (!evolved.best_fitness.valid)
    return Internal("the graph-level search found no valid placement");

  // Never slower than the op-level placement, nor than any of the backends alone (groups
  // measured one by one can add up wrong: two thread pools taking turns hundreds of times per
  // run wake each other up): the finalists measured again, side by side.
  Placement best = decoder.Decode(evolved.best);
  struct Finalist {
    Placement placement;
    std::unique_ptr<Executable> exe;
  };
  std::vector<Finalist> finalists;
  finalists.push_back({op_level, nullptr});
  finalists.push_back({best, nullptr});
  double best_alone_ms = std::numeric_limits<double>::infinity();
  for (const std::string& name : backends) {
    const Backend* backend = registry.Find(name);
    if (backend == nullptr) continue;
    auto alone = PlaceOnSingleBackend(graph, *backend, registry, options.strict_non_finite);
    if (!alone.ok()) continue;
    const Fitness f = bench.Measure(*alone);
    if (f.valid && f.ms < best_alone_ms) {
      best_alone_ms = f.ms;
      report->best_single_backend = name;
      if (finalists.size() == 3) finalists.pop_back();
      finalists.push_back({std::move(*alone), nullptr});
    }
  }
  std::vector<const Executable*> contenders;
  for (Finalist& f : finalists) {
    COLLAGE_ASSIGN_OR_RETURN(f.exe, bench.Compile(f.placement));
    contenders.push_back(f.exe.get());
  }
  COLLAGE_ASSIGN_OR_RETURN(std::vector<double> medians,
                           bench.SideBySide(contenders, std::max(1, options.final_rounds)));
  report->op_level_ms = medians[0];
  report->two_level_ms = medians[1];
  if (finalists.size() == 3) report->single_backend_ms = medians[2];
  // Ties go to the earlier finalist: the op-level placement, then the graph-level one.
  size_t chosen = 0;
  for (size_t i = 1; i < finalists.size(); ++i) {
    if (medians[i] < medians[chosen]) chosen = i;
  }
  if (chosen == 1 && PlacementKey(best) == PlacementKey(op_level)) chosen = 0;
  report->graph_level_kept = chosen == 1;
  report->single_backend_kept = chosen == 2;
  return std::move(finalists[chosen].placement);
}

}  // namespace collage
