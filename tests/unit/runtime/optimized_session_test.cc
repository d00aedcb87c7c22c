// Session::Optimize, SavePlan and LoadPlan as a user of the C++ API meets them: the optimized
// session gives the reference's outputs, a saved plan runs the same placement in a new
// session without measuring, and concurrent runs on an optimized session agree.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "../search/optimize_test_util.h"
#include "collage/session.h"
#include "session/session_access.h"
#include "collage/normalized_error.h"
#include "collage/random_tensor.h"

namespace collage {
namespace {

using testing::QuickOptimize;
using testing::RepeatedBlocks;
using testing::TempDir;

SessionOptions OneThread(const std::string& plan_path = "") {
  SessionOptions options;
  options.num_threads = 1;
  options.plan_path = plan_path;
  return options;
}

std::map<std::string, Tensor> Inputs(const Session& session) {
  std::mt19937 rng(11);
  std::map<std::string, Tensor> inputs;
  for (const TensorInfo& info : session.inputs()) inputs[info.name] = RandomTensor(info.dtype, info.shape, rng);
  return inputs;
}

TEST(OptimizedSessionTest, OptimizeSaveAndLoadRunTheSamePlacement) {
  TempDir dir;
  auto reference = SessionAccess::FromGraph(RepeatedBlocks(3), OneThread());
  ASSERT_TRUE(reference.ok());
  auto session = SessionAccess::FromGraph(RepeatedBlocks(3), OneThread());
  ASSERT_TRUE(session.ok());
  EXPECT_EQ((*session)->placement_source(), PlacementSource::SingleBackend("native"));
  OptimizeReport report;
  ASSERT_TRUE((*session)->Optimize(QuickOptimize(dir.file("costs.sqlite")), &report).ok());
  // The plan is the finalist the end-to-end decision kept.
  EXPECT_EQ((*session)->placement_source(), report.kept_finalist.value_or(PlacementSource{}));
  EXPECT_GT(report.groups.size(), 0u);
  EXPECT_GT(report.estimated_ms, 0);

  auto inputs = Inputs(**session);
  auto expected = (*reference)->Run(inputs);
  auto optimized = (*session)->Run(inputs);
  ASSERT_TRUE(expected.ok() && optimized.ok());
  EXPECT_LE(NormalizedError(optimized->at("y"), expected->at("y")), 1e-3);

  (*session)->RecordMeasuredLatency(0.5);
  ASSERT_TRUE((*session)->SavePlan(dir.file("plan.json")).ok());
  auto loaded = SessionAccess::FromGraph(RepeatedBlocks(3), OneThread(dir.file("plan.json")));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE((*loaded)->warnings().empty()) << (*loaded)->warnings().front();
  EXPECT_EQ((*loaded)->DescribePlacement(), (*session)->DescribePlacement());
  EXPECT_EQ((*loaded)->placement_source(), report.kept_finalist.value_or(PlacementSource{}));
  auto again = (*loaded)->Run(inputs);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(NormalizedError(again->at("y"), optimized->at("y")), 0.0);
}

// The report comes with the kept placement's steps in a run, whichever placement was kept:
// the op-level plan's from its calibration run, any other profiled once installed.
TEST(OptimizedSessionTest, TheReportHoldsTheKeptPlacementsStepsInARun) {
  TempDir dir;
  for (int calibration_rounds : {2, 0}) {
    for (const std::vector<std::string>& backends :
         {std::vector<std::string>{}, std::vector<std::string>{"native"}}) {
      auto session = SessionAccess::FromGraph(RepeatedBlocks(3), OneThread());
      ASSERT_TRUE(session.ok());
      OptimizeOptions options = QuickOptimize(dir.file("costs.sqlite"));
      options.calibration_rounds = calibration_rounds;
      options.backends = backends;
      OptimizeReport report;
      ASSERT_TRUE((*session)->Optimize(options, &report).ok());
      const std::string context = "calibration " + std::to_string(calibration_rounds) + ", kept " +
                                  PlacementSourceName(*report.kept_finalist);
      ASSERT_FALSE(report.in_run.nodes.empty()) << context;
      int group_steps = 0;
      for (const NodeTiming& step : report.in_run.nodes) group_steps += IsConversion(step) ? 0 : 1;
      EXPECT_EQ(group_steps, static_cast<int>(report.groups.size())) << context;
      for (const GroupReport& group : report.groups) EXPECT_GT(group.in_run_ms, 0) << context;
    }
  }
}

TEST(OptimizedSessionTest, APlanIsRefusedForAnotherModel) {
  TempDir dir;
  auto session = SessionAccess::FromGraph(RepeatedBlocks(2, 0), OneThread());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->SavePlan(dir.file("plan.json")).ok());
  auto other = SessionAccess::FromGraph(RepeatedBlocks(2, 5), OneThread(dir.file("plan.json")));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("another model"), std::string::npos) << other.status().message();
  EXPECT_NE(other.status().message().find("plan.json"), std::string::npos) << other.status().message();
}

TEST(OptimizedSessionTest, ConcurrentRunsOnAnOptimizedSessionAgree) {
  TempDir dir;
  auto session = SessionAccess::FromGraph(RepeatedBlocks(4), OneThread());
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE((*session)->Optimize(QuickOptimize(dir.file("costs.sqlite"))).ok());
  auto inputs = Inputs(**session);
  auto first = (*session)->Run(inputs);
  ASSERT_TRUE(first.ok());
  constexpr int kThreads = 4;
  constexpr int kRuns = 10;
  std::vector<int> mismatches(kThreads, 0), failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        auto out = (*session)->Run(inputs);
        if (!out.ok()) {
          ++failures[static_cast<size_t>(t)];
        } else if (NormalizedError(out->at("y"), first->at("y")) != 0.0) {
          ++mismatches[static_cast<size_t>(t)];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[static_cast<size_t>(t)], 0);
    EXPECT_EQ(mismatches[static_cast<size_t>(t)], 0);
  }
}

}  // namespace
}  // namespace collage
