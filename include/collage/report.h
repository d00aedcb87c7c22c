// The reporting API: what `collage optimize`, `collage bench` and `collage demo` show of a
// placement, for applications that want to show the same:
// - the in-run profile (collage/in_run_profile.h, included here);
// - the end-to-end decision between the finalists (OptimizeReport::finalists) told to a
//   reader: names, the kept one, its runner-up, the estimate against the measurement;
// - the HTML report of the placement;
// - profiled runs as a Chrome trace.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collage/in_run_profile.h"
#include "collage/optimize.h"
#include "collage/run_profile.h"
#include "collage/session.h"
#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

// The end-to-end decision ----------------------------------------------------------------

// A calibration plan's origin as the JSON summary and Python spell it: "search" for the
// search's plans, else PlacementSourceName ("whole-graph:openvino", "single-backend:onednn").
std::string CalibrationOriginName(const PlacementSource& origin);

// The optimize as JSON ------------------------------------------------------------------

// What a JSON summary says besides the report.
struct OptimizeJsonContext {
  std::string model;      // the model's path, as the caller named it
  std::string plan_path;  // where the plan was saved; empty: not saved (null in the JSON)
};

// The optimize that `report` describes (Session::Optimize on `session`, whose current
// placement is the kept one) as JSON text: the one form `collage optimize --json` writes and
// Python's collage.optimize makes its report from (docs/cli.md lists the fields).
std::string OptimizeReportJson(const Session& session, const OptimizeReport& report,
                               const OptimizeJsonContext& context);

// The kept placement in a few words, from its groups: "openvino bf16, whole model" for one
// group over the model, else its groups per backend and precision, most first ("onednn 31
// groups, xnnpack 11, native 1").
std::string PlacementInBrief(const OptimizeReport& report);

// The kept finalist; nullptr when the decision was not made (OptimizeOptions::final_rounds 0).
const FinalistReport* KeptFinalist(const OptimizeReport& report);

// The contender closest to the kept one (lowest ratio_to_kept; below 1 when the kept one won
// a tie); nullptr when no other finalist ran.
const FinalistReport* RunnerUp(const OptimizeReport& report);

// The additive estimate set against the end-to-end median of the same placement: the kept
// finalist's when it has an estimate, else the search's own plan's (op-level) — the point is
// to show the cost model's error, so both numbers must be of one placement.
struct EstimateAgainstRun {
  const FinalistReport* finalist = nullptr;  // nullptr: nothing estimated was measured
  double estimated_ms = 0;
  double measured_ms = 0;
};
EstimateAgainstRun CompareEstimateWithRun(const OptimizeReport& report);

// "12.3% low" (the estimate below the measurement) or "4.0% high".
std::string EstimateError(double estimated_ms, double measured_ms);

// The HTML report ------------------------------------------------------------------------

// The placement made visible (DESIGN.md: "placement you can see and explain"): a
// self-contained HTML page titled with the model's file. It opens with the end-to-end decision
// between the finalists (the kept one marked, each one's speed against the others) and the
// time per backend; then the graph of groups, each box coloured by its
// backend and labelled with its rule, its ops, its estimate and its time in a profiled run,
// a layout conversion on the edge it converts, a two-level region as a cluster around its
// nodes; then every group's rivals (the other backends' offers and their costs, or why they
// were invalid) and every layout conversion of the run.

// Which layout draws the graph: Graphviz's dot where it is installed (the better drawing),
// else the built-in layered layout; dot failing (or taking too long) falls back to the
// built-in one too, so that a report is always written.
enum class ReportLayout {
  kAuto,     // dot when it is on $PATH (`collage optimize --report`: unless
             // $COLLAGE_REPORT_LAYOUT is "builtin")
  kDot,      // dot, falling back only when it is missing or fails
  kBuiltIn,  // the built-in layout, dot or not
};

struct PlacementReportOptions {
  std::string title;  // what the page is about, e.g. the model's file name; empty: the graph's name
  ReportLayout layout = ReportLayout::kAuto;
  // What the figures were measured on (machine, threads, libraries, date), said under the
  // title; the page for a session fills it from the session and this machine when empty.
  std::string measured_on = {};
};

// The page for the session's current placement, as `report` (from session.Optimize) found it.
// `in_run`: the kept placement's steps with their mean time in profiled runs (its layout
// conversions are listed from it; the groups' times are GroupReport::in_run_ms). Empty: not
// profiled, the in-run columns say so.
std::string PlacementReportHtml(const Session& session, const OptimizeReport& report,
                                const RunProfile& in_run,
                                const PlacementReportOptions& options = {});

// Profiled runs as a Chrome trace (chrome://tracing, Perfetto): one complete event per kernel,
// named by its ops, with its backend and rule as category and arguments (`collage bench
// --export-profile`, Python's InferenceSession.end_profiling).
struct TracedRun {
  double start_ms = 0;  // when the run started, from the first run's start
  RunProfile profile;
};
std::string ChromeTraceJson(const std::vector<TracedRun>& runs);

}  // namespace collage
