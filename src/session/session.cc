#include "collage/session.h"

#include <chrono>
#include <functional>
#include <mutex>
#include <new>
#include <set>

#include "collage/available_backends.h"
#include "collage/sdk/errors.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/index_bounds.h"
#include "ir/quantization_step.h"
#include "ir/simplify.h"
#include "onnx/onnx_import.h"
#include "ops/flops.h"
#include "plan/plan.h"
#include "plan/plan_set.h"
#include "runtime/executable.h"
#include "runtime/placement.h"
#include "runtime/threading.h"
#include "search/optimizer.h"
#include "session/run_inputs.h"
#include "session/session_access.h"
#include "session/shape_specializer.h"
#include "session/staged_model.h"

namespace collage {

struct Session::Impl {
  // A session on a parsed model (a file's or a buffer's), the import timed: LoadFile and
  // LoadBytes. One that compiles per run where the model's shapes are not all known at load.
  static StatusOr<std::unique_ptr<Session>> LoadParsed(
      const std::function<StatusOr<ParsedModel>()>& parse, const SessionOptions& options);

  // Set when the session compiles per input signature; the fields below then stay empty and
  // the methods ask it (or the session it compiled last).
  std::unique_ptr<PerRunModel> per_run;
  std::shared_ptr<Session> latest() const { return per_run ? per_run->latest() : nullptr; }

  // SessionOptions::num_threads resolved (0 → one per core). A placement runs with it, but
  // for a plan's when the count was left to the plan (threads_from_plan).
  int requested_threads = 1;
  bool threads_from_plan = false;
  bool strict_non_finite = false;  // SessionOptions::strict_non_finite
  LoadTimes load_times;
  Graph graph;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  std::vector<std::string> warnings;
  ModelMetadata metadata;  // the file's own description (LoadParsed)
  // Inputs that are indices of a gather or scatter: checked on every run, so that an
  // out-of-range index is refused whichever backend runs the node (some engines read zeros).
  std::vector<IndexInputBound> index_bounds;

  // The current placement, compiled, and its plan. Run takes a reference under the mutex, so
  // Optimize / LoadPlan can swap them while runs are in flight.
  mutable std::mutex mutex;
  std::shared_ptr<const Executable> executable;
  int executable_threads = 1;  // what `executable` was compiled for: the session's count
  Plan plan;

