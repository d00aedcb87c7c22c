// `collage optimize MODEL`: measure every backend's candidates on this machine, find the
// cheapest placement (op-level search; with --search two-level, then whole plans measured
// end to end), let the library decide end to end between it and each backend alone, then
// show the search's estimate against the run and save the plan / the report / the JSON.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string_view>

#include "collage/duration_text.h"
#include "collage/file_io.h"
#include "collage/cancellation.h"
#include "collage/printable_text.h"
#include "collage/report.h"
#include "commands.h"
#include "input_sets.h"
#include "optimize_summary.h"
#include "shape_range_flags.h"

namespace collage::cli {

namespace {

struct OptimizeFlags {
  std::string caches = "run";
  std::string model;
  std::vector<std::string> shapes;
  std::vector<std::string> shape_ranges;
  std::vector<std::string> inputs;
  std::string backends;
  int threads = 0;
  std::string cost_db;
  double measure_timeout = OptimizeOptions().measure_timeout_seconds;
  std::string workers;
  std::string save_plan;
  std::string report;
  std::string json;
  int beam = 256;
  std::string search = "op-level";
  std::string budget = "120s";
  int population = 16;
  int generations = 1000;
  unsigned seed = 1;
  int rounds = OptimizeOptions().final_rounds;
  int calibrate = OptimizeOptions().calibration_rounds;
  bool compare = true;
  std::vector<std::string> plugin_dirs;
  bool strict_nan = false;
  std::string precision = "fp32";
  double tolerance = OptimizeOptions().tolerance;
  std::string calibration_inputs;
};

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// The --shape flags as sets of shapes to optimize for: one set when each input is named once;
// with an input named N times (`--shape x=1x3x320x320 --shape x=1x3x640x640`), N sets, the
// k-th taking each such input's k-th shape and the inputs named once in every set.
StatusOr<std::vector<std::vector<std::string>>> ShapeSets(const std::vector<std::string>& flags) {
  std::map<std::string, std::vector<std::string>> by_input;
  std::vector<std::string> order;
  for (const std::string& flag : flags) {
    const std::string name = flag.substr(0, flag.find('='));
    if (!by_input.count(name)) order.push_back(name);
    by_input[name].push_back(flag);
  }
  size_t sets = 1;
  for (const auto& [name, values] : by_input) sets = std::max(sets, values.size());
  if (sets > static_cast<size_t>(Session::kMaxPlansPerFile)) {
    return InvalidArgument(fmt::format(
        "--shape gives {} shapes of one input; a plan file holds at most {}", sets,
        Session::kMaxPlansPerFile));
  }
  for (const auto& [name, values] : by_input) {
    if (values.size() != 1 && values.size() != sets) {
      return InvalidArgument(fmt::format(
          "--shape names '{}' {} times and another input {} times: give each input once (the "
          "same at every shape) or as many times as the others",
          name, values.size(), sets));
    }
  }
  std::vector<std::vector<std::string>> result(sets);
  for (size_t k = 0; k < sets; ++k) {
    for (const std::string& name : order) {
      const std::vector<std::string>& values = by_input[name];
      result[k].push_back(values.size() == 1 ? values.front() : values[k]);
    }
  }
  return result;
}

OptimizeOptions OptimizeOptionsOf(const OptimizeFlags& flags) {
  OptimizeOptions optimize;
  optimize.backends = SplitList(flags.backends);
  optimize.cost_db_path = CostDbLocation(flags.cost_db);
  optimize.model_name = std::filesystem::path(flags.model).filename().string();
  optimize.beam_width = flags.beam;
  optimize.search = *SearchKindNamed(flags.search);  // the flag's check names them
  optimize.population = flags.population;
  optimize.generations = flags.generations;
  optimize.seed = flags.seed;
  optimize.caches = *CacheStateNamed(flags.caches);  // the flag's check names them
  optimize.measure_timeout_seconds = flags.measure_timeout;
  optimize.workers = *MeasureWorkersNamed(flags.workers);  // the flag's check names them
  // The library reads no environment: the command line does.
  if (const char* python = std::getenv("COLLAGE_RAY_PYTHON"); python != nullptr && *python != '\0')
    optimize.ray_python = python;
  // The library's end-to-end decision between the finalists is the one measurement of whole
  // placements; --no-compare skips it (the search's plan is kept unmeasured).
  optimize.final_rounds = flags.compare ? flags.rounds : 0;
  optimize.max_final_rounds = std::max(optimize.max_final_rounds, optimize.final_rounds);
  optimize.calibration_rounds = flags.calibrate;
  optimize.precision = *PrecisionChoiceNamed(flags.precision);  // the flag's check names them
  optimize.tolerance = flags.tolerance;
  return optimize;
}

// Loads the model at each end of the declared ranges, the other inputs at `shapes` (their
// measured shapes). With `plan_path` (the plan saved), says whether its placement applies
// there whole or which groups would run on native (the warnings a run at those shapes would
// give); without it, only that the model loads there (before anything is measured: a range
// over a dim the model fixes is refused then, not after a plan declaring it was saved).
Status CheckRangeEnds(const OptimizeFlags& flags, const std::map<std::string, Shape>& shapes,
                      int threads, const InputShapeRanges& declared,
                      const std::string& plan_path) {
  for (const bool lower : {true, false}) {
    const char* end_name = lower ? "minimum" : "maximum";
    SessionOptions options;
    options.shapes_per_run = false;
    options.num_threads = threads;
    options.plan_path = plan_path;
    options.input_shapes = shapes;
    std::string at;
    for (const auto& [name, range] : declared) {
      options.input_shapes[name] = lower ? range.min : range.max;
      at += (at.empty() ? "" : ", ") + name + "=" + ShapeToString(options.input_shapes[name]);
    }
    StatusOr<std::unique_ptr<Session>> loaded = Session::LoadFile(flags.model, options);
    if (!loaded.ok()) {
      return loaded.status().WithContext(
          fmt::format("--shape-range: loading the model at the range's {} ({})", end_name, at));
    }
    if (plan_path.empty()) continue;
    const std::vector<std::string> warnings = (*loaded)->warnings();
    if (warnings.empty()) {
      std::printf("at %s (the range's %s) the plan applies whole\n", at.c_str(), end_name);
    }
    for (const std::string& warning : warnings) {
      std::printf("at %s (the range's %s): %s\n", at.c_str(), end_name,
                  PrintableText(warning).c_str());
    }
  }
  return Status();
}

Status Optimize(const OptimizeFlags& flags) {
  // Ctrl-C stops measuring at the next candidate, keeping every measurement made; the
  // optimizes of every shape set hold the one token, so that none starts after it.
  const CancellationToken cancel;
  CancelOnSignals(cancel);
  COLLAGE_RETURN_IF_ERROR(LoadPlugins(flags.plugin_dirs));
  if (flags.rounds < 1) return InvalidArgument("--rounds must be >= 1");
  if (flags.calibrate < 0)
    return InvalidArgument("--calibrate must be >= 0 (0: groups priced alone only)");
  if (flags.beam < 0) return InvalidArgument("--beam must be >= 0 (0: unbounded)");
  COLLAGE_ASSIGN_OR_RETURN(std::vector<ShapeRangeFlag> ranges,
                           ParseShapeRangeFlags(flags.shape_ranges));
  std::vector<std::string> shape_flags = flags.shapes;
  for (const std::string& measured : MeasuredShapeFlags(ranges)) shape_flags.push_back(measured);
  COLLAGE_ASSIGN_OR_RETURN(std::vector<std::vector<std::string>> shape_sets,
                           ShapeSets(shape_flags));
  if (shape_sets.size() > 1 && (!flags.report.empty() || !flags.json.empty())) {
    return InvalidArgument(fmt::format(
        "--report and --json describe one optimize; with {} shapes of an input, optimize each "
        "shape apart for them (the plan file holds every shape's plan)",
        shape_sets.size()));
  }
  OptimizeOptions optimize = OptimizeOptionsOf(flags);
  optimize.cancel = cancel;
  COLLAGE_ASSIGN_OR_RETURN(optimize.budget_seconds, ParseSeconds(flags.budget, "--budget"));
  if (!flags.calibration_inputs.empty()) {
    COLLAGE_ASSIGN_OR_RETURN(optimize.accuracy_inputs, ReadInputSets(flags.calibration_inputs));
  }

  COLLAGE_ASSIGN_OR_RETURN(InputFiles input_files, ReadInputFiles(flags.inputs));
  std::vector<std::unique_ptr<Session>> sessions;
  std::vector<InputShapeRanges> declared;  // per session
  for (const std::vector<std::string>& shapes : shape_sets) {
    SessionOptions options;
    options.shapes_per_run = false;  // the command line fixes every shape (commands.h)
    options.num_threads = flags.threads;
    // The session is strict, so its Optimize is, every finalist of its end-to-end decision
    // with it; the saved plan records it.
    options.strict_non_finite = flags.strict_nan;
    COLLAGE_RETURN_IF_ERROR(ParseShapeFlags(shapes, options));
    FixShapesFromInputFiles(input_files, options);
    declared.push_back(DeclaredRanges(ranges, options.input_shapes));
    if (!declared.back().empty()) {
      COLLAGE_RETURN_IF_ERROR(
          CheckRangeEnds(flags, options.input_shapes, flags.threads, declared.back(), ""));
    }
    COLLAGE_ASSIGN_OR_RETURN(auto session, Session::LoadFile(flags.model, options));
    if (shape_sets.size() > 1) {
      std::printf("== shapes %s\n", fmt::format("{}", fmt::join(shapes, " ")).c_str());
    }

    OptimizeReport report;
    COLLAGE_RETURN_IF_ERROR(OptimizeWithProgress(*session, optimize, &report));

    const int threads = session->num_threads();
    std::printf("model: %s  threads: %d\n", flags.model.c_str(), threads);
    std::printf("%s\n", PlacementSummary(*session).c_str());
    PrintOptimizeReport(report, report.in_run);
    if (report.search == SearchKind::kTwoLevel) PrintTwoLevelSearch(report);
    PrintAccuracyCheck(report);
    std::printf("\n");
    PrintFinalists(report);

    if (!flags.report.empty()) {
      PlacementReportOptions page;
      page.title = std::filesystem::path(flags.model).filename().string();
      // The library reads no environment: the command line passes the layout asked for.
      if (const char* layout = std::getenv("COLLAGE_REPORT_LAYOUT");
          layout != nullptr && std::string_view(layout) == "builtin") {
        page.layout = ReportLayout::kBuiltIn;
      }
      COLLAGE_RETURN_IF_ERROR(WriteFileAtomically(
          flags.report, PlacementReportHtml(*session, report, report.in_run, page)));
      std::printf("report written to %s\n", flags.report.c_str());
    }
    if (!flags.json.empty()) {
      const OptimizeJsonContext context{flags.model, flags.save_plan};
      COLLAGE_RETURN_IF_ERROR(
          WriteFileAtomically(flags.json, OptimizeReportJson(*session, report, context)));
      std::printf("summary written to %s\n", flags.json.c_str());
    }
    sessions.push_back(std::move(session));
  }
  if (!flags.save_plan.empty()) {
    std::vector<const Session*> placed;
    for (const auto& session : sessions) placed.push_back(session.get());
    COLLAGE_RETURN_IF_ERROR(Session::SavePlans(placed, flags.save_plan, declared));
    std::printf("plan%s saved to %s\n", sessions.size() > 1 ? "s of every shape" : "",
                flags.save_plan.c_str());
    for (size_t i = 0; i < sessions.size(); ++i) {
      if (declared[i].empty()) continue;
      std::map<std::string, Shape> measured;
      for (const TensorInfo& input : sessions[i]->inputs()) measured[input.name] = input.shape;
      COLLAGE_RETURN_IF_ERROR(CheckRangeEnds(flags, measured, sessions[i]->num_threads(),
                                             declared[i], flags.save_plan));
    }
  } else if (!ranges.empty()) {
    std::fprintf(stderr, "warning: --shape-range declares the range in the saved plan; without "
                         "--save-plan the plan is measured at OPT and not saved\n");
  }
  return Status();
}

}  // namespace

void AddOptimizeCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<OptimizeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "optimize", "Measure every backend's candidates and find the fastest placement");
  cmd->add_option("model", flags->model, "ONNX model file")->required();
  cmd->add_option("--shape", flags->shapes,
                  "Fix an input's shape: NAME=1x3x224x224 (repeatable; an input named N times "
                  "is optimized at each of its N shapes, into one plan file)");
  cmd->add_option("--input", flags->inputs,
                  "An input's data NAME=FILE (.npy/.pb): its shape fixes the input's dynamic dims "
                  "where --shape does not (the candidates are measured on random data)");
  cmd->add_option("--shape-range", flags->shape_ranges,
                  "A shape profile: NAME=MIN:OPT:MAX (1x3x224x224:1x3x320x320:1x3x640x640); the "
                  "plan is measured at OPT and declared for every shape from MIN to MAX, dim by "
                  "dim (repeatable, as --shape)");
  cmd->add_option(
         "--backends", flags->backends,
         "Backends the placement may use, comma-separated (default: all; native is always in)")
      ->check(NonEmptyValue());
  cmd->add_option("--threads", flags->threads, "Threads (0 = one per core): measured and run with")
      ->check(NonEmptyValue());
  cmd->add_option("--cost-db", flags->cost_db,
                  "Cost database: a SQLite file or a PostgreSQL URL (postgresql://…); default: "
                  "$COLLAGE_COST_DB, else ~/.cache/collage/costs.sqlite or $COLLAGE_CACHE_DIR");
  cmd->add_option("--measure-timeout", flags->measure_timeout,
                  "Seconds one measurement may take in the measurement worker before it is killed and the "
                  "candidate recorded invalid")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--workers", flags->workers,
                  "Where candidates are measured: local (a worker process here, the default), "
                  "in-process, ray (the nodes of the Ray cluster of $RAY_ADDRESS or of this "
                  "machine that offer this machine's device resource: `collage ray resources`) "
                  "or ray://HOST:PORT (through the cluster's Ray Client server). With Ray, "
                  "$COLLAGE_RAY_PYTHON (default python3) runs the dispatcher and must have Ray")
      ->check([](const std::string& value) { return MeasureWorkersNamed(value).status().message(); });
  cmd->add_option("--save-plan", flags->save_plan, "Write the plan (JSON) here, for run/bench --plan");
  cmd->add_option("--report", flags->report, "Write an HTML page of the placement and every group's rivals");
  cmd->add_option("--json", flags->json,
                  "Write a summary (JSON): estimate against the end-to-end measurement, finalists, "
                  "every group's estimate beside its time in a run");
  cmd->add_option(
         "--measure-caches", flags->caches,
         "Caches each timed run of a candidate meets: run (as the rest of a run leaves them), "
         "cold (everything flushed) or warm (a tight loop)")
      ->check(CLI::IsMember({"run", "cold", "warm"}))
      ->capture_default_str();
  cmd->add_option("--beam", flags->beam, "States the op-level search keeps per step (0 = unbounded, exact)")
      ->capture_default_str();
  cmd->add_option("--search", flags->search,
                  "op-level (measured groups, dynamic programming) or two-level (then whole plans measured "
                  "end to end, evolutionary)")
      ->check(CLI::IsMember({"op-level", "two-level"}))
      ->capture_default_str();
  cmd->add_option("--budget", flags->budget, "Two-level: time for the evolutionary search (120s, 2m)")
      ->capture_default_str();
  cmd->add_option("--population", flags->population, "Two-level: genomes per generation")->capture_default_str();
  cmd->add_option("--generations", flags->generations, "Two-level: generation cap")->capture_default_str();
  cmd->add_option("--seed", flags->seed, "Two-level: random seed")->capture_default_str();
  cmd->add_option("--rounds", flags->rounds,
                  "Least interleaved rounds of the end-to-end decision between the search's plan "
                  "and each backend alone (more while the two fastest are within the noise)")
      ->capture_default_str();
  cmd->add_option("--calibrate", flags->calibrate,
                  "Plans the op-level search runs to re-price its groups at their time in a run, "
                  "searching again after each (0: groups priced alone only)")
      ->capture_default_str();
  cmd->add_flag("!--no-compare", flags->compare,
                "Skip the end-to-end decision: keep the op-level search's plan (calibrated by its "
                "runs unless --calibrate 0)");
  cmd->add_option("--precision", flags->precision,
                  "fp32 (every group in float32), bf16 or auto (each group in float32 or a reduced "
                  "precision a backend offers on this CPU, whichever measures faster, the plan's "
                  "outputs kept within --tolerance of the float32 reference)")
      ->check(CLI::IsMember({"fp32", "bf16", "auto"}))
      ->capture_default_str();
  AddToleranceOption(
      cmd, flags->tolerance,
      "With --precision bf16|auto: the largest error of any output against the float32 "
      "reference kernels, max|a-b| / max|reference|, that a saved plan may show");
  cmd->add_option(
      "--calibration-inputs", flags->calibration_inputs,
      "With --precision bf16|auto: a folder of inputs the accuracy is checked on: NAME.npy "
      "or NAME.pb per model input, or one subfolder per input set (default: 2 seeded "
      "random sets)");
  AddStrictNanOption(cmd, flags->strict_nan);
  AddPluginOption(cmd, flags->plugin_dirs);
  cmd->callback([flags, &exit_code] {
    Status s = Optimize(*flags);
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace collage::cli
