// Options and report of Session::Optimize: the measured placement search (DESIGN.md 1.4-1.5).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/cancellation.h"
#include "collage/placement_source.h"
#include "collage/precision.h"
#include "collage/run_profile.h"
#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

// Which precisions the search may give a group (OptimizeOptions::precision).
enum class PrecisionChoice {
  kFloat32,   // every group in float32: the model's own arithmetic
  kBfloat16,  // bfloat16 where a backend offers it and it measures faster, within the tolerance
  kAuto,      // every reduced precision a backend offers for float models, within the tolerance
};

// "fp32", "bf16", "auto"; and back (none for other text).
const char* PrecisionChoiceName(PrecisionChoice choice);
std::optional<PrecisionChoice> PrecisionChoiceNamed(std::string_view name);

// Which search places the groups (OptimizeOptions::search).
enum class SearchKind {
  kOpLevel,   // dynamic programming over group costs measured alone, calibrated by runs
  kTwoLevel,  // then the evolutionary search over whole plans measured end to end (DESIGN.md 1.5)
};
// "op-level", "two-level"; and back (none for other text).
const char* SearchKindName(SearchKind kind);
std::optional<SearchKind> SearchKindNamed(std::string_view name);
// The op-level or two-level search's PlacementSource.
PlacementSource SourceOf(SearchKind kind);

// The caches each timed run of a candidate meets (OptimizeOptions::caches).
enum class CacheState {
  kRun,   // as a run of the model leaves them (its footprint scrubbed through, inputs read back)
  kWarm,  // nothing in between: the kernel's data stays cached
  kCold,  // twice the last-level cache scrubbed through
};
// "run", "warm", "cold"; and back (none for other text).
const char* CacheStateName(CacheState state);
std::optional<CacheState> CacheStateNamed(std::string_view name);

// Sets of a model's inputs, by input name, on which a plan's outputs are checked.
using NamedInputSet = std::vector<std::pair<std::string, Tensor>>;

// Where the optimizer is, for progress bars. The phases, in order:
//   "candidates", "conversions", "steps in a run", "library switches"
//                                measurements: distinct ones resolved (measured or found)
//   "calibration"                plans of the op-level search run to re-price its groups
//   "finalists"                  the end-to-end decision's finalists compiled and checked
//   "decision"                   rounds of the decision (every finalist run once per round)
// `total` is what the phase takes at most (calibration and the decision may stop earlier:
// the last report of a phase has done == total).
struct OptimizeProgress {
  std::string phase;
  int done = 0;
  int total = 0;
  int cache_hits = 0;  // measurements: found in the cost database
  int invalid = 0;     // measurements: failed to compile or run, or disagreed with the reference
  double elapsed_seconds = 0;  // since the phase began (the measurements: since the first)
};

// Where the graph-level (evolutionary) search is, after each generation.
struct GenerationProgress {
  int generation = 0;
  double best_ms = 0;  // best end-to-end latency so far (0 until one is valid)
  int evaluations = 0;  // distinct placements compiled and measured
  int cache_hits = 0;   // genomes (or placements) met again
  double elapsed_seconds = 0;
};

// Who measures an optimize's candidates (OptimizeOptions::workers).
struct MeasureWorkers {
  enum class Kind {
    kLocalWorker,  // collage_measure_worker, a process of its own on this machine
    kInProcess,    // this process: a library that crashes or hangs ends the optimize
    kRay,          // the nodes of a Ray cluster
  };
  MeasureWorkers() = default;
  explicit MeasureWorkers(Kind kind, std::string ray_address = "")
      : kind(kind), ray_address(std::move(ray_address)) {}
  static MeasureWorkers InProcess() { return MeasureWorkers(Kind::kInProcess); }

  Kind kind = Kind::kLocalWorker;
  // kRay: a cluster's Ray Client server, "ray://HOST:PORT"; "" for the cluster of $RAY_ADDRESS
  // or the one started on this machine.
  std::string ray_address;

  bool operator==(const MeasureWorkers& other) const = default;
};

