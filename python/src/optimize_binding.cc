// collage._collage.optimize: what `collage optimize` does, for Python. Loads the model,
// measures every backend's candidates (in the measurement worker), searches, lets the
// end-to-end decision pick among the finalists, profiles the kept placement to set each
// group's time in a run, saves the plan if asked, and returns the report as a dict that
// python/collage/_optimize.py turns into objects.
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bindings.h"
#include "collage/optimize.h"
#include "collage/session.h"
#include "collage/report.h"
#include "session/session_access.h"
#include "collage/sdk/graph.h"
#include "status_error.h"
#include "collage/duration_text.h"
#include "collage/sdk/errors.h"

namespace nb = nanobind;

namespace collage::python {

namespace {

struct OptimizeArgs {
  std::string path;
  std::string search;
  std::string budget;  // empty: the library's default; else as `collage optimize --budget`
  int threads;
  std::string save_plan;  // empty: not saved
  std::string cost_db;    // empty: the default database
  std::vector<std::string> backends;
  int rounds;     // < 0: the default; 0: no end-to-end decision
  int calibrate;  // < 0: the default; 0: no plan run to calibrate the costs
  std::map<std::string, std::vector<int64_t>> shapes;
  bool strict_nan;
  std::string precision;  // "fp32", "bf16" or "auto" (checked by the Python wrapper)
  double tolerance;
  std::string workers;     // OptimizeOptions::workers; empty: the local worker
  std::string ray_python;  // the Python that drives Ray for workers "ray…"
  // Called with (phase, done, total, cache_hits, invalid, elapsed_seconds) as the optimize
  // goes (OptimizeProgress); None: no progress.
  nb::object on_progress;
};

// OptimizeOptions::on_progress calling a Python callable, from the optimizing thread (which
// released the GIL). It holds a handle, not a reference: the library copies and destroys the
// function without the GIL, and `callable` (OptimizeArgs) outlives the optimize. An exception
// the callable raises is dropped: a display must not stop minutes of measuring.
std::function<void(const OptimizeProgress&)> PythonProgress(const nb::object& callable) {
  if (callable.is_none()) return {};
  return [callable = nb::handle(callable)](const OptimizeProgress& p) {
    nb::gil_scoped_acquire acquire;
    try {
      callable(p.phase, p.done, p.total, p.cache_hits, p.invalid, p.elapsed_seconds);
    } catch (nb::python_error& error) {
      error.discard_as_unraisable("collage.optimize's progress display");
    }
  };
}

nb::dict FinalistDict(const FinalistReport& f) {
  nb::dict d;
  d["name"] = PlacementSourceName(f.source);
  d["estimated_ms"] = f.estimated_ms;
  d["median_ms"] = f.median_ms;
  d["ratio_to_kept"] = f.ratio_to_kept;
  d["rounds_won"] = f.rounds_won;
  d["rounds_run"] = f.rounds_run;
  d["kept"] = f.kept;
  d["skipped"] = f.skipped;
  return d;
}

nb::dict GroupDict(const GroupReport& g, const Graph& graph) {
  std::vector<std::string> nodes;
  for (int id : g.nodes) nodes.push_back(graph.node(id).name);
  nb::dict d;
  d["backend"] = g.backend;
  d["rule"] = g.rule;
  d["precision"] = PrecisionName(g.precision);
  d["nodes"] = nodes;
  d["estimated_ms"] = g.cost_ms;
  d["measured_alone"] = g.measured_alone;
  d["in_run_ms"] = g.in_run_ms;
  return d;
}

nb::dict ReportDict(const OptimizeReport& report, const Session& session, const RunProfile& in_run,
                    const std::string& plan_path) {
  nb::dict d;
  d["search"] = SearchKindName(report.search);
  d["estimated_ms"] = report.estimated_ms;
  d["measured_ms"] = report.measured_ms;
  d["kept_finalist"] =
      report.kept_finalist.has_value() ? PlacementSourceName(*report.kept_finalist) : "";
  d["decision_rounds"] = report.decision_rounds;
  d["round_spread"] = report.round_spread;
  nb::list finalists;
  for (const FinalistReport& f : report.finalists) finalists.append(FinalistDict(f));
  d["finalists"] = finalists;
  nb::list calibration;
  for (const CalibrationReport& c : report.calibration) {
    nb::dict plan;
    plan["estimated_ms"] = c.estimated_ms;
    plan["in_run_ms"] = c.in_run_ms;
    plan["groups_repriced"] = c.groups_repriced;
    plan["origin"] = CalibrationOriginName(c.origin);
    calibration.append(plan);
  }
  d["calibration"] = calibration;
  d["calibration_stopped"] = report.calibration_stopped;
  d["calibration_retimed"] = report.calibration_retimed;
  nb::list groups;
  for (const GroupReport& g : report.groups) groups.append(GroupDict(g, SessionGraph(session)));
  d["groups"] = groups;
  d["conversions_in_run_ms"] = ConversionsMs(in_run);
  d["candidates"] = report.candidates;
  d["distinct_candidates"] = report.distinct_candidates;
  d["measured"] = report.measured;
  d["cache_hits"] = report.cache_hits;
  d["candidates_measured"] = report.candidates_measured;
  d["candidates_found"] = report.candidates_found;
  d["invalid"] = report.invalid;
  d["invalid_examples"] = report.invalid_examples;
  d["conversions"] = report.conversions;
  d["measure_seconds"] = report.measure_seconds;
  d["search_seconds"] = report.search_seconds;
  d["generations"] = report.generations;
  d["evaluations"] = report.evaluations;
  d["evolve_seconds"] = report.evolve_seconds;
  d["cost_db"] = report.cost_db_path;
  nb::dict accuracy;
  accuracy["error"] = report.accuracy.error;
  accuracy["tolerance"] = report.accuracy.tolerance;
  accuracy["input_sets"] = report.accuracy.input_sets;
  accuracy["searches"] = report.accuracy.searches;
  accuracy["reduced_groups"] = report.accuracy.reduced_groups;
  accuracy["reverted"] = report.accuracy.reverted;
  accuracy["all_float32_because"] = report.accuracy.all_float32_because;
  d["accuracy"] = accuracy;
  std::vector<std::string> warnings = report.warnings;
  for (const std::string& w : session.warnings()) {
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
  d["warnings"] = warnings;
  d["placement"] = session.DescribePlacement();
  d["plan"] = plan_path.empty() ? nb::none() : nb::cast(plan_path);
  return d;
}

nb::dict Optimize(const OptimizeArgs& args) {
  SessionOptions options;
  options.num_threads = args.threads;
  // A strict session's optimize is strict, every finalist with it; the saved plan says so.
  options.strict_non_finite = args.strict_nan;
  for (const auto& [name, shape] : args.shapes) options.input_shapes[name] = shape;

  OptimizeOptions optimize;
  optimize.backends = args.backends;
  optimize.cost_db_path = args.cost_db;
  const std::optional<SearchKind> search = SearchKindNamed(args.search);
  if (!search.has_value()) {
    ThrowIfError(Status(StatusCode::kInvalidArgument,
                        "search '" + args.search + "': expected 'op-level' or 'two-level'"));
  }
  optimize.search = *search;
  if (!args.budget.empty()) optimize.budget_seconds = ValueOrThrow(ParseSeconds(args.budget, "budget"));
  if (args.rounds >= 0) {
    optimize.final_rounds = args.rounds;
    optimize.max_final_rounds = std::max(optimize.max_final_rounds, args.rounds);
  }
  if (args.calibrate >= 0) optimize.calibration_rounds = args.calibrate;
  const std::optional<PrecisionChoice> precision = PrecisionChoiceNamed(args.precision);
  if (!precision.has_value()) {
    ThrowIfError(Status(StatusCode::kInvalidArgument,
                        "precision '" + args.precision + "': expected 'fp32', 'bf16' or 'auto'"));
  }
  optimize.precision = *precision;
  optimize.tolerance = args.tolerance;
  ThrowIfError(CheckWorkers(args.workers));
  optimize.workers = args.workers;
  if (!args.ray_python.empty()) optimize.ray_python = args.ray_python;
  optimize.on_progress = PythonProgress(args.on_progress);

  std::unique_ptr<Session> session;
  OptimizeReport report;
  RunProfile in_run;
  {
    // Minutes of measuring: other Python threads go on meanwhile.
    nb::gil_scoped_release release;
    session = ValueOrThrow(Session::LoadFile(args.path, options));
    ThrowIfError(session->Optimize(optimize, &report));
    in_run = ValueOrThrow(ProfileKeptPlacement(*session, report));
    if (!args.save_plan.empty()) ThrowIfError(session->SavePlan(args.save_plan));
  }
  return ReportDict(report, *session, in_run, args.save_plan);
}

}  // namespace

void BindOptimize(nb::module_& m) {
  m.def(
      "optimize",
      [](const std::string& path, const std::string& search, const std::string& budget, int threads,
         const std::string& save_plan, const std::string& cost_db,
         const std::vector<std::string>& backends, int rounds, int calibrate,
         const std::map<std::string, std::vector<int64_t>>& shapes, bool strict_nan,
         const std::string& precision, double tolerance, const std::string& workers,
         const std::string& ray_python, nb::object on_progress) {
        return Optimize(OptimizeArgs{path, search, budget, threads, save_plan, cost_db, backends,
                                     rounds, calibrate, shapes, strict_nan, precision, tolerance,
                                     workers, ray_python, std::move(on_progress)});
      },
      nb::arg("path"), nb::arg("search"), nb::arg("budget"), nb::arg("threads"),
      nb::arg("save_plan"), nb::arg("cost_db"), nb::arg("backends"), nb::arg("rounds"),
      nb::arg("calibrate"), nb::arg("shapes"), nb::arg("strict_nan"), nb::arg("precision"),
      nb::arg("tolerance"), nb::arg("workers"), nb::arg("ray_python"),
      nb::arg("on_progress").none());
}

}  // namespace collage::python
