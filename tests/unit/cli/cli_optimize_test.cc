// `collage optimize` and the plan it saves, as a user meets them: the search's summary, its
// estimate against the run and the end-to-end decision, a plan that run and bench take, a
// trace, a report and a JSON summary that open elsewhere, and clear errors for everything a
// user can get wrong.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli_test_util.h"

namespace collage {
namespace {

using testing::CliTest;
using testing::CommandResult;
using testing::ReadAll;
using testing::RunCli;
namespace fs = std::filesystem;

class CliOptimizeTest : public CliTest {
 protected:
  // Optimizes the tiny model into plan.json with its own cost database.
  CommandResult Optimize(const std::string& extra = "") {
    return RunCli("optimize " + WriteTinyModel() + " --threads 1 --rounds 2 --cost-db " + db() +
                  " --save-plan " + plan() + " " + extra);
  }
  std::string db() const { return (dir_ / "costs.sqlite").string(); }
  std::string plan() const { return (dir_ / "plan.json").string(); }
};

TEST_F(CliOptimizeTest, OptimizePrintsTheSearchTheSharesAndTheComparison) {
  CommandResult r = Optimize("--report " + (dir_ / "report.html").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The decision may keep any finalist on so small a model: the placement is not named.
  for (const char* expected :
       {"measuring candidates", "calibrating", "checking finalists", "deciding", "round 2/2",
        "candidates:", "distinct", "search:", "(exact)", "placement (",
        "estimated", "share", "in run", "layout conversions in the run:", "plan saved to",
        "report written to"}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
  for (const char* expected :
       {"end-to-end decision:", "op-level plan", "native alone", "onednn alone", "<- kept",
        "end to end (estimate", "kept: ", "round-to-round spread"}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
  std::string html = ReadAll(dir_ / "report.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("rivals"), std::string::npos);
  EXPECT_NE(html.find("<th>estimated</th><th>in run</th>"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"kept\">"), std::string::npos) << "the kept finalist is marked";
  EXPECT_NE(html.find("<title>collage placement: tiny.onnx</title>"), std::string::npos)
      << "the page is titled with the model's file name";
  EXPECT_EQ(html.find("src=\"http"), std::string::npos) << "the report must be self-contained";

  // The second optimize finds everything in the cost database.
  r = Optimize("--no-compare");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(" 0 measured now"), std::string::npos) << r.output;
}

// The report's graph is laid out by Graphviz's dot where it is installed, by the built-in
// layout when COLLAGE_REPORT_LAYOUT=builtin asks for it; the page says which.
TEST_F(CliOptimizeTest, TheReportSaysWhichLayoutDrewItsGraph) {
  const fs::path report = dir_ / "report.html";
  CommandResult r = RunCli("optimize " + WriteTinyModel() + " --threads 1 --no-compare --cost-db " +
                               db() + " --report " + report.string(),
                           "COLLAGE_REPORT_LAYOUT=builtin");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string html = ReadAll(report);
  EXPECT_NE(html.find("(built-in layered layout.)"), std::string::npos);
  EXPECT_NE(html.find("class=\"placement-graph\""), std::string::npos);
  EXPECT_EQ(html.find("Graphviz"), std::string::npos);

  if (std::system("command -v dot >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "Graphviz dot is not installed: only the built-in layout was checked";
  }
  r = RunCli("optimize " + WriteTinyModel() + " --threads 1 --no-compare --cost-db " + db() +
                 " --report " + report.string(),
             "env -u COLLAGE_REPORT_LAYOUT");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  html = ReadAll(report);
  EXPECT_NE(html.find("(laid out by Graphviz dot.)"), std::string::npos);
  EXPECT_NE(html.find("<g id=\"graph0\" class=\"graph\""), std::string::npos) << "dot's SVG embedded";
  EXPECT_EQ(html.find("<?xml"), std::string::npos) << "dot's XML declaration left out";
}

TEST_F(CliOptimizeTest, RunAndBenchTakeThePlanAndBenchWritesATrace) {
  ASSERT_EQ(Optimize("--no-compare").exit_code, 0);
  const std::string model = (dir_ / "tiny.onnx").string();
  CommandResult r =
      RunCli("run " + model + " --plan " + plan() + " --random-inputs --check --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("placement (op-level)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ok"), std::string::npos) << r.output;

  const fs::path trace = dir_ / "trace.json";
  r = RunCli("bench " + model + " --plan " + plan() +
             " --threads 1 --iterations 3 --export-profile " + trace.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(ReadAll(trace), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  ASSERT_TRUE(j.contains("traceEvents"));
  ASSERT_FALSE(j["traceEvents"].empty());
  int runs_seen = 0;
  for (const auto& event : j["traceEvents"]) {
    EXPECT_EQ(event["ph"], "X");
    EXPECT_TRUE(event["args"].contains("backend") && event["args"].contains("rule"));
    EXPECT_GE(event["dur"].get<double>(), 0.0);
    runs_seen = std::max(runs_seen, event["args"]["run"].get<int>() + 1);
  }
  EXPECT_EQ(runs_seen, 3);
  // A plan measured with another thread count runs, with a warning.
  r = RunCli("run " + model + " --plan " + plan() + " --random-inputs --threads 2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: plan"), std::string::npos) << r.output;
}

TEST_F(CliOptimizeTest, TheJsonSummaryHasTheEstimateTheRunAndEveryGroup) {
  const fs::path summary = dir_ / "summary.json";
  CommandResult r = Optimize("--json " + summary.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("threads: 1"), std::string::npos) << r.output;
  nlohmann::json j = nlohmann::json::parse(ReadAll(summary), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << ReadAll(summary);
  for (const char* key : {"model", "threads", "search", "estimated_ms", "measured_ms",
                          "kept_finalist", "decision_rounds", "round_spread", "finalists", "groups",
                          "conversions_in_run_ms", "measurements", "plan"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["threads"], 1);
  EXPECT_EQ(j["plan"], plan());
  EXPECT_GT(j["estimated_ms"].get<double>(), 0.0);
  EXPECT_GT(j["measured_ms"].get<double>(), 0.0);
  EXPECT_GE(j["decision_rounds"].get<int>(), 2);
  int kept = 0;
  for (const auto& f : j["finalists"]) {
    for (const char* key :
         {"name", "estimated_ms", "median_ms", "ratio_to_kept", "rounds_won", "kept", "skipped"}) {
      EXPECT_TRUE(f.contains(key)) << key;
    }
    kept += f["kept"].get<bool>() ? 1 : 0;
  }
  EXPECT_EQ(kept, 1);
  ASSERT_FALSE(j["groups"].empty());
  for (const auto& g : j["groups"]) {
    EXPECT_GT(g["nodes"].get<int>(), 0);
    EXPECT_TRUE(g.contains("backend") && g.contains("rule") && g.contains("estimated_ms"));
    EXPECT_GT(g["in_run_ms"].get<double>(), 0.0);
  }
  for (const char* key : {"measured", "cache_hits", "invalid"}) {
    EXPECT_TRUE(j["measurements"].contains(key)) << key;
  }

  // Without the decision nothing is measured end to end, but the groups are still profiled.
  r = RunCli("optimize " + (dir_ / "tiny.onnx").string() + " --threads 1 --no-compare --cost-db " +
             db() + " --json " + summary.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("not measured end to end"), std::string::npos) << r.output;
  j = nlohmann::json::parse(ReadAll(summary), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["measured_ms"], 0.0);
  EXPECT_TRUE(j["finalists"].empty());
  EXPECT_TRUE(j["plan"].is_null());
  for (const auto& g : j["groups"]) EXPECT_GT(g["in_run_ms"].get<double>(), 0.0);
}

// The JSON holds what the HTML page shows: each finalist's kind and backend as fields (no
// reader takes them out of its name), each group's nodes and rivals, every step of the run.
TEST_F(CliOptimizeTest, TheJsonHoldsWhatTheReportPageShows) {
  const fs::path summary = dir_ / "summary.json";
  const fs::path report = dir_ / "report.html";
  CommandResult r = Optimize("--json " + summary.string() + " --report " + report.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(ReadAll(summary), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << ReadAll(summary);
  const std::string html = ReadAll(report);
  for (const auto& f : j["finalists"]) {
    const std::string kind = f["kind"].get<std::string>();
    EXPECT_TRUE(kind == "op-level" || kind == "two-level" || kind == "single-backend" ||
                kind == "whole-graph")
        << kind;
    EXPECT_EQ(f["backend"].get<std::string>().empty(), kind == "op-level" || kind == "two-level");
    EXPECT_NE(html.find("<td>" + f["label"].get<std::string>() + "</td>"), std::string::npos)
        << f["label"];
  }
  size_t group_steps = 0;
  size_t conversions = 0;
  for (const auto& step : j["in_run_steps"]) {
    const bool conversion = step["kind"] == "conversion";
    conversions += conversion ? 1 : 0;
    group_steps += conversion ? 0 : 1;
    if (!conversion) {
      EXPECT_LT(step["group"].get<size_t>(), j["groups"].size());
    }
  }
  EXPECT_EQ(group_steps, j["groups"].size());
  EXPECT_NE(html.find(std::to_string(conversions) + " conversions"), std::string::npos);
  for (const auto& g : j["groups"]) {
    EXPECT_EQ(g["node_ids"].size(), g["nodes"].get<size_t>());
    EXPECT_EQ(g["op_types"].size(), g["nodes"].get<size_t>());
    ASSERT_TRUE(g["alternatives"].is_array());
    for (const auto& a : g["alternatives"]) {
      EXPECT_NE(html.find(a["backend"].get<std::string>() + " " + a["rule"].get<std::string>()),
                std::string::npos)
          << a;
    }
  }
}

TEST_F(CliOptimizeTest, BenchProfileSetsEveryGroupBesideThePlansEstimate) {
  ASSERT_EQ(Optimize("--no-compare").exit_code, 0);
  const std::string model = (dir_ / "tiny.onnx").string();
  CommandResult r =
      RunCli("bench " + model + " --plan " + plan() + " --threads 1 --iterations 3 --profile");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("per step against the plan's estimate"), std::string::npos) << r.output;
  // A group's row: step, backend, rule, ops, estimate, in-run time, ratio.
  const std::regex group_row(R"(\n +\d+ +\S+ +\S+ +\S*(Relu|Add)\S* +\d+(\.\d+)? (us|ms) +)"
                             R"(\d+(\.\d+)? (us|ms) +\d+\.\d\dx\n)");
  EXPECT_TRUE(std::regex_search(r.output, group_row)) << r.output;
  EXPECT_NE(r.output.find("total: estimated "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("total: estimated -"), std::string::npos) << r.output;
  // A single backend has no estimate.
  r = RunCli("bench " + model + " --threads 1 --iterations 2 --profile");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("total: estimated -, measured"), std::string::npos) << r.output;
}

TEST_F(CliOptimizeTest, BadPlansAreClearErrors) {
  ASSERT_EQ(Optimize("--no-compare").exit_code, 0);
  const std::string model = (dir_ / "tiny.onnx").string();
  const std::string good = ReadAll(plan());
  auto refuses = [&](const std::string& name, const std::string& text,
                     const std::string& expected) {
    std::string path = WriteBytes(name, text);
    CommandResult r = RunCli("run " + model + " --plan " + path + " --random-inputs");
    EXPECT_EQ(r.exit_code, 1) << name << ": " << r.output;
    EXPECT_NE(r.output.find("error:"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << name << ": " << r.output;
  };
  refuses("truncated.json", good.substr(0, good.size() / 3), "not valid JSON");
  refuses("garbage.json", "\x01\x02 not json", "not valid JSON");
  nlohmann::json j = nlohmann::json::parse(good);
  j["model_hash"] = "0123456789abcdef";
  refuses("other_model.json", j.dump(), "another model");
  j = nlohmann::json::parse(good);
  j["groups"][0]["backend"] = "vendor_npu";
  refuses("missing_backend.json", j.dump(), "'vendor_npu', which is not registered");
  CommandResult r =
      RunCli("run " + model + " --plan " + (dir_ / "absent.json").string() + " --random-inputs");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("absent.json"), std::string::npos) << r.output;
  // --plan and --backend contradict each other.
  EXPECT_EQ(
      RunCli("run " + model + " --plan " + plan() + " --backend onednn --random-inputs").exit_code,
      2);
}

// The plan records which finalist of the end-to-end decision was kept (on so small a model
// any may be): the two-level best is one of them.
TEST_F(CliOptimizeTest, TheTwoLevelSearchReportsItsGenerationsAndRecordsTheKeptFinalist) {
  const fs::path summary = dir_ / "summary.json";
  const std::string search = "--search two-level --budget 2s --population 4 --generations 3";
  CommandResult r = Optimize(search + " --seed 5 --json " + summary.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* expected :
       {"generation 0", "two-level search:", "placements measured end to end",
        "end-to-end decision:", "two-level plan"}) {
    EXPECT_NE(r.output.find(expected), std::string::npos) << expected << "\n" << r.output;
  }
  nlohmann::json plan_json = nlohmann::json::parse(ReadAll(plan()), nullptr, false);
  ASSERT_FALSE(plan_json.is_discarded());
  nlohmann::json summary_json = nlohmann::json::parse(ReadAll(summary), nullptr, false);
  ASSERT_FALSE(summary_json.is_discarded());
  EXPECT_EQ(summary_json["search"], "two-level");
  EXPECT_EQ(plan_json["search"], summary_json["kept_finalist"]);
  EXPECT_NE(r.output.find("placement (" + summary_json["kept_finalist"].get<std::string>() + ")"),
            std::string::npos)
      << r.output;
  r = RunCli("run " + (dir_ / "tiny.onnx").string() + " --plan " + plan() +
             " --random-inputs --check --threads 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(CliOptimizeTest, BadOptimizeArgumentsAreClearErrors) {
  CommandResult r = Optimize("--backends onednn,tensorrt");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no backend named 'tensorrt'"), std::string::npos) << r.output;
  r = RunCli("optimize " + WriteTinyModel() + " --cost-db " + db() + " --rounds 0");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--rounds"), std::string::npos) << r.output;
  r = RunCli("optimize " + WriteTinyModel() + " --cost-db " + db() +
             " --search two-level --budget soon");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--budget 'soon'"), std::string::npos) << r.output;
  EXPECT_EQ(RunCli("optimize " + WriteTinyModel() + " --search three-level").exit_code, 2);
  r = RunCli("optimize " + (dir_ / "absent.onnx").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("absent.onnx"), std::string::npos) << r.output;
}

// A Conv with no output channels runs (its output is empty), but not every backend compiles
// it: the comparison goes on without that backend and says why.
TEST_F(CliOptimizeTest, AComparisonContenderThatFailsIsSkippedAndThePlanSaved) {
  Graph g;
  ValueId x = g.AddValue("x", TensorType{DType::kFloat32, {1, 3, 8, 8}});
  g.AddInput(x);
  ValueId w = g.AddConstant("w", Tensor(DType::kFloat32, {0, 3, 3, 3}));
  ValueId y = g.AddValue("y", TensorType{DType::kFloat32, {1, 0, 8, 8}});
  Node conv;
  conv.name = "conv";
  conv.op_type = "Conv";
  conv.inputs = {x, w};
  conv.outputs = {y};
  conv.attributes.Set("pads", Attribute(std::vector<int64_t>{1, 1, 1, 1}));
  ASSERT_TRUE(g.AddNode(conv).ok());
  g.AddOutput(y);
  const std::string model = (dir_ / "zero_channels.onnx").string();
  ASSERT_TRUE(ExportOnnxFile(g, model).ok());
  CommandResult r = RunCli("optimize " + model + " --threads 1 --rounds 2 --cost-db " + db() +
                           " --save-plan " + plan());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("plan saved"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("native alone"), std::string::npos) << r.output;
  EXPECT_EQ(RunCli("run " + model + " --plan " + plan() + " --random-inputs").exit_code, 0);
}

TEST_F(CliOptimizeTest, ACorruptCostDatabaseIsMovedAsideWithAWarning) {
  WriteBytes("costs.sqlite", std::string("SQLite format 3\0", 16) + std::string(4096, 'x'));
  CommandResult r = Optimize("--no-compare");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: cost database"), std::string::npos) << r.output;
  bool moved = false;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    moved = moved || entry.path().filename().string().rfind("costs.sqlite.corrupt-", 0) == 0;
  }
  EXPECT_TRUE(moved);
}

// --cost-db naming a file that is not SQLite at all (here the model itself) is refused, and
// the file stays where and what it was.
TEST_F(CliOptimizeTest, ACostDatabaseThatIsNotSqliteIsRefusedAndKept) {
  const std::string model = WriteTinyModel();
  const auto before = fs::file_size(model);
  CommandResult r = RunCli("optimize " + model + " --threads 1 --no-compare --cost-db " + model);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("is not a SQLite database"), std::string::npos) << r.output;
  EXPECT_EQ(fs::file_size(model), before);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".corrupt-"), std::string::npos);
  }
}

}  // namespace
}  // namespace collage
