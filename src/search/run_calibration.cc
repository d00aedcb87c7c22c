#include "search/run_calibration.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "collage/sdk/errors.h"
#include "cost/extra_time.h"
#include "search/placement_estimate.h"
#include "search/plan_bench.h"

namespace collage {
namespace {

// The plans run so far, each as its candidates' indices in order.
using PlansRun = std::set<std::vector<int>>;

// Overwrites the costs of `found`'s groups and conversions with their times in `ran`. A
// group's cost becomes its step's time less the library switch the search charges before it
// (the step's time includes waking that library), so that the search's estimate of this very
// plan becomes what the run measured. Returns "" or why the steps are not this plan's.
std::string Reprice(const OpLevelResult& found, const PlanInRun& ran,
                    const LibrarySwitchCost& library_switch,
                    const std::map<std::string, ValueId>& value_by_name,
                    std::vector<SearchCandidate>& candidates, std::vector<bool>& repriced,
                    ConversionTimes& conversion_ms, int* newly_repriced) {
  // The profile is of this plan: each group's step carries its index among found.groups.
  std::vector<const NodeTiming*> group_steps(found.groups.size(), nullptr);
  for (const NodeTiming& step : ran.steps.nodes) {
    if (IsConversion(step)) continue;
    if (step.group < 0 || static_cast<size_t>(step.group) >= group_steps.size() ||
        group_steps[static_cast<size_t>(step.group)] != nullptr) {
      return "the profiled run has a step of group " + std::to_string(step.group) + ", the plan " +
             std::to_string(found.groups.size()) + " groups";
    }
    group_steps[static_cast<size_t>(step.group)] = &step;
  }
  for (size_t i = 0; i < group_steps.size(); ++i) {
    if (group_steps[i] == nullptr)
      return "the profiled run has no step of the plan's group " + std::to_string(i);
  }
  const std::string* last_backend = nullptr;
  for (size_t i = 0; i < found.groups.size(); ++i) {
    const size_t g = static_cast<size_t>(found.groups[i]);
    SearchCandidate& c = candidates[g];
    double charged = 0;
    if (last_backend != nullptr && *last_backend != c.backend && library_switch) {
      charged = std::max(0.0, library_switch(*last_backend, c.backend));
    }
    last_backend = &c.backend;
    // Never below 0: the search's lower bound of the rest assumes no cost is negative.
    c.cost_ms = std::max(0.0, group_steps[i]->milliseconds - charged);
    if (!repriced[g]) ++*newly_repriced;
    repriced[g] = true;
  }
  for (const NodeTiming& step : ran.steps.nodes) {
    if (!IsConversion(step)) continue;
    auto value = value_by_name.find(step.node_name);
    if (value == value_by_name.end()) continue;  // not priced: left as is
    conversion_ms[{value->second, step.from_layout, step.to_layout}] = step.milliseconds;
  }
  return "";
}

// Prices every group that has not run yet at its measurement alone times the median ratio (time
// in a run / time alone) of its backend's groups that ran, when at least kMinRatios of them
// did: a library's groups tend to lose (or gain) alike in a run, and the search would otherwise
// try them one plan at a time. A group that is the whole graph keeps its measurement: it was
// timed as a served run.
void ScaleGroupsNotRun(const Graph& graph, const std::vector<double>& alone_ms,
                       const std::vector<bool>& repriced,
                       std::vector<SearchCandidate>& candidates) {
  constexpr size_t kMinRatios = 3;
  constexpr double kMinAloneMs = 1e-3;  // below: nothing worth a ratio
  std::map<std::string, std::vector<double>> ratios;
  for (size_t c = 0; c < candidates.size(); ++c) {
    // A group that ran no step in the run (a view, a Concat written in place) says nothing
    // about its backend's kernels.
    if (repriced[c] && alone_ms[c] >= kMinAloneMs && candidates[c].cost_ms > 0)
      ratios[candidates[c].backend].push_back(candidates[c].cost_ms / alone_ms[c]);
  }
  std::map<std::string, double> scale;
  for (auto& [backend, r] : ratios) {
    if (r.size() >= kMinRatios) scale[backend] = MedianOf(std::move(r));
  }
  for (size_t c = 0; c < candidates.size(); ++c) {
    auto it = scale.find(candidates[c].backend);
    if (repriced[c] || it == scale.end() || candidates[c].nodes.size() == graph.num_nodes())
      continue;
    candidates[c].cost_ms = alone_ms[c] * it->second;
  }
}

using RanPlans =
    std::vector<std::pair<OpLevelResult, double>>;  // each plan run, its time in the run

// The plan fastest in its run (`ran` not empty).
const std::pair<OpLevelResult, double>& FastestRun(const RanPlans& ran) {
  return *std::min_element(ran.begin(), ran.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
}

// After the search's first plan: the plans of their own — every group that is the whole graph
// (an engine's whole model: measured as a served run, but in the worker, at another minute)
// and `own_plans` (each backend alone; one with a group not among `candidates` is left out) —
// run once each, when their estimate is within kOwnPlanWithin of the fastest plan run so far,
// so that the search weighs their groups by times taken in this process too. Returns false
// when calibration must stop.
template <typename RunPlan>
bool RunPlansOfTheirOwn(const Graph& graph, const std::vector<SearchCandidate>& candidates,
                        const std::vector<NamedPlacement>& own_plans,
                        const TransitionCost& transition, const LibrarySwitchCost& library_switch,
                        const PlansRun& plans_run, const RanPlans& ran, RunPlan& run_plan) {
  // Estimates of plans not yet run miss by up to ~40% (bench/cost_fidelity.py, first plans); a
  // plan priced further off the fastest is not worth its run.
  constexpr double kOwnPlanWithin = 1.5;
  std::map<std::tuple<std::string, std::string, std::string>, int> index;
  std::vector<std::pair<PlacementSource, OpLevelResult>> plans;
  for (size_t c = 0; c < candidates.size(); ++c) {
    const SearchCandidate& candidate = candidates[c];
    // The backends alone are float32 plans: their groups are found among the float32 offers.
    if (candidate.precision == Precision::kFloat32) {
      index.emplace(std::make_tuple(candidate.backend, candidate.rule, candidate.nodes.ToString()),
                    static_cast<int>(c));
    }
    if (candidate.nodes.size() != graph.num_nodes()) continue;
    OpLevelResult whole;
    whole.groups = {static_cast<int>(c)};
    plans.emplace_back(PlacementSource::WholeGraph(candidate.backend, candidate.precision), whole);
  }
  for (const auto& [source, placement] : own_plans) {
    OpLevelResult plan;
    for (const PlacedGroup& group : placement.groups) {
      auto it = index.find({group.backend, group.rule, group.nodes.ToString()});
      if (it == index.end()) break;
      plan.groups.push_back(it->second);
    }
    if (plan.groups.size() == placement.groups.size()) plans.emplace_back(source, plan);
  }
  for (auto& [source, plan] : plans) {
    if (plans_run.count(plan.groups)) continue;
    const std::optional<double> estimate = EstimatePlacement(
        graph, PlacementOf(plan, candidates), candidates, transition, library_switch);
    if (!estimate || !std::isfinite(*estimate) ||
        *estimate > kOwnPlanWithin * FastestRun(ran).second)
      continue;
    plan.cost_ms = *estimate;
    if (!run_plan(plan, source)) return false;
  }
  return true;
}

// The plan to keep: the fastest in its run; but where others ran within kRetimeWithin of it,
// the kRetimeAtMost fastest are timed again side by side (`retime`, when given) and the fastest
// there is kept — each profile was taken at another moment, and the same plans' times minutes
// apart differed by up to 1.6x either way (docs/measurements.md, "Figures behind the code's
// choices"). A failed retiming leaves the fastest in its run.
void KeepTheFastest(RanPlans ran, const std::vector<SearchCandidate>& candidates,
                    const RetimePlans& retime, CalibratedSearch& result) {
  constexpr double kRetimeWithin = 1.25;
  constexpr size_t kRetimeAtMost = 4;
  std::stable_sort(ran.begin(), ran.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  result.kept = ran.front().first;
  result.kept_in_run_ms = ran.front().second;
  if (!retime) return;
  std::vector<Placement> close;
  for (const auto& [plan, ms] : ran) {
    if (close.size() == kRetimeAtMost || ms > kRetimeWithin * ran.front().second) break;
    close.push_back(PlacementOf(plan, candidates));
  }
  if (close.size() < 2) return;
  auto medians = retime(close);
  if (!medians.ok() || medians->size() != close.size()) return;
  const size_t best =
      static_cast<size_t>(std::min_element(medians->begin(), medians->end()) - medians->begin());
  result.kept = ran[best].first;
  result.kept_in_run_ms = (*medians)[best];
  result.plans_retimed = static_cast<int>(close.size());
}

}  // namespace

TransitionCost WithConversionTimes(const TransitionCost& measured, const ConversionTimes& in_run) {
  return [measured, &in_run](ValueId value, const Layout& from, const Layout& to) {
    auto it = in_run.find({value, from.name(), to.name()});
    return it != in_run.end() ? it->second : measured(value, from, to);
  };
}

StatusOr<CalibratedSearch> SearchCalibratedOpLevel(
    const Graph& graph, std::vector<SearchCandidate>& candidates, const TransitionCost& transition,
    const LibrarySwitchCost& library_switch, const ProfilePlan& profile, const RetimePlans& retime,
    const std::vector<NamedPlacement>& own_plans, const CalibrationOptions& options) {
  CalibratedSearch result;
  std::map<std::string, ValueId> value_by_name;
  for (ValueId v = 0; v < graph.num_values(); ++v) value_by_name.emplace(graph.value(v).name, v);
  const TransitionCost corrected = WithConversionTimes(transition, result.conversion_ms);
  std::vector<bool> repriced(candidates.size(), false);
  std::vector<double> alone_ms;
  for (const SearchCandidate& c : candidates) alone_ms.push_back(c.cost_ms);
  PlansRun plans_run;
  RanPlans ran_plans;
  // Runs `plan` and re-prices what ran; false when calibration must stop (result.stopped says
  // why).
  auto run_plan = [&](const OpLevelResult& plan, const PlacementSource& origin) {
    plans_run.insert(plan.groups);
    const Placement placement = PlacementOf(plan, candidates);
    auto ran = profile(placement);
    if (!ran.ok()) {
      result.stopped = "a plan failed to run: " + ran.status().message();
      return false;
    }
    CalibrationReport row;
    row.estimated_ms = plan.cost_ms;
    row.in_run_ms = ran->wall_ms;
    row.origin = origin;
    const std::string mismatch = Reprice(plan, *ran, library_switch, value_by_name, candidates,
                                         repriced, result.conversion_ms, &row.groups_repriced);
    result.rounds.push_back(row);
    ran_plans.emplace_back(plan, ran->wall_ms);
    result.profiles[PlacementKey(placement)] = ran->steps;
    if (!mismatch.empty()) {
      result.stopped = mismatch;
      return false;
    }
    ScaleGroupsNotRun(graph, alone_ms, repriced, candidates);
    return true;
  };
  OpLevelResult last_search;
  for (int round = 0;; ++round) {
    COLLAGE_ASSIGN_OR_RETURN(
        last_search, SearchOpLevel(graph, candidates, corrected, library_switch, options.search));
    if (round == 0) result.kept = last_search;                // stands when no plan runs
    if (plans_run.count(last_search.groups)) break;           // every group of it is priced as run
    if (round >= options.max_rounds) {
      if (options.max_rounds > 0)
        result.stopped =
            "stopped after " + std::to_string(options.max_rounds) + " plans of the search";
      break;
    }
    if (!run_plan(last_search, PlacementSource::OpLevel())) break;
    if (round == 0 && !RunPlansOfTheirOwn(graph, candidates, own_plans, corrected, library_switch,
                                          plans_run, ran_plans, run_plan)) {
      break;
    }
  }
  if (!ran_plans.empty()) KeepTheFastest(std::move(ran_plans), candidates, retime, result);
  // The report's search figures are the last search's, whichever plan is kept.
  result.kept.states = last_search.states;
  result.kept.states_cut = last_search.states_cut;
  result.kept.levels_cut = last_search.levels_cut;
  return result;
}

}  // namespace collage