// The words of `collage optimize --workers` and Python's `workers=`: "local" (or ""),
// "in-process", "ray", "ray://HOST:PORT". kInvalidArgument, listing them, for any other.
StatusOr<MeasureWorkers> MeasureWorkersNamed(std::string_view name);
// The same words back (for messages).
std::string MeasureWorkersName(const MeasureWorkers& workers);

struct OptimizeOptions;
// $COLLAGE_MEASURE_WORKER's value as the command line and Python apply it (the library reads
// no environment): "in-process" measures in this process where `options` chose the local
// worker; any other value is the worker's path where `options` names none; "" changes nothing.
void UseMeasureWorkerSetting(std::string_view value, OptimizeOptions* options);

struct OptimizeOptions {
  // Backends the search may use; empty = every registered one. "native" is always added: it
  // runs every op.
  std::vector<std::string> backends;
  // The cost database: a SQLite file, or a PostgreSQL URL ("postgresql://…") a team shares;
  // empty = the default file under the user's cache directory (COLLAGE_CACHE_DIR,
  // XDG_CACHE_HOME or ~/.cache: <dir>/collage/costs.sqlite).
  std::string cost_db_path;
  // The model's name as the cost database records the optimize (`collage costs stats`);
  // empty = the graph's name.
  std::string model_name;
  // States the op-level search keeps per step; 0 = unbounded (exact, slow on big graphs).
  int beam_width = 256;
  // Timed runs per measurement: at least min_runs, at most max_runs, stopping early after
  // max_seconds or once the spread (p90 - median) / median is below 5%.
  int warmup_runs = 2;
  int min_runs = 5;
  int max_runs = 100;
  double max_seconds = 0.25;
  // The caches each timed run of a candidate or conversion meets (docs/architecture.md,
  // "How costs are measured"): kRun — before every timed run as many bytes as one run of
  // the model touches (its constants and its peak of live values, capped at twice the
  // last-level cache) are scrubbed through the caches and the inputs read back, as the rest
  // of a run leaves them (the closest to whole runs where it was measured, at 2-3x the
  // measuring time); kWarm — nothing in between, the kernel's data stays cached; kCold —
  // always twice the last-level cache. Part of every cost's key.
  CacheState caches = CacheState::kRun;
  // The path of collage_measure_worker, a process of its own that a library crashing,
  // aborting or hanging takes down instead of the optimize (the candidate is then recorded
  // invalid, and a new worker measures the next); empty = look for it (next to the running
  // executable, beside an installed library, the build tree). No worker found, or one
  // refused (another build, lacking a backend registered here in code) → this process, with
  // a warning in the report.
  std::string measure_worker;
  // Who measures the candidates: the local worker process above (the default), this
  // process, or the nodes of a Ray cluster ($RAY_ADDRESS, else the one started on this
  // machine, or the Ray Client server named) that offer this machine's device resource
  // (DeviceResourceName, `collage ray resources`), several at once. With Ray the search, the
  // calibration runs and the probes of steps and library switches stay here; candidates and
  // layout conversions are measured on the nodes, each by collage_measure_worker at the path
  // it has here. No fallback: Ray missing or no node offering the resource is an error.
  MeasureWorkers workers;
  // The Python that runs the Ray dispatcher (tools/ray/collage_ray_dispatch.py): it must
  // import ray (scripts/install_ray.sh makes BUILD/rayenv). A bare name is looked up on PATH.
  // The command line takes it from $COLLAGE_RAY_PYTHON.
  std::string ray_python = "python3";
  // A request to the worker taking longer is stopped: the worker is killed and the
  // candidate recorded invalid ("timed out after 60 s").
  double measure_timeout_seconds = 60;
  std::function<void(const OptimizeProgress&)> on_progress;
  // Only rules that meet the NaN/Inf contract are candidates (SessionOptions::
  // strict_non_finite; Session::Optimize on a strict session is strict whatever this says).
  bool strict_non_finite = false;

