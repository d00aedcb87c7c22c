// The op-level optimizer on real backends: repeated blocks are measured once, a second run
// measures nothing, candidates that are invalid never make it into a placement, and a group
// that is the whole model is timed as it is served, and the op-level plan is calibrated
// against runs of the search's plans.
#include "search/optimizer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <utility>
#include <vector>

#include "../cost/broken_backends.h"
#include "collage/available_backends.h"
#include "optimize_test_util.h"

namespace collage {

Status RegisterNativeBackend(BackendRegistry& registry);

namespace {

using testing::QuickOptimize;
using testing::RepeatedBlocks;
using testing::TempDir;

TEST(OptimizerTest, RepeatedBlocksAreMeasuredOnceAndASecondRunMeasuresNothing) {
  TempDir dir;
  Graph graph = RepeatedBlocks(4);
  OptimizeOptions options = QuickOptimize(dir.file("costs.sqlite"));
  for (const char* name : {"onednn", "xnnpack", "eigen"}) {
    if (GlobalBackendRegistry().Find(name) != nullptr) options.backends.push_back(name);
  }
  if (options.backends.empty()) GTEST_SKIP() << "none of onednn, xnnpack and eigen is built";
  options.final_rounds = 0;        // the search's own plan, so that both runs must agree:
  options.calibration_rounds = 0;  // priced by the database's costs alone
  int progress_calls = 0;
  options.on_progress = [&](const OptimizeProgress& p) {
    ++progress_calls;
    EXPECT_LE(p.done, p.total);
  };
  auto first = OptimizePlacement(graph, GlobalBackendRegistry(), 1, options);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const OptimizeReport& cold = first->report;
  EXPECT_GT(progress_calls, 0);
  // Four blocks offer four copies of each candidate; each distinct one is measured once.
  EXPECT_LT(cold.distinct_candidates * 2, cold.candidates);
  EXPECT_EQ(cold.measured,
            cold.distinct_candidates + cold.conversions + cold.library_switches + cold.steps_priced);
  EXPECT_GE(cold.steps_priced, 1);
  // Every ordered pair of the four backends (native is always in).
  EXPECT_EQ(cold.library_switches, 12);
  EXPECT_EQ(cold.cache_hits, 0);

  auto second = OptimizePlacement(graph, GlobalBackendRegistry(), 1, options);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->report.measured, 0);
  EXPECT_EQ(second->report.cache_hits, cold.measured);
  ASSERT_EQ(second->placement.groups.size(), first->placement.groups.size());
  for (size_t g = 0; g < first->placement.groups.size(); ++g) {
    EXPECT_EQ(second->placement.groups[g].backend, first->placement.groups[g].backend);
    EXPECT_EQ(second->placement.groups[g].nodes, first->placement.groups[g].nodes);
  }
  // Another thread count is another key: measured again.
  auto two_threads = OptimizePlacement(graph, GlobalBackendRegistry(), 2, options);
  ASSERT_TRUE(two_threads.ok());
  EXPECT_GT(two_threads->report.measured, 0);
}

TEST(OptimizerTest, InvalidCandidatesAreRecordedAndNeverChosen) {
  TempDir dir;
  BackendRegistry registry;
  ASSERT_TRUE(RegisterNativeBackend(registry).ok());
  // Fast (it writes zeros) but wrong: the cheapest offer for every Relu, and never chosen.
  ASSERT_TRUE(registry.Register(std::make_unique<testing::BrokenBackend>("wrong", testing::Breakage::kWrongAnswer)).ok());
  ASSERT_TRUE(registry.Register(std::make_unique<testing::BrokenBackend>("uncompilable", testing::Breakage::kCompileFails)).ok());
  Graph graph = RepeatedBlocks(2);
  auto result = OptimizePlacement(graph, registry, 1, QuickOptimize(dir.file("costs.sqlite")));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->report.invalid, 2);  // one distinct Relu per broken backend
  for (const PlacedGroup& group : result->placement.groups) EXPECT_EQ(group.backend, "native");
  bool wrong_named = false, uncompilable_named = false;
  for (const std::string& line : result->report.invalid_examples) {
    wrong_named = wrong_named || line.find("wrong relu: output 0 differs from the reference") != std::string::npos;
    uncompilable_named = uncompilable_named || line.find("uncompilable relu: does not compile") != std::string::npos;
  }
  EXPECT_TRUE(wrong_named && uncompilable_named) << ::testing::PrintToString(result->report.invalid_examples);
  // The rivals of each Relu group say why the broken backends lost.
  bool explained = false;
  for (const GroupReport& group : result->report.groups) {
    for (const GroupAlternative& rival : group.alternatives) {
      explained = explained || (rival.backend == "wrong" && !rival.valid && !rival.reason.empty());
    }
  }
  EXPECT_TRUE(explained);
}

