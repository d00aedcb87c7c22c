// Whole placements compiled and timed on one set of inputs, each checked against the
// reference kernels' outputs first: the fitness of the graph-level search and the runs of
// the end-to-end decision between finalists.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/optimize.h"
#include "cost/measure.h"
#include "runtime/executable.h"
#include "search/evolutionary_search.h"

namespace collage {

// Names a placement completely: equal strings, equal plans (different genomes may decode to
// the same placement).
std::string PlacementKey(const Placement& placement);

class PlanBench {
 public:
  // Whole plans are timed with 3 to 15 runs (0.5 s cap), or fewer where `options` asks
  // fewer runs of the candidates.
  PlanBench(const Graph& graph, const BackendRegistry& registry, int threads,
            const OptimizeOptions& options);

  // Seeded inputs, and the outputs of the reference kernels (native alone) on them.
  Status Prepare();

  StatusOr<std::unique_ptr<Executable>> Compile(const Placement& placement) const;
  // Runs `exe` once and compares its outputs with the reference kernels' (1e-3, as
  // `run --check`: whole models reassociate long sums); the error says how they differ.
  Status Check(const Executable& exe) const;
  // Compiled, checked and timed: invalid with the reason when any step fails.
  Fitness Measure(const Placement& placement) const;
  // One run's wall time in milliseconds.
  StatusOr<double> RunOnce(const Executable& exe) const;

 private:
  const Graph& graph_;
  const BackendRegistry& registry_;
  const int threads_;
  MeasureSettings settings_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> reference_outputs_;
};

}  // namespace collage
