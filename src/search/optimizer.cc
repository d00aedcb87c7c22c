#include "search/optimizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <optional>

#include "collage/sdk/errors.h"
#include "cost/cache_scrub.h"
#include "cost/claim_owner.h"
#include "cost/cost_database.h"
#include "cost/cost_model.h"
#include "cost/workers_choice.h"
#include "runtime/threading.h"
#include "search/final_decision.h"
#include "search/op_level_search.h"
#include "search/phase_progress.h"
#include "search/placement_estimate.h"
#include "search/plan_bench.h"
#include "search/precision_search.h"
#include "search/run_calibration.h"
#include "search/two_level_search.h"

namespace collage {
namespace {

constexpr size_t kInvalidExamples = 8;

// Sets report.in_run to `profile` (of the kept placement) and each group's in_run_ms from the
// step carrying its index in the placement, whose groups the report lists in the same order.
// False, and nothing set, when the steps are not one per group.
bool TakeInRunProfile(RunProfile profile, OptimizeReport& report) {
  std::vector<const NodeTiming*> steps(report.groups.size(), nullptr);
  for (const NodeTiming& step : profile.nodes) {
    if (IsConversion(step)) continue;
    if (step.group < 0 || static_cast<size_t>(step.group) >= steps.size() ||
        steps[static_cast<size_t>(step.group)] != nullptr) {
      return false;
    }
    steps[static_cast<size_t>(step.group)] = &step;
  }
  if (std::find(steps.begin(), steps.end(), nullptr) != steps.end()) return false;
  for (size_t g = 0; g < steps.size(); ++g) report.groups[g].in_run_ms = steps[g]->milliseconds;
  report.in_run = std::move(profile);  // after reading: the steps point into it
  return true;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Records the priced optimize in the cost database, for `collage costs stats` (how often a
// team's optimizes find their costs already measured). A record that cannot be written costs
// the statistics a line, not the optimize: a warning.
void RecordOptimize(CostDatabase& database, const std::string& model, OptimizeReport& report) {
  OptimizeRun run;
  run.finished_at = static_cast<int64_t>(std::time(nullptr));
  run.machine = ThisMachineIdentity();
  run.model = model;
  run.distinct_candidates = report.distinct_candidates;
  run.candidates_measured = report.candidates_measured;
  run.candidates_found = report.candidates_found;
  const Status recorded = database.RecordOptimize(run);
  if (!recorded.ok()) {
    report.warnings.push_back("this optimize was not recorded in the cost database: " +
                              recorded.message());
  }
}

GroupAlternative AlternativeOf(const SearchCandidate& candidate, const CostRecord& record,
                               bool same_nodes) {
  GroupAlternative alternative;
  alternative.backend = candidate.backend;
  alternative.rule = candidate.rule;
  alternative.precision = candidate.precision;
  alternative.num_nodes = candidate.nodes.size();
  alternative.same_nodes = same_nodes;
  alternative.valid = record.valid;
  alternative.cost_ms = record.valid ? candidate.cost_ms : 0;  // with its step in a run
  alternative.reason = record.reason;
  return alternative;
}

// Every other offer of the chosen nodes; then for each other backend that offers none, its
// cheapest valid offer containing the group's first node, or, when all its offers there are
// invalid, one of them with its reason (why that backend lost).
std::vector<GroupAlternative> RivalsOf(size_t chosen, const std::vector<SearchCandidate>& all,
                                       const std::vector<CostRecord>& records) {
  const SearchCandidate& group = all[chosen];
  const NodeId first = group.nodes.Nodes().front();
  std::vector<GroupAlternative> rivals;
  std::map<std::string, size_t> best_other;  // backend → its best offer containing `first`
  std::map<std::string, bool> offers_same;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i == chosen) continue;
    const SearchCandidate& c = all[i];
    if (c.nodes == group.nodes) {
      rivals.push_back(AlternativeOf(c, records[i], true));
      offers_same[c.backend] = true;
    } else if (c.nodes.Contains(first) && c.backend != group.backend) {
      auto it = best_other.find(c.backend);
      const bool better = it == best_other.end() ||
                          (records[i].valid && (!records[it->second].valid ||
                                                records[i].median_ms < records[it->second].median_ms));
      if (better) best_other[c.backend] = i;
    }
  }
  for (const auto& [backend, i] : best_other) {
    if (!offers_same.count(backend)) rivals.push_back(AlternativeOf(all[i], records[i], false));
  }
  return rivals;
}

// The public view of a placed group (GroupReport speaks no IR types): backend, rule and
// node numbers; cost and rivals are the caller's to fill.
GroupReport ReportOf(const PlacedGroup& placed) {
  GroupReport group;
  group.backend = placed.backend;
  group.rule = placed.rule;
  group.precision = placed.precision;
  for (NodeId n : placed.nodes.Nodes()) group.nodes.push_back(n);
  return group;
}

// The report of one group that is a priced candidate: its cost alone and its rivals.
GroupReport CandidateReport(size_t index, const std::vector<SearchCandidate>& candidates,
                            const std::vector<CostRecord>& records) {
  const SearchCandidate& chosen = candidates[index];
  GroupReport group = ReportOf(chosen);
  group.cost_ms = chosen.cost_ms;
  group.alternatives = RivalsOf(index, candidates, records);
  return group;
}

// Index of the candidate that is `group` (valid or not), or -1.
long IndexOfCandidate(const PlacedGroup& group, const std::vector<SearchCandidate>& candidates) {
  for (size_t i = 0; i < candidates.size(); ++i) {
    const SearchCandidate& c = candidates[i];
    if (c.backend == group.backend && c.rule == group.rule && c.precision == group.precision &&
        c.nodes == group.nodes) {
      return static_cast<long>(i);
    }
  }
  return -1;
}

// Index of the valid candidate that is `group`, or -1.
long FindCandidate(const PlacedGroup& group, const std::vector<SearchCandidate>& candidates,
                   const std::vector<CostRecord>& records) {
  const long index = IndexOfCandidate(group, candidates);
  return index >= 0 && records[static_cast<size_t>(index)].valid ? index : -1;
}

// "" when every group of `placement` that is a candidate measured valid; else which one did
// not and why.
std::string FirstInvalidGroup(const Placement& placement, const std::vector<SearchCandidate>& candidates,
                              const std::vector<CostRecord>& records) {
  for (const PlacedGroup& group : placement.groups) {
    const long index = IndexOfCandidate(group, candidates);
    if (index < 0 || records[static_cast<size_t>(index)].valid) continue;
    return fmt::format("its {} group {} was measured invalid: {}", group.backend, group.rule,
                       records[static_cast<size_t>(index)].reason);
  }
  return "";
}

std::vector<GroupReport> ReportGroups(const Placement& placement,
                                      const std::vector<SearchCandidate>& candidates,
                                      const std::vector<CostRecord>& records) {
  std::vector<GroupReport> groups;
  for (const PlacedGroup& placed : placement.groups) {
    const long index = FindCandidate(placed, candidates, records);
    if (index >= 0)
      groups.push_back(CandidateReport(static_cast<size_t>(index), candidates, records));
  }
  return groups;
}

// The report's groups when the end-to-end decision kept another placement than the op-level
// one: a group that is a priced candidate (every group of a backend alone) reports its cost
// and rivals; a region the two-level search made lists the op-level groups it replaced as
// its rivals (its own cost was measured only as part of the whole plan).
std::vector<GroupReport> RegroupReport(const Placement& placement,
                                       const std::vector<GroupReport>& op_level,
                                       const std::vector<SearchCandidate>& candidates,
                                       const std::vector<CostRecord>& records) {
  std::vector<GroupReport> groups;
  for (const PlacedGroup& placed : placement.groups) {
    if (const long index = FindCandidate(placed, candidates, records); index >= 0) {
      groups.push_back(CandidateReport(static_cast<size_t>(index), candidates, records));
      continue;
    }
    GroupReport group = ReportOf(placed);
    group.measured_alone = false;
    for (const GroupReport& old : op_level) {
      if (!placed.nodes.Contains(old.nodes.front())) continue;
      GroupAlternative replaced;
      replaced.backend = old.backend;
      replaced.rule = old.rule;
      replaced.precision = old.precision;
      replaced.num_nodes = static_cast<int>(old.nodes.size());
      replaced.valid = true;
      replaced.cost_ms = old.cost_ms;
      replaced.reason = "the op-level choice";
      group.alternatives.push_back(replaced);
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

// Drops the reduced-precision candidates `scope` excludes or that hold a node it keeps in
// float32.
void KeepWithinScope(const PrecisionScope& scope, std::vector<SearchCandidate>& candidates) {
  std::erase_if(candidates, [&](const SearchCandidate& c) {
    if (c.precision == Precision::kFloat32) return false;
    if (scope.excluded.count(GroupKey(c)) != 0) return true;
    for (NodeId n : c.nodes.Nodes()) {
      if (!scope.float32_only.empty() && scope.float32_only[static_cast<size_t>(n)]) return true;
    }
    return false;
  });
}

}  // namespace

std::string GroupKey(const PlacedGroup& group) {
  return group.backend + "/" + group.rule + "/" + PrecisionName(group.precision) +
         group.nodes.ToString();
}

std::vector<std::string> BackendsToPlaceOn(const OptimizeOptions& options,
                                           const BackendRegistry& registry) {
  std::vector<std::string> backends = options.backends;
  if (backends.empty()) {
    for (const Backend* backend : registry.backends()) backends.push_back(backend->name());
  }
  return backends;
}

StatusOr<OptimizeResult> OptimizePlacement(const Graph& graph, BackendRegistry& registry,
                                           int threads, const OptimizeOptions& options) {
  // Every offer enumerated once, for every search, placement and check below. Strict NaN/Inf
  // mode changes only which candidates exist, not how each is measured (same kernel, same
  // inputs, same checks against the reference), so the cost database's records are shared by
  // both modes and stay valid: no mode in the cost key.
  COLLAGE_ASSIGN_OR_RETURN(
      CandidateIndex index,
      CandidateIndex::Build(graph, BackendsToPlaceOn(options, registry), registry,
                            options.strict_non_finite, PrecisionsFor(options.precision)));
  if (options.precision == PrecisionChoice::kFloat32) {
    return SearchPlacement(graph, registry, threads, options, index, PrecisionScope{});
  }
  COLLAGE_ASSIGN_OR_RETURN(ResultWithinTolerance checked,
                           OptimizeWithinTolerance(graph, registry, threads, options, index));
  checked.kept.report.accuracy = std::move(checked.accuracy);
  return std::move(checked.kept);
}

StatusOr<OptimizeResult> SearchPlacement(const Graph& graph, BackendRegistry& registry, int threads,
                                         const OptimizeOptions& options,
                                         const CandidateIndex& index, const PrecisionScope& scope) {
  if (options.search == SearchKind::kTwoLevel &&
      (options.population < 2 || options.budget_seconds <= 0 || options.generations < 0)) {
    return InvalidArgument("the two-level search needs a population of at least 2, a budget above 0 s and a "
                           "generation cap of at least 0");
  }
  OptimizeResult result;
  OptimizeReport& report = result.report;
  report.search = options.search;
  const std::vector<std::string> backends = BackendsToPlaceOn(options, registry);
  std::vector<SearchCandidate> candidates = SearchCandidatesOf(graph, index);
  KeepWithinScope(scope, candidates);
  report.candidates = static_cast<int>(candidates.size());
  report.reduced_candidates = static_cast<int>(
      std::count_if(candidates.begin(), candidates.end(),
                    [](const SearchCandidate& c) { return c.precision != Precision::kFloat32; }));

  report.cost_db_path = options.cost_db_path.empty() ? CostDatabase::DefaultPath() : options.cost_db_path;
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<CostDatabase> database,
                           CostDatabase::Open(report.cost_db_path, &report.warnings));
  // Measured with the deployment's thread settings.
  ApplyThreadPolicy(threads);
  MeasureSettings settings;
  settings.warmup_runs = options.warmup_runs;
  settings.min_runs = options.min_runs;
  settings.max_runs = options.max_runs;
  settings.max_seconds = options.max_seconds;
  switch (options.caches) {
    case CacheState::kWarm: settings.scrub_bytes = 0; break;
    case CacheState::kCold: settings.scrub_bytes = 2 * LastLevelCacheBytes(); break;
    case CacheState::kRun: settings.scrub_bytes = RunFootprintBytes(graph); break;
  }
  const auto measure_start = std::chrono::steady_clock::now();
  // In a worker process unless told otherwise: a library crashing there costs a candidate.
  COLLAGE_ASSIGN_OR_RETURN(
      std::unique_ptr<Measurer> measurer,
      ChooseWorkers({options.workers, options.measure_worker, options.measure_timeout_seconds,
                     options.ray_python, options.cancel},
                    registry, backends, &report.warnings));
  MeasuredCostModel costs(graph, registry, *database, *measurer, threads, settings,
                          options.on_progress, options.cancel);
  std::vector<CostRecord> records;
  COLLAGE_RETURN_IF_ERROR(costs.PriceCandidates(candidates, &records));

  std::vector<SearchCandidate> valid;
  std::map<std::string, bool> reported;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (records[i].valid) {
      valid.push_back(candidates[i]);
      continue;
    }
    std::string line = candidates[i].backend + " " + candidates[i].rule + ": " + records[i].reason;
    if (report.invalid_examples.size() < kInvalidExamples && !reported[line]) {
      reported[line] = true;
      report.invalid_examples.push_back(line);
    }
  }
  COLLAGE_RETURN_IF_ERROR(costs.PriceConversions(valid));
  // Both probes choose their kernels by the costs measured alone, so the step cost is added
  // after both: every group then pays its backend's step, in the search and the report alike.
  COLLAGE_RETURN_IF_ERROR(costs.PriceStepsInRun(valid));
  COLLAGE_RETURN_IF_ERROR(costs.PriceLibrarySwitches(valid));
  for (std::vector<SearchCandidate>* list : {&valid, &candidates}) {
    for (SearchCandidate& c : *list) c.cost_ms += costs.StepInRun(c.backend);
  }
  report.measure_seconds = SecondsSince(measure_start);
  report.distinct_candidates = costs.distinct_candidates();
  report.invalid = costs.invalid();
  report.measured = costs.measured();
  report.cache_hits = costs.cache_hits();
  report.candidates_measured = costs.candidates_measured();
  report.candidates_found = costs.candidates_found();
  report.conversions = costs.conversions();
  report.library_switches = costs.library_switches();
  report.steps_priced = costs.steps_priced();
  RecordOptimize(*database, options.model_name.empty() ? graph.name() : options.model_name,
                 report);

  const auto search_start = std::chrono::steady_clock::now();
  PlanBench bench(graph, registry, threads, options);
  const bool decide = options.final_rounds > 0;
  if (decide || options.calibration_rounds > 0 || options.search == SearchKind::kTwoLevel) {
    COLLAGE_RETURN_IF_ERROR(bench.Prepare(index));
  }
  CalibrationOptions calibration;
  calibration.max_rounds = std::max(0, options.calibration_rounds);
  calibration.search.beam_width = options.beam_width;
  const TransitionCost measured_transition = [&](ValueId v, const Layout& from, const Layout& to) {
    return costs.Transition(v, from, to);
  };
  const LibrarySwitchCost library_switch = [&](const std::string& from, const std::string& to) {
    return costs.LibrarySwitch(from, to);
  };
  std::optional<PhaseProgress> calibration_progress;
  const ProfilePlan profile = [&](const Placement& placement) -> StatusOr<PlanInRun> {
    if (options.cancel.cancelled()) return Status(StatusCode::kCancelled, "interrupted");
    StatusOr<PlanInRun> run = bench.Profile(placement);
    if (calibration_progress) calibration_progress->Step();
    return run;
  };
  // The closest plans of calibration, timed again side by side before one is kept.
  constexpr int kRetimeRounds = 5;
  const RetimePlans retime =
      [&](const std::vector<Placement>& plans) -> StatusOr<std::vector<double>> {
    if (options.cancel.cancelled()) return Status(StatusCode::kCancelled, "interrupted");
    return bench.TimeSideBySide(plans, kRetimeRounds);
  };
  // Every backend alone: a plan of its own for calibration, and a finalist of the decision.
  std::vector<NamedPlacement> alone;
  for (const std::string& name : backends) {
    const Backend* backend = registry.Find(name);
    if (backend == nullptr || (!decide && calibration.max_rounds == 0)) continue;
    auto placement = PlaceOnSingleBackend(graph, *backend, index, registry);
    if (placement.ok())
      alone.emplace_back(PlacementSource::SingleBackend(name), std::move(*placement));
  }
  // At most its rounds, and each backend alone once.
  if (calibration.max_rounds > 0) {
    calibration_progress.emplace(options.on_progress, "calibration",
                                 calibration.max_rounds + static_cast<int>(alone.size()));
  }
  COLLAGE_ASSIGN_OR_RETURN(
      CalibratedSearch calibrated,
      SearchCalibratedOpLevel(graph, valid, measured_transition, library_switch, profile, retime,
                              alone, calibration));
  if (calibration_progress) calibration_progress->Finish();
  // From here on every estimate uses the costs the runs corrected.
  const TransitionCost transition =
      WithConversionTimes(measured_transition, calibrated.conversion_ms);
  const OpLevelResult& found = calibrated.kept;
  report.calibration = calibrated.rounds;
  report.calibration_stopped = calibrated.stopped;
  report.calibration_retimed = calibrated.plans_retimed;
  report.search_seconds = SecondsSince(search_start);
  if (!std::isfinite(found.cost_ms)) {
    return Internal("the op-level search found no placement whose layout conversions can all be built");
  }
  report.search_states = found.states;
  report.search_states_cut = found.states_cut;
  report.estimated_ms = found.cost_ms;
  // Each chosen candidate joins the placement as the PlacedGroup it extends.
  Placement op_level = PlacementOf(found, valid);
  COLLAGE_RETURN_IF_ERROR(ValidatePlacement(graph, op_level, registry));
  const std::vector<GroupReport> op_level_groups = ReportGroups(op_level, candidates, records);

  // The finalists: the op-level plan first (kept on a tie), the two-level best, every
  // backend alone.
  std::vector<Finalist> finalists = {{PlacementSource::OpLevel(), op_level, found.cost_ms, ""}};
  if (options.search == SearchKind::kTwoLevel) {
    COLLAGE_ASSIGN_OR_RETURN(TwoLevelResult two_level,
                             SearchTwoLevel(graph, bench, op_level, index, options));
    report.generations = two_level.generations;
    report.evaluations = two_level.evaluations;
    report.genome_cache_hits = two_level.genome_cache_hits;
    report.invalid_genomes = two_level.invalid_genomes;
    report.invalid_genome_reasons = std::move(two_level.invalid_genome_reasons);
    report.evolve_seconds = two_level.evolve_seconds;
    COLLAGE_RETURN_IF_ERROR(ValidatePlacement(graph, two_level.best, registry));
    const std::optional<double> estimate =
        EstimatePlacement(graph, two_level.best, valid, transition, library_switch);
    finalists.push_back(
        {PlacementSource::TwoLevel(), std::move(two_level.best), estimate.value_or(0), ""});
  }
  size_t kept =
      options.search == SearchKind::kTwoLevel ? 1 : 0;  // without a decision: the search's result
  if (decide) {
    for (auto& [source, placement] : alone) {
      const std::optional<double> estimate =
          EstimatePlacement(graph, placement, valid, transition, library_switch);
      Finalist finalist{source, std::move(placement), estimate.value_or(0), ""};
      // A group that failed its own measurement (wrong answer, crash or hang in the worker) is
      // not run again in this process.
      finalist.skipped = FirstInvalidGroup(finalist.placement, candidates, records);
      finalists.push_back(std::move(finalist));
    }
    COLLAGE_ASSIGN_OR_RETURN(FinalDecision decided, DecideFinalPlacement(finalists, bench, options));
    kept = decided.kept;
    report.finalists = std::move(decided.finalists);
    report.kept_finalist = finalists[kept].source;
    report.measured_ms = decided.measured_ms;
    report.decision_rounds = decided.rounds;
    report.round_spread = decided.round_spread;
    if (!decided.warning.empty()) report.warnings.push_back(std::move(decided.warning));
  }
  result.placement = std::move(finalists[kept].placement);
  report.groups = kept == 0 ? op_level_groups
                            : RegroupReport(result.placement, op_level_groups, candidates, records);
  COLLAGE_RETURN_IF_ERROR(ValidatePlacement(graph, result.placement, registry));
  // The kept placement's steps in a run: from its calibration run where calibration ran it
  // (the op-level plan, or a backend alone), else profiled now.
  RunProfile kept_steps;
  if (auto ran = calibrated.profiles.find(PlacementKey(result.placement));
      ran != calibrated.profiles.end()) {
    kept_steps = std::move(ran->second);
  } else {
    if (options.cancel.cancelled()) return Status(StatusCode::kCancelled, "interrupted");
    bench.PrepareInputs();
    COLLAGE_ASSIGN_OR_RETURN(PlanInRun profiled, bench.Profile(result.placement));
    kept_steps = std::move(profiled.steps);
  }
  if (!TakeInRunProfile(std::move(kept_steps), report)) {
    report.warnings.push_back(
        "the report's groups are not the running placement's steps; no in-run time per group");
  }
  return result;
}

}  // namespace collage
