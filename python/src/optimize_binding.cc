// collage._collage.optimize: what `collage optimize` does, for Python. Loads the model,
// measures every backend's candidates (in the measurement worker), searches, lets the
// end-to-end decision pick among the finalists (the session profiles the kept placement to set
// each group's time in a run), saves the plan if asked, and returns the report as the JSON text
// `collage optimize --json` writes (OptimizeReportJson), which python/collage/_optimize.py
// turns into objects.
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bindings.h"
#include "collage/cancellation.h"
#include "collage/duration_text.h"
#include "collage/optimize.h"
#include "collage/report.h"
#include "collage/session.h"
#include "status_error.h"

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
  std::string measure_worker;  // $COLLAGE_MEASURE_WORKER, applied by UseMeasureWorkerSetting
  // Called with (phase, done, total, cache_hits, invalid, elapsed_seconds) as the optimize
  // goes (OptimizeProgress); None: no progress.
  nb::object on_progress;
  CancellationToken cancel;  // the caller's; cancelling it stops this optimize
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

std::string Optimize(const OptimizeArgs& args) {
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
  StatusOr<MeasureWorkers> workers = MeasureWorkersNamed(args.workers);
  ThrowIfError(workers.status());
  optimize.workers = *workers;
  if (!args.ray_python.empty()) optimize.ray_python = args.ray_python;
  UseMeasureWorkerSetting(args.measure_worker, &optimize);
  optimize.on_progress = PythonProgress(args.on_progress);
  optimize.cancel = args.cancel;

  std::unique_ptr<Session> session;
  OptimizeReport report;
  {
    // Minutes of measuring: other Python threads go on meanwhile.
    nb::gil_scoped_release release;
    session = ValueOrThrow(Session::LoadFile(args.path, options));
    ThrowIfError(session->Optimize(optimize, &report));
    if (!args.save_plan.empty()) ThrowIfError(session->SavePlan(args.save_plan));
  }
  return OptimizeReportJson(*session, report, OptimizeJsonContext{args.path, args.save_plan});
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
         const std::string& ray_python, const std::string& measure_worker, nb::object on_progress,
         const CancellationToken& cancel) {
        return Optimize(OptimizeArgs{path, search, budget, threads, save_plan, cost_db, backends,
                                     rounds, calibrate, shapes, strict_nan, precision, tolerance,
                                     workers, ray_python, measure_worker, std::move(on_progress),
                                     cancel});
      },
      nb::arg("path"), nb::arg("search"), nb::arg("budget"), nb::arg("threads"),
      nb::arg("save_plan"), nb::arg("cost_db"), nb::arg("backends"), nb::arg("rounds"),
      nb::arg("calibrate"), nb::arg("shapes"), nb::arg("strict_nan"), nb::arg("precision"),
      nb::arg("tolerance"), nb::arg("workers"), nb::arg("ray_python"), nb::arg("measure_worker"),
      nb::arg("on_progress").none(), nb::arg("cancel"));
}

}  // namespace collage::python