  std::shared_ptr<const Executable> current() const { return current_with_threads().first; }
  std::pair<std::shared_ptr<const Executable>, int> current_with_threads() const {
    std::lock_guard<std::mutex> lock(mutex);
    return {executable, executable_threads};
  }
  // Compiles `placement` for `threads` and makes it (and `plan`, and the count) current.
  Status Install(const Placement& placement, Plan new_plan, int threads) {
    // Every way to a placement filters by the declaration already; this makes sure no path
    // (or a future one) slips an undeclared rule into a strict session.
    if (strict_non_finite) {
      COLLAGE_RETURN_IF_ERROR(CheckNonFiniteContract(graph, placement, GlobalBackendRegistry()));
    }
    // oneDNN picks its algorithms for the calling thread's OpenMP count at compile time.
    ApplyThreadPolicy(threads);
    COLLAGE_ASSIGN_OR_RETURN(
        std::unique_ptr<Executable> compiled,
        Executable::Create(graph, placement, GlobalBackendRegistry(), threads));
    std::lock_guard<std::mutex> lock(mutex);
    executable = std::move(compiled);
    executable_threads = threads;
    plan = std::move(new_plan);
    return Status();
  }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

namespace {

// What the end-to-end decision says about the kept placement: its own estimate (a backend
// alone has one too) and its margin over the runner-up.
void RecordDecision(const OptimizeReport& report, Plan& plan) {
  const FinalistReport* kept = nullptr;
  const FinalistReport* runner_up = nullptr;
  for (const FinalistReport& f : report.finalists) {
    if (!f.skipped.empty()) continue;
    if (f.kept) {
      kept = &f;
    } else if (runner_up == nullptr || f.ratio_to_kept < runner_up->ratio_to_kept) {
      runner_up = &f;
    }
  }
  if (kept == nullptr) return;
  plan.kept_finalist = kept->source;
  plan.estimated_ms = kept->estimated_ms;
  plan.measured_ms = kept->median_ms;
  if (runner_up != nullptr) {
    plan.runner_up = runner_up->source;
    plan.runner_up_ratio = runner_up->ratio_to_kept;
  }
}

constexpr int kMaxThreads = 1024;

// No exception may cross the public API: library code below (protobuf, the standard
// library's allocations) can throw, most likely std::bad_alloc for a huge model or input.
template <typename F>
auto GuardExceptions(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInvalidArgument,
                  "out of memory: loading or running the model needed more than this machine "
                  "could give (weights and node count set what loading needs; input shapes "
                  "set what intermediate values and outputs need)");
  } catch (const std::exception& e) {
    return Status(StatusCode::kInternal, std::string("unexpected exception: ") + e.what());
  }
}

// What every session checks of its options before anything is compiled.
Status CheckSessionOptions(const SessionOptions& options) {
  if (options.num_threads < 0 || options.num_threads > kMaxThreads) {
    return InvalidArgument("thread count must be 1 to {} (or 0 for one per core), got {}",
                           kMaxThreads, options.num_threads);
  }
  const BackendRegistry& registry = GlobalBackendRegistry();
  if (registry.Find(options.backend) == nullptr) {
    std::string names;
    for (const Backend* b : registry.backends()) names += (names.empty() ? "" : ", ") + b->name();
    return NotFound("no backend named '{}' (registered: {})", options.backend, names);
  }
  return Status::Ok();
}

ImportOptions ToImportOptions(const SessionOptions& options) {
  ImportOptions import;
  import.input_shapes = options.input_shapes;
  import.input_shape_origins = options.input_shape_origins;
  return import;
}

// A plan naming a backend of this collage that cannot run here (left out of the build, or an
// engine whose library is missing on this machine) is refused with the reason, before the
// plan's reader would call it an unknown plug-in.
Status CheckPlanBackendsAvailable(const Plan& plan, const std::string& path) {
  for (const PlanGroup& group : plan.groups) {
    if (GlobalBackendRegistry().Find(group.backend) != nullptr) continue;
    for (const SkippedBackend& skipped : SkippedBuiltinBackends()) {
      if (skipped.name != group.backend) continue;
      return NotFound("plan {} places groups on the {} backend, which is {} here: {}", path,
                      skipped.name, skipped.built ? "unavailable" : "not built", skipped.reason);
    }
  }
  return Status();
}

// `options` with the shapes of `dynamic` inputs (left open by options.input_shapes) taken
// from the plan at options.plan_path: the shape every plan of the file was measured at. An
// input the plans disagree on is refused, listing their shapes.
StatusOr<SessionOptions> WithShapesFromPlan(const SessionOptions& options,
                                            const std::vector<std::string>& dynamic) {
  COLLAGE_ASSIGN_OR_RETURN(std::vector<Plan> plans, ReadPlanSetFile(options.plan_path));
  SessionOptions fixed = options;
  for (const std::string& name : dynamic) {
    std::set<Shape> measured;
    for (const Plan& plan : plans) {
      auto shape = plan.input_shapes.find(name);
      if (shape != plan.input_shapes.end()) measured.insert(shape->second);
    }
    if (measured.size() != 1) {
      std::string shapes;
      for (const Shape& shape : measured) {
        shapes += (shapes.empty() ? "" : ", ") + ShapesText({{name, shape}});
      }
      return InvalidArgument(
          "input '{}' has dynamic dims, and the plan {} {}: fix them with --shape {}=DIMS",
          name, options.plan_path,
          measured.empty() ? "records no shape of it"
                           : "was measured at several shapes of it (" + shapes + ")",
          name);
    }
    fixed.input_shapes[name] = *measured.begin();
    fixed.input_shape_origins[name] = "the plan " + options.plan_path;
  }
  return fixed;
}

TensorInfo InfoOf(const Value& value) { return TensorInfo{value.name, value.type.dtype, value.type.shape}; }

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

StatusOr<std::unique_ptr<Session>> Session::Impl::LoadParsed(
    const std::function<StatusOr<ParsedModel>()>& parse, const SessionOptions& options) {
  return GuardExceptions([&]() -> StatusOr<std::unique_ptr<Session>> {
    const auto start = std::chrono::steady_clock::now();
    COLLAGE_ASSIGN_OR_RETURN(ParsedModel parsed, parse());
    ModelMetadata metadata = MetadataOf(*parsed.proto);
    auto described = [&](std::unique_ptr<Session> session) {
      session->impl_->metadata = std::move(metadata);
      return session;
    };
    ImportOptions import = ToImportOptions(options);
    ImportNeeds needs;
    import.needs = &needs;
    StatusOr<Graph> graph = ImportParsed(parsed, import);
    const double import_ms = MillisecondsSince(start);
    if (!graph.ok()) {
      // Dims left dynamic stop the import at the inputs (an InvalidArgument naming them); a
      // shape computed from an input's values stops it at the node (Unsupported).
      const bool dynamic =
          !needs.dynamic_inputs.empty() && graph.status().code() == StatusCode::kInvalidArgument;
      const bool by_value =
          !needs.value_inputs.empty() && graph.status().code() == StatusCode::kUnsupported;
      // Control flow and shapes set by computed values: only a run can decide them, whatever
      // shapes_per_run says (fixing the input shapes cannot fix those).
      if (StagedModel::NeedsStaging(parsed)) {
        COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<StagedModel> staged,
                                 StagedModel::Load(std::move(parsed), options));
        if (!options.plan_path.empty()) return staged->RefuseFixedGraphUse("running a plan");
        COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                                 PerRun(std::move(staged), options, import_ms));
        return described(std::move(session));
      }
      // Shapes left dynamic where the caller fixes every shape, and a plan given: the plan
      // says which shapes it was measured at.
      if (dynamic && !options.shapes_per_run && !options.plan_path.empty()) {
        COLLAGE_ASSIGN_OR_RETURN(SessionOptions from_plan,
                                 WithShapesFromPlan(options, needs.dynamic_inputs));
        // The model as parsed, imported again at those shapes (not read a second time).
        COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                                 LoadParsed([&] { return parsed; }, from_plan));
        std::map<std::string, Shape> taken;
        for (const std::string& name : needs.dynamic_inputs) {
          taken[name] = from_plan.input_shapes.at(name);
        }
        session->impl_->warnings.insert(
            session->impl_->warnings.begin(),
            fmt::format("input shapes from the plan, where the model leaves them dynamic: {}",
                        ShapesText(taken)));
        return session;
      }
      // A plan (set) given to such a session places each compiled signature (LoadPlan).
      if (!options.shapes_per_run || !(dynamic || by_value)) return graph.status();
      COLLAGE_ASSIGN_OR_RETURN(
          std::unique_ptr<Session> session,
          PerRun(std::make_unique<ShapeSpecializer>(std::move(parsed), options, needs.value_inputs),
                 options, import_ms));
      return described(std::move(session));
    }
    COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Session> session,
                             FromGraph(std::move(graph).value(), options));
    session->impl_->load_times.import_ms = import_ms;
    return described(std::move(session));
  });
}

