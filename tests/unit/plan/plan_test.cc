// Plans as files users ship: they round-trip, they refuse to run another model or on a
// missing backend, they warn when the machine or libraries differ, and a damaged file is a
// clear error.
#include "plan/plan.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "../search/optimize_test_util.h"
#include "../util/sanitizer_build.h"
#include "collage/available_backends.h"
#include "collage/device_fingerprint.h"

namespace collage {
namespace {

using testing::RepeatedBlocks;
using testing::TempDir;

// The plans here are oneDNN's (a library, so that the plan records its version).
class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (GlobalBackendRegistry().Find("onednn") == nullptr) GTEST_SKIP() << "onednn is not built";
  }
};

Plan NativePlan(const Graph& graph) {
  auto placement =
      PlaceOnSingleBackend(graph, *GlobalBackendRegistry().Find("onednn"), GlobalBackendRegistry());
  EXPECT_TRUE(placement.ok());
  Plan plan = MakePlan(graph, *placement, GlobalBackendRegistry(),
                       PlacementSource::SingleBackend("onednn"), 2);
  plan.estimated_ms = 1.25;
  plan.measured_ms = 1.5;
  for (PlanGroup& g : plan.groups) g.cost_ms = 0.125;
  return plan;
}

TEST_F(PlanTest, RoundTripsThroughJson) {
  Graph graph = RepeatedBlocks(2);
  Plan plan = NativePlan(graph);
  auto back = PlanFromJson(PlanToJson(plan), "plan.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->model_hash, plan.model_hash);
  EXPECT_EQ(back->device, DeviceFingerprint());
  EXPECT_EQ(back->search, PlacementSource::SingleBackend("onednn"));
  EXPECT_EQ(back->threads, 2);
  EXPECT_EQ(back->backend_versions, plan.backend_versions);
  EXPECT_DOUBLE_EQ(back->measured_ms, 1.5);
  ASSERT_EQ(back->groups.size(), plan.groups.size());
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    EXPECT_EQ(back->groups[g].backend, plan.groups[g].backend);
    EXPECT_EQ(back->groups[g].rule, plan.groups[g].rule);
    EXPECT_EQ(back->groups[g].nodes, plan.groups[g].nodes);
    EXPECT_EQ(back->groups[g].node_names, plan.groups[g].node_names);
  }
  std::vector<std::string> warnings;
  auto placement = PlacementFromPlan(*back, graph, GlobalBackendRegistry(), 2, &warnings);
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  EXPECT_TRUE(warnings.empty());
}

TEST_F(PlanTest, TheModelHashSeesWeightsAndStructureButNotNames) {
  EXPECT_EQ(ModelHash(RepeatedBlocks(2, 0)), ModelHash(RepeatedBlocks(2, 0)));
  EXPECT_NE(ModelHash(RepeatedBlocks(2, 0)), ModelHash(RepeatedBlocks(2, 1)));  // other weights
  EXPECT_NE(ModelHash(RepeatedBlocks(2, 0)), ModelHash(RepeatedBlocks(3, 0)));
  Graph renamed = RepeatedBlocks(2, 0);
  renamed.mutable_node(0).name = "renamed";
  EXPECT_EQ(ModelHash(renamed), ModelHash(RepeatedBlocks(2, 0)));
}

TEST_F(PlanTest, APlanForAnotherModelIsRefused) {
  Plan plan = NativePlan(RepeatedBlocks(2, 0));
  auto placement =
      PlacementFromPlan(plan, RepeatedBlocks(2, 7), GlobalBackendRegistry(), 2, nullptr);
  ASSERT_FALSE(placement.ok());
  EXPECT_NE(placement.status().message().find("another model"), std::string::npos)
      << placement.status().message();
}

TEST_F(PlanTest, AMissingBackendIsRefusedByName) {
  Graph graph = RepeatedBlocks(2);
  Plan plan = NativePlan(graph);
  plan.groups[0].backend = "vendor_npu";
  auto placement = PlacementFromPlan(plan, graph, GlobalBackendRegistry(), 2, nullptr);
  ASSERT_FALSE(placement.ok());
  EXPECT_NE(placement.status().message().find("'vendor_npu', which is not registered"),
            std::string::npos)
      << placement.status().message();
}