TEST(OptimizerTest, AnUnknownBackendIsNamed) {
  TempDir dir;
  Graph graph = RepeatedBlocks(1);
  OptimizeOptions options = QuickOptimize(dir.file("costs.sqlite"));
  options.backends = {"native", "tensorrt"};
  auto result = OptimizePlacement(graph, GlobalBackendRegistry(), 1, options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("no backend named 'tensorrt'"), std::string::npos);
}

// Every native candidate's (signature, measurement method) in the cost database at `path`.
std::vector<std::pair<std::string, std::string>> NativeRecords(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> rows;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return rows;
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT signature, method FROM costs WHERE backend = 'native'", -1,
                         &stmt, nullptr) == SQLITE_OK) {
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      rows.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)),
                        reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)));
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

TEST(OptimizerTest, AGroupThatIsTheWholeModelIsTimedWarmAndTheOthersWithTheCachesOfARun) {
  TempDir dir;
  GraphBuilder b("relu_tanh", 17, 3);
  ValueId x = b.Input("x", DType::kFloat32, {1, 64, 32, 32});
  b.Output(b.Node("Tanh", {b.Node("Relu", {x})}), "y");
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  OptimizeOptions options = QuickOptimize(dir.file("costs.sqlite"));
  options.caches = CacheState::kRun;
  options.backends = {"native"};
  options.final_rounds = 0;
  auto result = OptimizePlacement(*graph, GlobalBackendRegistry(), 1, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();

  int whole = 0, part = 0;
  for (const auto& [signature, method] : NativeRecords(dir.file("costs.sqlite"))) {
    const bool has_relu = signature.find("Relu") != std::string::npos;
    const bool has_tanh = signature.find("Tanh") != std::string::npos;
    if (has_relu && has_tanh) {
      ++whole;
      EXPECT_EQ(method.rfind("warm", 0), 0u) << signature << ": " << method;
    } else if (has_relu || has_tanh) {
      ++part;
      EXPECT_EQ(method.rfind("scrub:", 0), 0u) << signature << ": " << method;
    }
  }
  EXPECT_GE(whole, 1);  // native's elementwise chain takes both nodes
  EXPECT_GE(part, 2);   // and each alone
}

TEST(OptimizerTest, TheOpLevelPlanIsOneOfThePlansRunToCalibrateTheCosts) {
  TempDir dir;
  Graph graph = RepeatedBlocks(3);
  OptimizeOptions options = QuickOptimize(dir.file("costs.sqlite"));
  for (const char* name : {"onednn", "xnnpack"}) {
    if (GlobalBackendRegistry().Find(name) != nullptr) options.backends.push_back(name);
  }
  options.calibration_rounds = 3;
  auto result = OptimizePlacement(graph, GlobalBackendRegistry(), 1, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  const OptimizeReport& report = result->report;
  ASSERT_GE(report.calibration.size(), 1u);
  EXPECT_EQ(report.calibration[0].origin, PlacementSource::OpLevel());
  EXPECT_GE(report.calibration[0].groups_repriced, 1);
  int search_plans = 0;
  bool estimate_is_a_plans = false;
  for (const CalibrationReport& round : report.calibration) {
    search_plans += round.origin.is_search() ? 1 : 0;
    EXPECT_GT(round.in_run_ms, 0);
    EXPECT_GT(round.estimated_ms, 0);
    estimate_is_a_plans = estimate_is_a_plans || round.estimated_ms == report.estimated_ms;
  }
  // The op-level plan is one of the plans run, with the estimate it had before it ran.
  EXPECT_TRUE(estimate_is_a_plans) << report.estimated_ms;
  ASSERT_FALSE(report.finalists.empty());
  EXPECT_EQ(report.finalists[0].source, PlacementSource::OpLevel());
  EXPECT_DOUBLE_EQ(report.finalists[0].estimated_ms, report.estimated_ms);
  EXPECT_LE(search_plans, 3);
  if (search_plans < 3) {
    EXPECT_EQ(report.calibration_stopped, "");
  }

  options.calibration_rounds = 0;
  auto uncalibrated = OptimizePlacement(graph, GlobalBackendRegistry(), 1, options);
  ASSERT_TRUE(uncalibrated.ok()) << uncalibrated.status().ToString();
  EXPECT_TRUE(uncalibrated->report.calibration.empty());
  // Priced by the measurements alone, from the database the first optimize filled.
  EXPECT_DOUBLE_EQ(uncalibrated->report.estimated_ms, report.calibration[0].estimated_ms);
}

}  // namespace
}  // namespace collage
