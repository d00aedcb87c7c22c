// Whole placements compiled and timed on one set of inputs, each checked against the
// reference kernels' outputs first: the fitness of the graph-level search and the runs of
// the end-to-end decision between finalists.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/optimize.h"
#include "cost/measure.h"
#include "runtime/candidate_index.h"
#include "runtime/executable.h"
#include "search/evolutionary_search.h"
#include "search/plan_in_run.h"

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

  // Seeded inputs, and the outputs of the reference kernels (native alone, its groups from
  // `index`) on them.
  Status Prepare(const CandidateIndex& index);
  // The seeded inputs only (once): enough for Profile, which checks no outputs.
  void PrepareInputs();

  StatusOr<std::unique_ptr<Executable>> Compile(const Placement& placement) const;
  // Runs `exe` once and compares its outputs with the reference kernels' (1e-3, as
  // `run --check`: whole models reassociate long sums; a bf16 group's bound where the optimize
  // asks for reduced precision); the error says how they differ.
  Status Check(const Executable& exe) const;
  // Compiled, checked and timed: invalid with the reason when any step fails.
  Fitness Measure(const Placement& placement) const;
  // One run's wall time in milliseconds; with `profile`, each step's time too.
  StatusOr<double> RunOnce(const Executable& exe, RunProfile* profile = nullptr) const;
  // One run's wall time after untimed runs of `exe` taking at least kSettleMillis: right
  // after another plan's runs, a plan is slow for several runs, not one.
  StatusOr<double> RunSettled(const Executable& exe) const;
  // Untimed runs before a timed one, until they have taken this long (and at least one): a
  // plan run right after another's is slow for several runs, not one, and a single untimed
  // run left it twice its served time (docs/measurements.md, "Figures behind the code's
  // choices").
  static constexpr double kSettleMillis = 25;

  // Compiled, settled, then profiled in 3 to 7 runs (0.5 s cap): each step's median time and
  // the median wall time of a run. Outputs are not checked (Check does that).
  StatusOr<PlanInRun> Profile(const Placement& placement) const;
  // Every placement compiled, then timed in `rounds` interleaved rounds (each run settled, the
  // order rotating): each one's median in milliseconds.
  StatusOr<std::vector<double>> TimeSideBySide(const std::vector<Placement>& placements,
                                               int rounds) const;

 private:
  const Graph& graph_;
  const BackendRegistry& registry_;
  const int threads_;
  const double tolerance_;
  MeasureSettings settings_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> reference_outputs_;
};

}  // namespace collage