StatusOr<std::unique_ptr<Session>> Session::PerRun(std::unique_ptr<PerRunModel> model,
                                                   const SessionOptions& options,
                                                   double import_ms) {
  COLLAGE_RETURN_IF_ERROR(CheckSessionOptions(options));
  auto impl = std::make_unique<Impl>();
  impl->requested_threads = ResolveThreadCount(options.num_threads);
  impl->executable_threads = impl->requested_threads;
  impl->strict_non_finite = options.strict_non_finite;
  impl->load_times.import_ms = import_ms;
  impl->per_run = std::move(model);
  impl->inputs = impl->per_run->inputs();
  impl->outputs = impl->per_run->outputs();
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

StatusOr<std::unique_ptr<Session>> Session::LoadFile(const std::string& path,
                                                     const SessionOptions& options) {
  return Impl::LoadParsed([&] { return ParseOnnxFile(path); }, options);
}

StatusOr<std::unique_ptr<Session>> Session::LoadBytes(const std::string& onnx_bytes,
                                                      const SessionOptions& options) {
  return Impl::LoadParsed([&] { return ParseOnnxBytes(onnx_bytes, "<memory>"); }, options);
}

StatusOr<std::unique_ptr<Session>> Session::FromGraph(Graph graph, const SessionOptions& options) {
  COLLAGE_RETURN_IF_ERROR(CheckSessionOptions(options));
  BackendRegistry& registry = GlobalBackendRegistry();
  const Backend* backend = registry.Find(options.backend);
  const auto start = std::chrono::steady_clock::now();
  auto impl = std::make_unique<Impl>();
  impl->requested_threads = ResolveThreadCount(options.num_threads);
  impl->threads_from_plan = options.num_threads == 0;
  impl->strict_non_finite = options.strict_non_finite;
  // Simplified before anything looks at it: placements, costs and plans all see (and hash)
  // the graph that runs.
  COLLAGE_RETURN_IF_ERROR(SimplifyGraph(graph).status());
  impl->graph = std::move(graph);
  for (ValueId id : impl->graph.inputs()) impl->inputs.push_back(InfoOf(impl->graph.value(id)));
  impl->index_bounds = IndexInputBounds(impl->graph);
  for (ValueId id : impl->graph.outputs()) {
    TensorInfo info = InfoOf(impl->graph.value(id));
    info.quantization_step = QuantizationStep(impl->graph, id);
    info.quantization_tolerance = QuantizationTolerance(impl->graph, id);
    info.dynamic_quantization_tolerance = DynamicQuantizationTolerance(impl->graph, id);
    impl->outputs.push_back(std::move(info));
  }
  std::unique_ptr<Session> session(new Session(std::move(impl)));
  if (!options.plan_path.empty()) {
    COLLAGE_RETURN_IF_ERROR(session->LoadPlan(options.plan_path));
    session->impl_->load_times.compile_ms = MillisecondsSince(start);
    return session;
  }
  // Backends may pick their algorithms for the thread count at compile time.
  const int threads = session->impl_->requested_threads;
  ApplyThreadPolicy(threads);
  COLLAGE_ASSIGN_OR_RETURN(
      Placement placement,
      PlaceOnSingleBackend(session->impl_->graph, *backend, registry, options.strict_non_finite));
  Plan plan = MakePlan(session->impl_->graph, placement, registry,
                       PlacementSource::SingleBackend(backend->name()), threads);
  plan.strict_non_finite = options.strict_non_finite;
  COLLAGE_RETURN_IF_ERROR(session->impl_->Install(placement, std::move(plan), threads));
  session->impl_->load_times.compile_ms = MillisecondsSince(start);
  return session;
}

Status Session::Optimize(const OptimizeOptions& options, OptimizeReport* report) {
  if (impl_->per_run) return impl_->per_run->RefuseFixedGraphUse("optimizing");
  return GuardExceptions([&]() -> Status {
    BackendRegistry& registry = GlobalBackendRegistry();
    // A strict session stays strict: its placements only ever use declared rules.
    OptimizeOptions effective = options;
    effective.strict_non_finite = options.strict_non_finite || impl_->strict_non_finite;
    // Measured and run with the count the session runs with now (a plan's, where it gave it).
    const int threads = impl_->current_with_threads().second;
    COLLAGE_ASSIGN_OR_RETURN(OptimizeResult result,
                             OptimizePlacement(impl_->graph, registry, threads, effective));
    const PlacementSource chosen_by =
        result.report.kept_finalist.value_or(SourceOf(result.report.search));
    Plan plan = MakePlan(impl_->graph, result.placement, registry, chosen_by, threads);
    plan.strict_non_finite = effective.strict_non_finite;
    plan.estimated_ms = result.report.estimated_ms;
    RecordDecision(result.report, plan);
    for (size_t g = 0; g < plan.groups.size(); ++g)
      plan.groups[g].cost_ms = result.report.groups[g].cost_ms;
    // The budget goes with a plan that needs it: one with reduced-precision groups.
    if (result.report.accuracy.reduced_groups > 0) {
      plan.tolerance = effective.tolerance;
      plan.checked_error = result.report.accuracy.error;
    }
    COLLAGE_RETURN_IF_ERROR(impl_->Install(result.placement, std::move(plan), threads));
    impl_->warnings.insert(impl_->warnings.end(), result.report.warnings.begin(), result.report.warnings.end());
    if (report != nullptr) *report = std::move(result.report);
    return Status();
  });
}

Status Session::LoadPlan(const std::string& path) {
  if (impl_->per_run) return impl_->per_run->RefuseFixedGraphUse("running a plan");
  return GuardExceptions([&]() -> Status {
    COLLAGE_ASSIGN_OR_RETURN(std::vector<Plan> plans, ReadPlanSetFile(path));
    // The plan made for these input shapes, else the same model's at the nearest shapes; for
    // none of the set, the first plan's refusal says why (another model, other shapes).
    const ChosenPlan chosen = ChoosePlan(plans, impl_->graph);
    Plan plan = chosen.plan != nullptr ? *chosen.plan : plans.front();
    const bool at_other_shapes = chosen.plan != nullptr && !chosen.exact;
    // The plan runs as it was measured unless the session asked for a count.
    int threads = impl_->requested_threads;
    if (impl_->threads_from_plan) {
      if (plan.threads < 1 || plan.threads > kMaxThreads) {
        return InvalidArgument("plan {}: its thread count {} is not 1 to {}", path, plan.threads,
                               kMaxThreads);
      }
      // A plan made on a larger machine (or a hostile one asking for a thousand threads)
      // runs with this machine's cores; PlacementFromPlan says so.
      threads = std::min(plan.threads, ResolveThreadCount(0));
    }
    COLLAGE_RETURN_IF_ERROR(CheckPlanBackendsAvailable(plan, path));
    std::vector<std::string> warnings;
    auto placement =
        at_other_shapes
            ? PlacementAtOtherShapes(plan, impl_->graph, GlobalBackendRegistry(), threads,
                                     chosen.declared, &warnings)
            : PlacementFromPlan(plan, impl_->graph, GlobalBackendRegistry(), threads, &warnings);
    if (!placement.ok()) {
      return Status(placement.status().code(), "plan " + path + ": " + placement.status().message());
    }
    Status contract = CheckNonFiniteContract(impl_->graph, *placement, GlobalBackendRegistry());
    if (impl_->strict_non_finite && !contract.ok()) {
      return Status(contract.code(), "plan " + path + ": " + contract.message());
    }
    if (plan.strict_non_finite && !contract.ok()) {
      // Placed in strict mode, but a rule has since withdrawn its declaration.
      warnings.push_back("it was placed in strict NaN/Inf mode, but " + contract.message());
    }
    if (at_other_shapes) {
      // What runs is this placement at these shapes, as a plan saved from it records it.
      plan = MakePlan(impl_->graph, *placement, GlobalBackendRegistry(),
                      PlacementSource::OtherShapes(), threads);
    }
    plan.strict_non_finite = contract.ok() && (plan.strict_non_finite || impl_->strict_non_finite);
    COLLAGE_RETURN_IF_ERROR(impl_->Install(*placement, std::move(plan), threads));
    for (std::string& w : warnings) impl_->warnings.push_back("plan " + path + ": " + w);
    return Status();
  });
}

Status Session::SavePlan(const std::string& path) const {
  if (impl_->per_run) return impl_->per_run->RefuseFixedGraphUse("saving a plan");
  Plan plan;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    plan = impl_->plan;
  }
  return WritePlanFile(plan, path);
}