TEST_F(PlanTest, AnotherMachineOrLibraryOrThreadCountWarns) {
  Graph graph = RepeatedBlocks(2);
  Plan plan = NativePlan(graph);
  plan.device = "x86_64 | another cpu | avx512f | 64 cpus";
  plan.backend_versions["onednn"] = "oneDNN 1.0";
  std::vector<std::string> warnings;
  auto placement = PlacementFromPlan(plan, graph, GlobalBackendRegistry(), 1, &warnings);
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  ASSERT_EQ(warnings.size(), 3u) << ::testing::PrintToString(warnings);
  EXPECT_NE(warnings[0].find("another device"), std::string::npos);
  EXPECT_NE(warnings[1].find("oneDNN 1.0"), std::string::npos);
  EXPECT_NE(warnings[2].find("2 threads"), std::string::npos);
}

TEST_F(PlanTest, DamagedPlansAreClearErrors) {
  Graph graph = RepeatedBlocks(2);
  const std::string good = PlanToJson(NativePlan(graph));
  auto refused = [&](const std::string& text, const std::string& expected) {
    auto plan = PlanFromJson(text, "p.json");
    if (plan.ok()) {
      auto placement = PlacementFromPlan(*plan, graph, GlobalBackendRegistry(), 2, nullptr);
      ASSERT_FALSE(placement.ok()) << "accepted: " << text.substr(0, 80);
      EXPECT_NE(placement.status().message().find(expected), std::string::npos)
          << placement.status().message();
      return;
    }
    EXPECT_NE(plan.status().message().find(expected), std::string::npos) << plan.status().message();
  };
  refused(good.substr(0, good.size() / 2), "not valid JSON");
  refused("", "not valid JSON");
  refused("[1, 2, 3]", "not a collage plan");
  refused("{\"format\": \"something-else\"}", "not a collage plan");
  auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = nlohmann::json::parse(good);
    edit(j);
    return j.dump();
  };
  refused(edited([](auto& j) { j["version"] = 7; }), "format version 7");
  refused(edited([](auto& j) { j["threads"] = "two"; }), "field 'threads' has the wrong type");
  // Integers that do not fit are refused, not truncated (4294967297 would read as version 1).
  refused(edited([](auto& j) { j["version"] = 4294967297ull; }), "field 'version' is out of range");
  refused(edited([](auto& j) { j["threads"] = -4294967294ll; }), "field 'threads' is out of range");
  refused(edited([](auto& j) { j.erase("groups"); }), "field 'groups' must be an array");
  refused(edited([](auto& j) { j["groups"][0].erase("backend"); }),
          "groups[0]: missing field 'backend'");
  refused(edited([](auto& j) { j["groups"][0]["nodes"] = {999}; }), "names node 999");
  refused(edited([](auto& j) { j["groups"][0]["nodes"] = {-3}; }), "out of range");
  // Shown as written, not wrapped around to -1.
  refused(edited([](auto& j) { j["groups"][0]["nodes"] = {18446744073709551615ull}; }),
          "node 18446744073709551615 is out of range");
  refused(edited([](auto& j) { j["groups"][0]["nodes"] = {"zero"}; }), "non-integer");
  refused(edited([](auto& j) { j["groups"][0]["nodes"].push_back(j["groups"][0]["nodes"][0]); }),
          "listed twice");
  refused(edited([](auto& j) { j["groups"][1]["nodes"] = j["groups"][0]["nodes"]; }),
          "overlaps an earlier group");
  refused(edited([](auto& j) { j["groups"].erase(j["groups"].size() - 1); }), "is in no group");
  refused(edited([](auto& j) { j["groups"][0]["precision"] = "fp8\x01"; }),
          "unknown precision 'fp8\\x01'");
  refused(edited([](auto& j) { j["groups"][0]["precision"] = 16; }), "wrong type");
  refused(edited([](auto& j) {
            j["tolerance"] = -1;
            j["checked_error"] = 0;
          }),
          "'tolerance' must be above 0");
  refused(edited([](auto& j) { j["tolerance"] = 0.01; }), "missing field 'checked_error'");
  refused(edited([](auto& j) { j["search"] = "three-level"; }),
          "field 'search' is 'three-level', not what chose a placement");
  refused(edited([](auto& j) { j["search"] = "single-backend:"; }), "field 'search'");
  refused(edited([](auto& j) {
            j["kept_finalist"] = "op-level";
            j["runner_up"] = "whole-graph:openvino fp8";
            j["runner_up_ratio"] = 1.1;
          }),
          "field 'runner_up' is 'whole-graph:openvino fp8'");
}

