// The op-level search calibrated against runs of its own plans.
//
// Every group is priced alone (cost/cost_model.h). In a run the same kernel can take longer
// or less: what ran before it left other data in the caches, another library's threads on the
// cores, the memory bus busy. Where the search's choice hinges on such groups, the plan it
// finds can be slower than a backend alone although its estimate says otherwise (a case is in
// docs/measurements.md, "Figures behind the code's choices").
//
// So the search's plan is run: settled, then a few profiled runs, and every step's median time
// in them replaces the cost of that group (net of the library switch the search charges before
// it) and of that conversion. The search then runs again over the corrected costs; a plan that
// used a group only because its cost alone was flattering now pays its time in a run, and the
// search moves to the next best — whose own groups are corrected in turn when it runs. This
// repeats until the search returns a plan it has already run, or for a fixed number of rounds.
// After the search's first plan, the plans of their own — each group that is the whole graph
// (an engine's whole model) and each backend alone — run once each, when their estimate is
// within 1.5x of the fastest run so far, so that their groups are weighed by their times in
// this process too. The plan kept is the one that was fastest in its runs — where several ran
// within 25% of the fastest, the fastest when they are timed again side by side (each plan's
// profile was taken at another moment, and these machines drift by more than that).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "collage/optimize.h"
#include "cost/search_candidate.h"
#include "runtime/placement.h"
#include "search/op_level_search.h"
#include "search/plan_in_run.h"

namespace collage {

using ProfilePlan = std::function<StatusOr<PlanInRun>(const Placement&)>;
// The plans timed side by side (interleaved rounds, each run settled): each one's median.
using RetimePlans = std::function<StatusOr<std::vector<double>>(const std::vector<Placement>&)>;

struct CalibrationOptions {
  // Plans of the search run at most (the plans of their own besides); 0 runs none: the
  // search's first plan, priced by the measurements alone.
  int max_rounds = 4;
  OpLevelSearchOptions search;
};

// A placement with where it came from (e.g. one backend alone).
using NamedPlacement = std::pair<PlacementSource, Placement>;

// The time of each conversion in a run: (value, from layout's name, to layout's name) → ms.
using ConversionTimes = std::map<std::tuple<ValueId, std::string, std::string>, double>;

struct CalibratedSearch {
  OpLevelResult kept;         // the plan fastest in its runs; cost_ms is its estimate before it ran
  double kept_in_run_ms = 0;  // 0 when no round ran
  // The steps of every plan run, by PlacementKey: the report's in-run times of whichever
  // finalist is kept, when calibration ran it.
  std::map<std::string, RunProfile> profiles;
  int plans_retimed = 0;      // plans timed again side by side to choose the kept one (0 or >= 2)
  std::vector<CalibrationReport> rounds;  // each plan run, in order (collage/optimize.h)
  ConversionTimes conversion_ms;  // every conversion timed in a run
  // Why calibration stopped before the search repeated a plan: "" when it did repeat one, or
  // the round cap, or a plan that failed to run (the plans before it stand).
  std::string stopped;
};

// `measured` with every conversion timed in a run replaced by that time.
TransitionCost WithConversionTimes(const TransitionCost& measured, const ConversionTimes& in_run);

// The op-level search over `candidates` (valid, priced), calibrated by `profile`: the costs of
// the groups of every plan run are overwritten in `candidates` with their times in the run.
// `own_plans` (each backend alone) run after the first plan, as above; one with a group that is
// not among `candidates` is left out. `retime` (may be empty: no retiming) chooses between
// the fastest plans. Fails only when the search itself does.
StatusOr<CalibratedSearch> SearchCalibratedOpLevel(
    const Graph& graph, std::vector<SearchCandidate>& candidates, const TransitionCost& transition,
    const LibrarySwitchCost& library_switch, const ProfilePlan& profile, const RetimePlans& retime,
    const std::vector<NamedPlacement>& own_plans, const CalibrationOptions& options);

}  // namespace collage
