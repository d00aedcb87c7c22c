#include "search/plan_bench.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "collage/native_backend.h"
#include "collage/random_tensor.h"
#include "collage/sdk/errors.h"
#include "cost/extra_time.h"
#include "ir/output_judgement.h"
#include "search/optimizer.h"

namespace collage {
namespace {

// Float32 plans against the reference kernels: whole models reassociate long sums.
constexpr double kFloat32Tolerance = 1e-3;
constexpr int kMinProfiledRuns = 3;
constexpr int kMaxProfiledRuns = 7;
constexpr double kProfileMillis = 500;

}  // namespace

std::string PlacementKey(const Placement& placement) {
  std::string key;
  for (const PlacedGroup& g : placement.groups) key += GroupKey(g) + ";";
  return key;
}

PlanBench::PlanBench(const Graph& graph, const BackendRegistry& registry, int threads,
                     const OptimizeOptions& options)
    : graph_(graph),
      registry_(registry),
      threads_(threads),
      // A plan with reduced-precision groups is held here only to what tells a wrong kernel
      // from rounding (the bound of a bf16 group alone): the user's budget is judged on the
      // kept plan, over every input set, by the accuracy check (search/precision_search.h),
      // which sends groups back to float32 until it holds.
      tolerance_(options.precision == PrecisionChoice::kFloat32
                     ? kFloat32Tolerance
                     : std::max(kFloat32Tolerance, GroupErrorBound(Precision::kBfloat16))) {
  settings_.warmup_runs = 1;
  settings_.min_runs = std::max(1, std::min(3, options.min_runs));
  settings_.max_runs = std::max(settings_.min_runs, std::min(15, options.max_runs));
  settings_.max_seconds = 0.5;
}

void PlanBench::PrepareInputs() {
  if (!inputs_.empty() || graph_.inputs().empty()) return;
  std::mt19937 rng(99);
  for (ValueId in : graph_.inputs()) {
    const TensorType& type = graph_.value(in).type;
    inputs_.push_back(RandomTensor(type.dtype, type.shape, rng));
  }
}

Status PlanBench::Prepare(const CandidateIndex& index) {
  PrepareInputs();
  const Backend* native = registry_.Find(kNativeBackend);
  if (native == nullptr) return NotFound("the native backend is not registered");
  COLLAGE_ASSIGN_OR_RETURN(Placement reference,
                           PlaceOnSingleBackend(graph_, *native, index, registry_));
  COLLAGE_ASSIGN_OR_RETURN(auto exe, Executable::Create(graph_, reference, registry_, threads_));
  COLLAGE_ASSIGN_OR_RETURN(reference_outputs_, exe->Run(inputs_));
  return Status();
}

StatusOr<std::unique_ptr<Executable>> PlanBench::Compile(const Placement& placement) const {
  return Executable::Create(graph_, placement, registry_, threads_);
}

Status PlanBench::Check(const Executable& exe) const {
  auto outputs = exe.Run(inputs_);
  if (!outputs.ok())
    return Status(outputs.status().code(), "run failed: " + outputs.status().message());
  for (size_t o = 0; o < outputs->size(); ++o) {
    const OutputJudgement j = JudgeOutput(graph_, graph_.outputs()[o], nullptr, (*outputs)[o],
                                          reference_outputs_[o], tolerance_);
    if (!j.ok) {
      return Internal("output {} differs from the reference kernels (error {:.3g})", o, j.error);
    }
  }
  return Status();
}

Fitness PlanBench::Measure(const Placement& placement) const {
  auto exe = Compile(placement);
  if (!exe.ok()) return {Cost::Invalid(), "does not compile: " + exe.status().message()};
  if (Status checked = Check(**exe); !checked.ok()) return {Cost::Invalid(), checked.message()};
  CostRecord timed = TimeRepeatedly([&] { return (*exe)->Run(inputs_).status(); }, settings_);
  return {timed.cost(), timed.reason};
}

StatusOr<double> PlanBench::RunOnce(const Executable& exe, RunProfile* profile) const {
  const auto start = std::chrono::steady_clock::now();
  COLLAGE_RETURN_IF_ERROR(exe.Run(inputs_, profile).status());
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

StatusOr<double> PlanBench::RunSettled(const Executable& exe) const {
  double settled_ms = 0;
  do {
    COLLAGE_ASSIGN_OR_RETURN(double ms, RunOnce(exe));
    settled_ms += ms;
  } while (settled_ms < kSettleMillis);
  return RunOnce(exe);
}

StatusOr<PlanInRun> PlanBench::Profile(const Placement& placement) const {
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, Compile(placement));
  COLLAGE_RETURN_IF_ERROR(RunSettled(*exe).status());
  std::vector<RunProfile> runs;
  std::vector<double> walls;
  double total_ms = 0;
  while (static_cast<int>(runs.size()) < kMinProfiledRuns ||
         (static_cast<int>(runs.size()) < kMaxProfiledRuns && total_ms < kProfileMillis)) {
    RunProfile profile;
    COLLAGE_ASSIGN_OR_RETURN(double ms, RunOnce(*exe, &profile));
    runs.push_back(std::move(profile));
    walls.push_back(ms);
    total_ms += ms;
  }
  PlanInRun ran;
  ran.wall_ms = MedianOf(walls);
  ran.steps = runs.front();
  for (size_t s = 0; s < ran.steps.nodes.size(); ++s) {
    std::vector<double> times;
    for (const RunProfile& run : runs) {
      if (s < run.nodes.size()) times.push_back(run.nodes[s].milliseconds);
    }
    ran.steps.nodes[s].milliseconds = MedianOf(times);
  }
  return ran;
}

StatusOr<std::vector<double>> PlanBench::TimeSideBySide(const std::vector<Placement>& placements,
                                                        int rounds) const {
  std::vector<std::unique_ptr<Executable>> executables;
  for (const Placement& placement : placements) {
    COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, Compile(placement));
    executables.push_back(std::move(exe));
  }
  const size_t n = executables.size();
  std::vector<std::vector<double>> times(n);
  for (int round = 0; round < rounds; ++round) {
    for (size_t k = 0; k < n; ++k) {
      const size_t p = (k + static_cast<size_t>(round)) % n;
      COLLAGE_ASSIGN_OR_RETURN(double ms, RunSettled(*executables[p]));
      times[p].push_back(ms);
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& t : times) medians.push_back(MedianOf(std::move(t)));
  return medians;
}

}  // namespace collage