Status Session::SavePlans(const std::vector<const Session*>& sessions, const std::string& path,
                          const std::vector<InputShapeRanges>& declared) {
  static_assert(kMaxPlansPerFile == static_cast<int>(kMaxPlansInSet));
  if (sessions.empty() || sessions.size() > kMaxPlansInSet) {
    return InvalidArgument("a plan file holds 1 to {} plans, {} were given", kMaxPlansInSet,
                           sessions.size());
  }
  if (!declared.empty() && declared.size() != sessions.size()) {
    return InvalidArgument("{} sessions and {} sets of declared shape ranges: give one set per "
                           "session, or none",
                           sessions.size(), declared.size());
  }
  std::vector<Plan> plans;
  for (const Session* session : sessions) {
    if (session->impl_->per_run) return session->impl_->per_run->RefuseFixedGraphUse("saving a plan");
    std::lock_guard<std::mutex> lock(session->impl_->mutex);
    plans.push_back(session->impl_->plan);
  }
  for (size_t i = 0; i < declared.size(); ++i) {
    for (const auto& [name, range] : declared[i]) {
      auto measured = plans[i].input_shapes.find(name);
      if (measured == plans[i].input_shapes.end()) {
        return InvalidArgument("a shape range is declared for '{}', which is not an input of the "
                               "model",
                               name);
      }
      COLLAGE_RETURN_IF_ERROR(CheckShapeRange(name, range, measured->second));
    }
    plans[i].input_ranges = declared[i];
  }
  for (const Plan& plan : plans) {
    if (plan.model_name != plans.front().model_name) {
      return InvalidArgument("the plans are of different models ('{}' and '{}')",
                             plans.front().model_name, plan.model_name);
    }
  }
  return WritePlanSetFile(plans, path);
}