// The end-to-end decision's record: the kept finalist, and the runner-up where another ran.
TEST_F(PlanTest, TheDecisionRoundTripsWithOrWithoutARunnerUp) {
  Graph graph = RepeatedBlocks(2);
  Plan plan = NativePlan(graph);
  plan.kept_finalist = PlacementSource::SingleBackend("onednn");
  plan.runner_up = PlacementSource::OpLevel();
  plan.runner_up_ratio = 1.25;
  auto back = PlanFromJson(PlanToJson(plan), "plan.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->kept_finalist, PlacementSource::SingleBackend("onednn"));
  EXPECT_EQ(back->runner_up, PlacementSource::OpLevel());
  EXPECT_DOUBLE_EQ(back->runner_up_ratio, 1.25);
  plan.runner_up.reset();  // the only finalist that ran: written as ""
  plan.runner_up_ratio = 0;
  const std::string alone = PlanToJson(plan);
  EXPECT_NE(alone.find("\"runner_up\": \"\""), std::string::npos) << alone;
  back = PlanFromJson(alone, "plan.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->kept_finalist, PlacementSource::SingleBackend("onednn"));
  EXPECT_FALSE(back->runner_up.has_value());
  // Without a decision neither is written.
  back = PlanFromJson(PlanToJson(NativePlan(graph)), "plan.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_FALSE(back->kept_finalist.has_value());
}

TEST_F(PlanTest, EachGroupsPrecisionAndTheAccuracyBudgetRoundTrip) {
  Graph graph = RepeatedBlocks(2);
  Plan plan = NativePlan(graph);
  plan.groups[0].precision = Precision::kBfloat16;
  plan.tolerance = 0.01;
  plan.checked_error = 0.004;
  const std::string text = PlanToJson(plan);
  EXPECT_NE(text.find("\"precision\": \"bf16\""), std::string::npos) << text;
  auto back = PlanFromJson(text, "plan.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->groups[0].precision, Precision::kBfloat16);
  for (size_t g = 1; g < back->groups.size(); ++g) {
    EXPECT_EQ(back->groups[g].precision, Precision::kFloat32) << g;
  }
  EXPECT_DOUBLE_EQ(back->tolerance, 0.01);
  EXPECT_DOUBLE_EQ(back->checked_error, 0.004);
  // A float32 plan writes neither, and reads back as float32 without a budget.
  const std::string float32 = PlanToJson(NativePlan(graph));
  EXPECT_EQ(float32.find("precision"), std::string::npos);
  EXPECT_EQ(float32.find("tolerance"), std::string::npos);
  // The placement carries each group's precision to the compile.
  auto placement = PlacementFromPlan(*back, graph, GlobalBackendRegistry(), 2, nullptr);
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  EXPECT_EQ(placement->groups[0].precision, Precision::kBfloat16);
}

TEST_F(PlanTest, APlanListingAMillionNodesIsRefusedWithinASecond) {
  TempDir dir;
  Graph graph = RepeatedBlocks(2);
  nlohmann::json j = nlohmann::json::parse(PlanToJson(NativePlan(graph)));
  nlohmann::json ids = nlohmann::json::array();
  for (int id = 0; id < 1'000'000; ++id) ids.push_back(id);
  j["groups"][0]["nodes"] = std::move(ids);
  { std::ofstream(dir.file("huge.json")) << j.dump(); }
  const auto start = std::chrono::steady_clock::now();
  auto plan = ReadPlanFile(dir.file("huge.json"));
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();  // well-formed; wrong for this model
  auto placement = PlacementFromPlan(*plan, graph, GlobalBackendRegistry(), 2, nullptr);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(placement.ok());
  EXPECT_NE(placement.status().message().find("names node"), std::string::npos)
      << placement.status().message();
  EXPECT_LT(seconds, testing::kAddressSanitizer ? 10.0 : 1.0);
  // The same list with one id repeated at the end: found in linear time, not quadratic.
  j["groups"][0]["nodes"].push_back(7);
  auto repeated = PlanFromJson(j.dump(), "repeated.json");
  ASSERT_FALSE(repeated.ok());
  EXPECT_NE(repeated.status().message().find("node 7 is listed twice"), std::string::npos);
}

TEST_F(PlanTest, FilesAreWrittenWholeAndReadBack) {
  TempDir dir;
  Graph graph = RepeatedBlocks(2);
  Plan plan = NativePlan(graph);
  ASSERT_TRUE(WritePlanFile(plan, dir.file("p.json")).ok());
  EXPECT_FALSE(std::filesystem::exists(dir.file("p.json.tmp")));
  auto back = ReadPlanFile(dir.file("p.json"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->groups.size(), plan.groups.size());
  EXPECT_FALSE(ReadPlanFile(dir.file("missing.json")).ok());
  EXPECT_FALSE(WritePlanFile(plan, dir.file("no/such/folder/p.json")).ok());
}

}  // namespace
}  // namespace collage