  // The op-level search alone, or the two-level search after it.
  SearchKind search = SearchKind::kOpLevel;
  // Two-level only: stops at the budget or the generation cap, whichever comes first; a
  // fixed seed.
  double budget_seconds = 120;
  int generations = 1000;
  int population = 16;
  unsigned seed = 1;
  // The end-to-end decision between the finalists (the search's plan, the two-level best,
  // every backend alone): at least final_rounds interleaved rounds, and more, up to
  // max_final_rounds, while the two fastest are within the noise of each other. 0 skips
  // the decision: the search's plan is kept unmeasured.
  int final_rounds = 15;
  int max_final_rounds = 60;
  // Plans the op-level search runs to calibrate its costs (docs/architecture.md, "Calibrated
  // against its own runs"): each is run and profiled, its groups and conversions re-priced at
  // their times in the run, and the search repeated, until it returns a plan it already ran
  // or this many ran; after the first, every group that is the whole graph and every backend
  // alone run once too, where their estimate is within 1.5x of the fastest plan run.
  // The fastest in its runs is the op-level plan. 0: the search's first plan, priced by the
  // groups' measurements alone.
  int calibration_rounds = 10;
  std::function<void(const GenerationProgress&)> on_generation;
  // Cancelled (from any thread, or a signal handler: collage/cancellation.h), the optimize
  // stops at the next point where stopping loses nothing and returns kCancelled, every
  // measurement made kept in the cost database.
  CancellationToken cancel;

  // Reduced precision (docs/architecture.md, "Precision"). With kBfloat16 or kAuto the
  // backends' reduced-precision offers are measured beside their float32 ones, and the plan
  // kept is checked end to end: its outputs on every input set against the float32 reference
  // kernels' (normalized error, max |a - b| / max |reference|) must stay within `tolerance`;
  // while they do not, the reduced-precision groups that cost most accuracy go back to float32
  // and the search runs again. A plan beyond the tolerance is never returned: at worst it is
  // all float32, and the report says so.
  PrecisionChoice precision = PrecisionChoice::kFloat32;
  double tolerance = 1e-2;
  // The inputs the check runs on; empty: accuracy_input_sets sets of random inputs (a fixed
  // seed, the values measurement uses: token ids and indices in range).
  std::vector<NamedInputSet> accuracy_inputs;
  int accuracy_input_sets = 2;
};

// One contender of the end-to-end decision, measured side by side with the others.
struct FinalistReport {
  PlacementSource source;   // the op-level or two-level plan, or one backend alone
  double estimated_ms = 0;  // the op-level search's estimate of it (0: none)
  double median_ms = 0;     // median over the decision's rounds
  // Median over the rounds of (this finalist's time / the kept one's time in the same round):
  // 1 for the kept one, above 1 for slower ones.
  double ratio_to_kept = 0;
  int rounds_won = 0;  // rounds in which it was the fastest
  bool kept = false;
  std::string skipped;  // why it was not a contender (does not compile, wrong outputs)
  int rounds_run = 0;  // rounds it ran in (fewer when it fell far behind and stopped)
};

// Another backend's offer for the nodes of a chosen group.
struct GroupAlternative {
  std::string backend;
  std::string rule;
  Precision precision = Precision::kFloat32;
  int num_nodes = 0;    // nodes of the offered group (= the chosen group's when same_nodes)
  bool same_nodes = false;
  bool valid = false;
  double cost_ms = 0;
  std::string reason;  // why invalid
};

struct GroupReport {
  std::string backend;
  std::string rule;
  Precision precision = Precision::kFloat32;
  std::vector<int> nodes;
  double cost_ms = 0;
  // False for a region the two-level search made: it was measured only within whole plans.
  bool measured_alone = true;
  // This group's step's time in runs of the kept placement (OptimizeReport::in_run; 0: not
  // profiled). Beside cost_ms it shows where the additive estimate is wrong: caches, thread
  // pools and neighbours differ within a run.
  double in_run_ms = 0;
  // The chosen group's rivals: every other offer of the same nodes, and the cheapest offer
  // of each other backend containing its first node.
  std::vector<GroupAlternative> alternatives;
};