void Session::RecordMeasuredLatency(double milliseconds) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->plan.measured_ms = milliseconds;
}

PlacementSource Session::placement_source() const {
  if (auto latest = impl_->latest()) return latest->placement_source();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->plan.search;
}

double Session::placement_tolerance() const {
  if (auto latest = impl_->latest()) return latest->placement_tolerance();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->plan.tolerance;
}

PlacementEstimate Session::placement_estimate() const {
  if (auto latest = impl_->latest()) return latest->placement_estimate();
  std::lock_guard<std::mutex> lock(impl_->mutex);
  PlacementEstimate estimate;
  estimate.total_ms = impl_->plan.estimated_ms;
  for (const PlanGroup& group : impl_->plan.groups) estimate.group_ms.push_back(group.cost_ms);
  return estimate;
}

const ModelMetadata& Session::metadata() const { return impl_->metadata; }

std::vector<std::string> Session::warnings() const {
  std::vector<std::string> all = impl_->warnings;
  if (impl_->per_run) {
    for (std::string& warning : impl_->per_run->warnings()) all.push_back(std::move(warning));
  }
  return all;
}

const std::vector<TensorInfo>& Session::inputs() const { return impl_->inputs; }
int Session::num_threads() const { return impl_->current_with_threads().second; }
const LoadTimes& Session::load_times() const { return impl_->load_times; }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->outputs; }
ModelSummary Session::summary() const {
  if (auto latest = impl_->latest()) return latest->summary();
  if (impl_->per_run) {
    if (std::optional<ModelSummary> written = impl_->per_run->written_summary()) return *written;
  }
  return SummarizeGraph(impl_->graph);
}
std::string Session::DescribePlacement() const {
  if (auto latest = impl_->latest()) return latest->DescribePlacement();
  if (impl_->per_run) return impl_->per_run->placement_note();
  return collage::DescribePlacement(impl_->current()->placement());
}
int Session::num_layout_conversions() const {
  if (auto latest = impl_->latest()) return latest->num_layout_conversions();
  return impl_->per_run ? 0 : impl_->current()->num_conversions();
}
bool Session::compiles_per_run() const { return impl_->per_run != nullptr; }
int Session::num_compiled_shapes() const {
  return impl_->per_run ? impl_->per_run->num_compiled() : 0;
}

