// Measurement in the worker process: a candidate whose library crashes, aborts or hangs is
// recorded invalid with what happened, the next one is measured by a new worker, and an
// optimize over such a library still finds its placement. A worker that cannot measure
// what the parent needs (a backend it lacks, another version) is refused.
#include "cost/worker_measurer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../search/optimize_test_util.h"
#include "../util/sanitizer_build.h"
#include "broken_backends.h"
#include "collage/available_backends.h"
#include "cost/group_signature.h"
#include "cost/workers_choice.h"
#include "quick_settings.h"
#include "search/optimizer.h"
#include "test_paths.h"

namespace collage {

Status RegisterNativeBackend(BackendRegistry& registry);

namespace {

using testing::QuickOptimize;
using testing::RepeatedBlocks;
using testing::TempDir;

// Under AddressSanitizer a segfault in the worker is the sanitizer's: it prints its report
// and aborts, so the worker dies of SIGABRT with that report as its stderr.
using testing::kAddressSanitizer;

// The record a worker that died of `signal` leaves (its stderr, if any, appended).
::testing::AssertionResult DiedOf(const std::string& reason, std::string signal) {
  if (signal == "SIGSEGV" && kAddressSanitizer) signal = "SIGABRT";
  const std::string expected = "the measurement worker died of " + signal + " while measuring this candidate";
  if (reason.rfind(expected, 0) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "reason: " << reason << "\nexpected it to start with: " << expected;
}

std::string PluginPath(const std::string& name) {
  return std::string(COLLAGE_TEST_PLUGIN_DIR) + "/" + name + "/lib" + name + "_plugin.so";
}

std::string NativeVersion() { return GlobalBackendRegistry().Find("native")->version(); }

TEST(WorkerMeasurerTest, AWorkerLackingABackendOrWithAnotherVersionIsRefused) {
  WorkerOptions options;
  options.executable = COLLAGE_MEASURE_WORKER_PATH;
  options.backends = {{"native", NativeVersion()}, {"no_such_backend", "1"}};
  auto lacking = WorkerMeasurer::Start(options);
  ASSERT_FALSE(lacking.ok());
  EXPECT_NE(lacking.status().message().find("has no backend 'no_such_backend'"), std::string::npos)
      << lacking.status().message();
  options.backends = {{"native", "native 0 (another build)"}};
  auto other_version = WorkerMeasurer::Start(options);
  ASSERT_FALSE(other_version.ok());
  EXPECT_NE(other_version.status().message().find("has backend 'native' version"),
            std::string::npos)
      << other_version.status().message();
  options.backends = {{"native", NativeVersion()}};
  EXPECT_TRUE(WorkerMeasurer::Start(options).ok());

  // An optimize falls back to measuring in this process, and says so: here a backend
  // registered by code, which no worker can load.
  BackendRegistry registry;
  ASSERT_TRUE(RegisterNativeBackend(registry).ok());
  ASSERT_TRUE(registry
                  .Register(std::make_unique<testing::BrokenBackend>(
                      "wrong", testing::Breakage::kWrongAnswer))
                  .ok());
  std::vector<std::string> warnings;
  auto chosen = ChooseMeasurer(COLLAGE_MEASURE_WORKER_PATH, 60, registry, {"wrong"}, &warnings);
  ASSERT_TRUE(chosen.ok());
  EXPECT_NE(dynamic_cast<InProcessMeasurer*>(chosen->get()), nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("has no backend 'wrong'"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("measured in this process"), std::string::npos) << warnings[0];

  warnings.clear();
  chosen = ChooseMeasurer("/nonexistent/collage_measure_worker", 60, registry, {}, &warnings);
  ASSERT_TRUE(chosen.ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("no measurement worker found"), std::string::npos) << warnings[0];
  warnings.clear();
  WorkersChoice in_process;
  in_process.workers = MeasureWorkers::InProcess();
  chosen = ChooseWorkers(in_process, registry, {}, &warnings);
  ASSERT_TRUE(chosen.ok());
  EXPECT_NE(dynamic_cast<InProcessMeasurer*>(chosen->get()), nullptr);
  EXPECT_TRUE(warnings.empty()) << "asked for: no warning";
}

TEST(WorkerMeasurerTest, ATimeLimitBeyondADayOrNotAboveZeroIsRefused) {
  BackendRegistry registry;
  ASSERT_TRUE(RegisterNativeBackend(registry).ok());
  std::vector<std::string> warnings;
  // 1e10 s would overflow the deadline's clock (and then measure in this process).
  for (double limit : {1e10, 86401.0, 0.0, -1.0, std::nan("")}) {
    SCOPED_TRACE(limit);
    auto chosen = ChooseMeasurer(COLLAGE_MEASURE_WORKER_PATH, limit, registry, {}, &warnings);
    ASSERT_FALSE(chosen.ok());
    EXPECT_NE(chosen.status().message().find("at most 86400 s"), std::string::npos)
        << chosen.status().message();
  }
  EXPECT_TRUE(warnings.empty());
  auto day = ChooseMeasurer(COLLAGE_MEASURE_WORKER_PATH, 86400, registry, {}, &warnings);
  ASSERT_TRUE(day.ok()) << day.status().ToString();
  EXPECT_EQ(dynamic_cast<InProcessMeasurer*>(day->get()), nullptr) << "measured in a worker";
}

TEST(WorkerMeasurerTest, ACrashCostsOneCandidateAndANewWorkerMeasuresTheNext) {
  WorkerOptions options;
  options.executable = COLLAGE_MEASURE_WORKER_PATH;
  options.plugin_paths = {PluginPath("segfaulting")};
  options.backends = {{"native", NativeVersion()}, {"segfaulting", "misbehaving 1"}};
  auto measurer = WorkerMeasurer::Start(options);
  ASSERT_TRUE(measurer.ok()) << measurer.status().ToString();
  Graph graph = RepeatedBlocks(1);
  const SubGraph relu(graph.num_nodes(), {1});
  ASSERT_EQ(graph.node(1).op_type, "Relu");
  const pid_t first = (*measurer)->worker_pid();
  auto crashed = (*measurer)->Candidate(graph, relu, "segfaulting", "relu", Precision::kFloat32, 1,
                                        1e-4, testing::QuickMeasureSettings());
  ASSERT_TRUE(crashed.ok()) << crashed.status().ToString();
  EXPECT_FALSE(crashed->valid);
  EXPECT_TRUE(DiedOf(crashed->reason, "SIGSEGV"));
  EXPECT_EQ((*measurer)->worker_pid(), -1);

  auto next = (*measurer)->Candidate(graph, relu, "native", "op", Precision::kFloat32, 1, 1e-4,
                                     testing::QuickMeasureSettings());
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_TRUE(next->valid) << next->reason;
  EXPECT_EQ((*measurer)->workers_started(), 2);
  EXPECT_NE((*measurer)->worker_pid(), first);
  auto conversion =
      (*measurer)->Conversion(graph.value(graph.inputs()[0]).type, Layout::Plain(),
                              Layout::ChannelsLast(), 1, testing::QuickMeasureSettings());
  ASSERT_TRUE(conversion.ok());
  EXPECT_TRUE(conversion->valid) << conversion->reason;
  EXPECT_EQ((*measurer)->workers_started(), 2);
}

struct Misbehaviour {
  std::string backend;
  std::string signal;  // the worker's death, or "" for a hang
  std::string reason;  // for a hang: what its candidate's record says
};

// The test's name in listings, instead of the struct's bytes.
void PrintTo(const Misbehaviour& m, std::ostream* os) { *os << m.backend; }

class OptimizeThroughWorkerTest : public ::testing::TestWithParam<Misbehaviour> {};

TEST_P(OptimizeThroughWorkerTest, SucceedsWithTheBrokenCandidateRecordedInvalid) {
  TempDir dir;
  BackendRegistry registry;
  ASSERT_TRUE(RegisterNativeBackend(registry).ok());
  ASSERT_TRUE(registry.LoadPlugin(PluginPath(GetParam().backend)).ok());
  OptimizeOptions options = QuickOptimize(dir.file("costs.sqlite"));
  options.measure_worker = COLLAGE_MEASURE_WORKER_PATH;
  options.measure_timeout_seconds = 2;  // the hang's cost
  options.final_rounds = 0;        // the end-to-end decision runs in this process: not with these,
  options.calibration_rounds = 0;  // nor do the plans run to calibrate the costs
  auto result = OptimizePlacement(RepeatedBlocks(2), registry, 1, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const OptimizeReport& report = result->report;
  EXPECT_TRUE(report.warnings.empty()) << ::testing::PrintToString(report.warnings);
  EXPECT_EQ(report.invalid, 1);  // the one distinct Relu; every other candidate measured after it
  EXPECT_EQ(report.measured, report.distinct_candidates + report.conversions + report.steps_priced);
  ASSERT_EQ(report.invalid_examples.size(), 1u);
  const std::string prefix = GetParam().backend + " relu: ";
  const std::string& example = report.invalid_examples[0];
  ASSERT_EQ(example.rfind(prefix, 0), 0u) << example;
  if (GetParam().signal.empty()) {
    EXPECT_EQ(example.substr(prefix.size()), GetParam().reason);
  } else {
    EXPECT_TRUE(DiedOf(example.substr(prefix.size()), GetParam().signal));
  }
  for (const PlacedGroup& group : result->placement.groups) EXPECT_EQ(group.backend, "native");
}

INSTANTIATE_TEST_SUITE_P(
    Plugins, OptimizeThroughWorkerTest,
    ::testing::Values(
        Misbehaviour{"segfaulting", "SIGSEGV", ""}, Misbehaviour{"aborting", "SIGABRT", ""},
        Misbehaviour{"hanging", "", "timed out after 2 s (the measurement worker was killed)"}),
    [](const ::testing::TestParamInfo<Misbehaviour>& info) { return info.param.backend; });

}  // namespace
}  // namespace collage

namespace collage {
namespace {

TEST(WorkersChoiceTest, TheWordsForWhoMeasuresAreReadOnceAndWrittenBack) {
  for (const std::string name : {"local", "in-process", "ray", "ray://head:10001"}) {
    StatusOr<MeasureWorkers> workers = MeasureWorkersNamed(name);
    ASSERT_TRUE(workers.ok()) << name;
    EXPECT_EQ(MeasureWorkersName(*workers), name);
  }
  EXPECT_EQ(MeasureWorkersNamed("")->kind, MeasureWorkers::Kind::kLocalWorker);
  EXPECT_EQ(MeasureWorkersNamed("ray://head:10001")->ray_address, "ray://head:10001");
  for (const std::string wrong : {"ray://", "cluster", "Ray", "in process"}) {
    StatusOr<MeasureWorkers> workers = MeasureWorkersNamed(wrong);
    ASSERT_FALSE(workers.ok()) << wrong;
    EXPECT_NE(workers.status().message().find("expected local"), std::string::npos);
  }
}

TEST(WorkersChoiceTest, TheEnvironmentsWorkerSettingLeavesAnExplicitChoice) {
  OptimizeOptions options;
  UseMeasureWorkerSetting("in-process", &options);
  EXPECT_EQ(options.workers, MeasureWorkers::InProcess());
  EXPECT_TRUE(options.measure_worker.empty());

  OptimizeOptions path;
  UseMeasureWorkerSetting("/opt/collage/bin/collage_measure_worker", &path);
  EXPECT_EQ(path.workers.kind, MeasureWorkers::Kind::kLocalWorker);
  EXPECT_EQ(path.measure_worker, "/opt/collage/bin/collage_measure_worker");

  OptimizeOptions chosen;
  chosen.workers = *MeasureWorkersNamed("ray");
  chosen.measure_worker = "/mine";
  UseMeasureWorkerSetting("in-process", &chosen);
  UseMeasureWorkerSetting("/theirs", &chosen);
  EXPECT_EQ(MeasureWorkersName(chosen.workers), "ray");
  EXPECT_EQ(chosen.measure_worker, "/mine");
  UseMeasureWorkerSetting("", &chosen);
  EXPECT_EQ(chosen.measure_worker, "/mine");
}

}  // namespace
}  // namespace collage
