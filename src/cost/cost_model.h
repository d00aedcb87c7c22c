// The measured cost model behind the placement search: the cost of every candidate group
// and of every layout conversion the search may need, taken from the cost database or
// measured (and stored) when absent. Candidates with the same key — repeated blocks of a
// model offered to one backend by one rule — are measured once.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "collage/cancellation.h"
#include "collage/optimize.h"
#include "cost/cost_database.h"
#include "cost/measure.h"
#include "cost/measurer.h"
#include "cost/search_candidate.h"

namespace collage {

class MeasuredCostModel {
 public:
  // `measurer` measures what the database lacks (in this process or in a worker).
  // Pricing stops with kCancelled at the next candidate once `cancel` is cancelled.
  MeasuredCostModel(const Graph& graph, const BackendRegistry& registry, CostDatabase& database,
                    Measurer& measurer, int threads, MeasureSettings settings,
                    std::function<void(const OptimizeProgress&)> on_progress,
                    CancellationToken cancel);

  // Fills the cost and layouts of every candidate; `records[i]` says whether candidate i is
  // valid (and why not).
  Status PriceCandidates(std::vector<SearchCandidate>& candidates, std::vector<CostRecord>* records);

  // Prices every conversion a placement of `candidates` (valid, priced) can need: from each
  // layout a value is produced in to each layout a consumer reads it in, plain for outputs.
  Status PriceConversions(const std::vector<SearchCandidate>& candidates);
  // After PriceConversions: the measured cost (0 for layouts holding the same bytes; +inf
  // for a conversion that cannot be built).
  double Transition(ValueId value, const Layout& from, const Layout& to) const;

  // Prices the switch between every two backends of the valid, priced `candidates`, both
  // ways (cost/library_switch_measure.h), with two typical kernels of each: its cheapest
  // groups that take at least kProbeMs (a smaller one may not wake every worker), else its
  // most expensive. Measured in this process: every probe kernel already ran correctly.
  Status PriceLibrarySwitches(const std::vector<SearchCandidate>& candidates);
  // After PriceLibrarySwitches: the measured cost (0 for the same backend or one not priced).
  double LibrarySwitch(const std::string& from, const std::string& to) const;
  static constexpr double kProbeMs = 0.05;

  // Prices what a step costs in a run beyond its kernel timed alone in a tight loop, per
  // backend: its two probe kernels run in turns (each after the other, and each after
  // itself): the median extra time of a kernel following a different one of the same
  // library (the library's entry, its code and tables no longer warm), which the caller adds
  // to every candidate of that backend. A backend with one candidate only gets nothing.
  Status PriceStepsInRun(const std::vector<SearchCandidate>& candidates);
  // After PriceStepsInRun: the extra time per step of `backend` (0 when not priced).
  double StepInRun(const std::string& backend) const;
  int steps_priced() const { return static_cast<int>(step_ms_.size()); }

  int distinct_candidates() const { return distinct_candidates_; }
  int conversions() const { return static_cast<int>(conversion_cost_.size()); }
  int library_switches() const { return static_cast<int>(switch_ms_.size()); }
  int measured() const { return measured_; }
  int cache_hits() const { return cache_hits_; }
  // Of the distinct candidates alone (measured() and cache_hits() count conversions and
  // probes too): what optimizers sharing a database split between them.
  int candidates_measured() const { return candidates_measured_; }
  int candidates_found() const { return candidates_found_; }
  int invalid() const { return invalid_; }

 private:
  CostKey KeyFor(const SearchCandidate& candidate) const;
  // How a group of `nodes` is timed: with the caches the rest of a run leaves (settings_),
  // except a group that is the whole graph, which is a served run itself: between two of its
  // calls nothing else runs, so it is timed warm.
  MeasureSettings SettingsFor(const SubGraph& nodes) const;
  // The settings with warm caches, for the library-switch probes (they measure what another
  // library disturbs, not what the rest of a run does).
  MeasureSettings WarmSettings() const;
  // Looks `key` up, or measures it with `measure` and stores the result. A measurement that
  // gives no record (interrupted: kCancelled) stores nothing and ends the pricing.
  StatusOr<CostRecord> Resolve(const CostKey& key,
                               const std::function<StatusOr<CostRecord>()>& measure);
  Status Interrupted() const;
  // One pause while another optimizer measures keys this one needs, renewing this
  // process's claims meanwhile; kCancelled when interrupted.
  Status WaitForOthers();
  static constexpr double kOthersPollSeconds = 0.2;
  void Report(const std::string& phase, int done, int total);

  const Graph& graph_;
  const BackendRegistry& registry_;
  CostDatabase& database_;
  Measurer& measurer_;
  const int threads_;
  // What the library-switch probes are compiled in: one context, as one session's kernels.
  const std::shared_ptr<ExecutionContext> context_;
  const MeasureSettings settings_;
  std::function<void(const OptimizeProgress&)> on_progress_;
  const CancellationToken cancel_;
  double started_ = 0;
  int distinct_candidates_ = 0;
  int measured_ = 0;
  int cache_hits_ = 0;
  int candidates_measured_ = 0;
  int candidates_found_ = 0;
  int invalid_ = 0;
  std::map<std::pair<std::string, std::string>, double> switch_ms_;  // (from, to) backends → ms
  std::map<std::string, double> step_ms_;  // backend → extra time per step in a run
  // (type, from layout, to layout) → what converting costs
  std::map<std::tuple<std::string, std::string, std::string>, Cost> conversion_cost_;
};

}  // namespace collage