StatusOr<std::map<std::string, Tensor>> Session::Run(const std::map<std::string, Tensor>& inputs,
                                                     RunProfile* profile) {
  return GuardExceptions([&] { return RunUnguarded(inputs, profile); });
}

StatusOr<std::map<std::string, Tensor>> Session::RunUnguarded(
    const std::map<std::string, Tensor>& inputs, RunProfile* profile) {
  if (impl_->per_run) return impl_->per_run->Run(inputs, profile);
  COLLAGE_RETURN_IF_ERROR(CheckRunInputs(impl_->inputs, inputs));
  std::vector<Tensor> ordered;
  for (const TensorInfo& info : impl_->inputs) ordered.push_back(inputs.at(info.name));
  COLLAGE_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, RunOrderedChecked(ordered, profile));
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < outputs.size(); ++i) named[impl_->outputs[i].name] = std::move(outputs[i]);
  return named;
}

StatusOr<std::vector<Tensor>> Session::RunOrderedChecked(const std::vector<Tensor>& ordered,
                                                         RunProfile* profile) {
  for (const IndexInputBound& bound : impl_->index_bounds) {
    // The message is made only for an input that fails.
    if (Status in_range = CheckIndexValues(ordered[bound.input], bound.axes); !in_range.ok()) {
      return in_range.WithContext(fmt::format("input '{}' (the indices of {})",
                                              impl_->inputs[bound.input].name, bound.node));
    }
  }
  // The OpenMP team size is a per-thread setting: apply it on the thread that runs. Only that:
  // nothing here may resize or destroy a pool that another session's run is using (XNNPACK's
  // kernels hold the pool of the count they were compiled for).
  const auto [executable, threads] = impl_->current_with_threads();
  ApplyThreadPolicy(threads);
  return executable->Run(ordered, profile);
}

const Graph& SessionAccess::graph(const Session& session) { return session.impl_->graph; }

StatusOr<std::vector<Tensor>> SessionAccess::RunOrdered(Session& session,
                                                       const std::vector<Tensor>& inputs,
                                                       RunProfile* profile) {
  if (session.impl_->per_run) {
    return Internal("a session that compiles per run has no fixed order of inputs to run by");
  }
  return GuardExceptions([&]() -> StatusOr<std::vector<Tensor>> {
    COLLAGE_RETURN_IF_ERROR(CheckOrderedRunInputs(session.impl_->inputs, inputs));
    return session.RunOrderedChecked(inputs, profile);
  });
}

StatusOr<std::unique_ptr<Session>> SessionAccess::FromGraph(Graph graph,
                                                           const SessionOptions& options) {
  return Session::FromGraph(std::move(graph), options);
}

}  // namespace collage