// One plan the op-level search ran to calibrate its costs.
struct CalibrationReport {
  double estimated_ms = 0;  // the search's estimate of the plan, before it ran
  double in_run_ms = 0;     // the median time of its profiled runs
  int groups_repriced = 0;  // its groups priced at their time in a run for the first time
  // kOpLevel for the search's plans; for a plan of its own, run after the search's first:
  // kWholeGraph (a group that is the whole model) or kSingleBackend.
  PlacementSource origin;
};

struct OptimizeReport {
  int candidates = 0;            // groups offered by the backends
  int reduced_candidates = 0;    // of which in a reduced precision (OptimizeOptions::precision)
  int distinct_candidates = 0;   // after merging repeated blocks (same signature)
  int measured = 0;              // measurements made now (candidates and conversions)
  int cache_hits = 0;            // found in the cost database
  int candidates_measured = 0;   // of the distinct candidates, measured now
  int candidates_found = 0;      // of the distinct candidates, found in the cost database
  int invalid = 0;               // distinct candidates recorded invalid
  int conversions = 0;           // distinct layout conversions priced
  int library_switches = 0;      // switches between backends priced (each direction of each pair)
  int steps_priced = 0;          // backends whose extra time per step in a run was priced
  std::vector<std::string> invalid_examples;  // a few "backend rule: reason" lines
  int64_t search_states = 0;
  int64_t search_states_cut = 0;  // dropped by the beam: 0 means the search was exact
  double measure_seconds = 0;
  double search_seconds = 0;
  // The search's additive estimate of the op-level plan, made before that plan ran (with the
  // costs of earlier calibration rounds' runs where it shares their groups).
  double estimated_ms = 0;
  // The plans run to calibrate the costs, in order; the op-level plan is the fastest of them.
  std::vector<CalibrationReport> calibration;
  std::string calibration_stopped;  // why before the search repeated a plan ("": it did)
  // Plans within 25% of the fastest timed again side by side to choose the op-level plan (0: none).
  int calibration_retimed = 0;
  // The end-to-end decision (empty when OptimizeOptions::final_rounds is 0): every finalist,
  // the kept one's name and median, the rounds measured and the kept one's round-to-round
  // spread ((p90 - p10) / median of its per-round times).
  std::vector<FinalistReport> finalists;
  std::optional<PlacementSource> kept_finalist;
  double measured_ms = 0;
  int decision_rounds = 0;
  double round_spread = 0;
  std::vector<GroupReport> groups;
  // The kept placement's steps with their times in a run (each step's median over its
  // profiled runs): the groups' in_run_ms and the layout conversions between them. From the
  // kept plan's calibration run where calibration ran it, else profiled after the decision.
  // Empty (with a warning) when its steps are not one per group.
  RunProfile in_run;
  std::vector<std::string> warnings;  // e.g. a corrupt cost database moved aside
  std::string cost_db_path;

  // The accuracy check of a reduced-precision optimize (precision not kFloat32).
  struct AccuracyCheck {
    double error = 0;  // the kept plan's largest normalized output error over the input sets
    double tolerance = 0;
    int input_sets = 0;
    int searches = 0;  // searches run: 1 when the first plan was within the tolerance
    // Groups sent back to float32, as "backend rule (n nodes): error e without it".
    std::vector<std::string> reverted;
    int reduced_groups = 0;  // groups of the kept plan in a reduced precision
    // Why the kept plan is all float32 although reduced precision was asked for ("" when it
    // is not): no backend offers it on this CPU, none measured faster, or none kept the
    // outputs within the tolerance.
    std::string all_float32_because;
  };
  AccuracyCheck accuracy;

  SearchKind search = SearchKind::kOpLevel;

  // Two-level only.
  int generations = 0;
  int evaluations = 0;        // distinct placements compiled and measured end to end
  int genome_cache_hits = 0;
  int invalid_genomes = 0;
  std::vector<std::string> invalid_genome_reasons;  // a few
  double evolve_seconds = 0;
};

}  // namespace collage
