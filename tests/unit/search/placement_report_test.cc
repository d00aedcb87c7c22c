// The HTML report sets what a run showed beside what the search estimated: every group's
// estimate and in-run time, the layout conversions' times, and the end-to-end decision with
// the kept finalist marked and each finalist's speed against the others (or, without one,
// that nothing was measured end to end); it is titled with the model's file, and a region's
// share is its share of the run.
#include "report/placement_report.h"

#include <gtest/gtest.h>

#include "report_test_util.h"
#include "report/report_text.h"

namespace collage {
namespace {

using testing::MakeReportFixture;
using testing::ReportFixture;

void AddDecision(OptimizeReport& report) {
  FinalistReport op_level{PlacementSource::OpLevel(), 0.7, 0.8, 1.0, 9, true, "", 15};
  FinalistReport onednn{PlacementSource::SingleBackend("onednn"), 0, 1.2, 1.5, 6, false, "", 15};
  FinalistReport native{PlacementSource::SingleBackend("native"), 0, 2.4, 3.0, 0, false, "", 15};
  FinalistReport xnnpack{
      PlacementSource::SingleBackend("xnnpack"), 0, 0, 0, 0, false, "wrong outputs", 0};
  report.finalists = {op_level, onednn, native, xnnpack};
  report.kept_finalist = PlacementSource::OpLevel();
  report.measured_ms = 0.8;
  report.decision_rounds = 15;
  report.round_spread = 0.04;
}

void ExpectContains(const std::string& html, const std::string& text) {
  EXPECT_NE(html.find(text), std::string::npos) << text;
}

PlacementReportOptions BuiltIn(const std::string& title = "") {
  PlacementReportOptions options;
  options.title = title;
  options.layout = ReportLayout::kBuiltIn;
  return options;
}

TEST(PlacementReportTest, EveryGroupHasItsEstimateBesideItsTimeInTheRun) {
  ReportFixture f = MakeReportFixture(1, /*region=*/false);
  AddDecision(f.report);
  const std::string html = PlacementReportHtml(f.graph, f.report, f.in_run, BuiltIn());
  for (const char* text :
       {"<th>estimated</th><th>in run</th><th>in run / estimated</th>",
        "<td class=\"num\">200 µs</td><td class=\"num\">350 µs</td><td class=\"num\">1.75x</td>",
        "share of the estimate", "share of the run", "Layout conversions in the run",
        "2 conversions, 49 µs in all",
        "<td>x</td><td>plain-&gt;nChw8c</td><td>onednn</td><td class=\"num\">4.2 µs</td>"}) {
    ExpectContains(html, text);
  }
  EXPECT_EQ(html.find(" us<"), std::string::npos) << "durations in µs, never 'us'";
}

TEST(PlacementReportTest, TheKeptFinalistIsMarkedWithItsSpeedAgainstTheOthers) {
  ReportFixture f = MakeReportFixture(1, /*region=*/false);
  AddDecision(f.report);
  const std::string html = PlacementReportHtml(f.graph, f.report, f.in_run, BuiltIn());
  for (const char* text :
       {"End-to-end decision", "15 interleaved rounds", "spread (p90 - p10) / median: 4.0%",
        "Kept: <b>op-level plan</b> (",
        "), 800 µs end to end; 1.50x faster than the best single "
        "backend (onednn alone), 3.00x faster than the slowest (native alone).",
        "<tr class=\"kept\"><td>op-level plan</td><td class=\"num\">700 µs</td><td "
        "class=\"num\">800 µs</td><td class=\"num\">1.00x</td><td class=\"num\">3.00x</td>"
        "<td class=\"num\">9</td><td>&#10004; kept</td>",
        "<tr><td>onednn alone</td><td class=\"num\">-</td><td class=\"num\">1.20 ms</td><td "
        "class=\"num\">1.50x</td><td class=\"num\">2.00x</td><td class=\"num\">6</td><td></td>",
        "<td>xnnpack alone</td><td colspan=\"6\">skipped: wrong outputs</td>",
        "estimated 700 µs, measured 800 µs end to end (estimate 12.5% low)"}) {
    ExpectContains(html, text);
  }
}

// The page is drawn from the report's document alone: what the document says, the page says,
// and everything the page shows of a finalist or a group is a field of the JSON.
TEST(PlacementReportTest, ThePageIsDrawnFromTheReportsDocument) {
  ReportFixture f = MakeReportFixture(1, /*region=*/false);
  AddDecision(f.report);
  f.report.groups[0].alternatives.push_back(
      {"xnnpack", "conv_rival", Precision::kFloat32, 1, true, true, 0.25, ""});
  ReportDocument document = OptimizeReportDocument(f.graph, f.report, f.in_run, {});
  const ReportDocument& onednn = document["finalists"][1];
  EXPECT_EQ(onednn["kind"], "single-backend");
  EXPECT_EQ(onednn["backend"], "onednn");
  EXPECT_EQ(onednn["label"], "onednn alone");
  EXPECT_EQ(document["finalists"][0]["backend"], "");
  EXPECT_EQ(document["groups"][0]["alternatives"][0]["rule"], "conv_rival");
  EXPECT_EQ(document["groups"][0]["node_ids"], ReportDocument::array({0}));
  EXPECT_EQ(document["in_run_steps"].size(), f.in_run.nodes.size());
  EXPECT_TRUE(document["measurements"]["search_exact"].get<bool>());

  document["finalists"][1]["label"] = "a label only the document has";
  document["groups"][0]["alternatives"][0]["rule"] = "a rival only the document has";
  const std::string html = PlacementReportHtml(f.graph, document, BuiltIn());
  ExpectContains(html, "<tr><td>a label only the document has</td>");
  ExpectContains(html, "xnnpack a rival only the document has: 250 µs");
}

TEST(PlacementReportTest, ThePageIsTitledWithTheModelsFileElseTheGraphsName) {
  ReportFixture f = MakeReportFixture(1, /*region=*/false);
  std::string html =
      PlacementReportHtml(f.graph, f.report, f.in_run, BuiltIn("mobilenet <v2>.onnx"));
  ExpectContains(html, "<title>collage placement: mobilenet &lt;v2&gt;.onnx</title>");
  ExpectContains(html, "<h1>Placement of mobilenet &lt;v2&gt;.onnx</h1>");
  html = PlacementReportHtml(f.graph, f.report, f.in_run, BuiltIn());
  ExpectContains(html, "<title>collage placement: repeated_blocks</title>");
}

TEST(PlacementReportTest, WithoutADecisionOrAProfileTheReportSaysSo) {
  ReportFixture f = MakeReportFixture(1, /*region=*/false);
  const std::string html = PlacementReportHtml(f.graph, f.report, RunProfile(), BuiltIn());
  ExpectContains(html, "Not measured end to end");
  ExpectContains(html, "not profiled");
  EXPECT_EQ(html.find("Layout conversions in the run"), std::string::npos);
}

TEST(PlacementReportTest, ARegionsShareIsItsShareOfTheRun) {
  ReportFixture f = MakeReportFixture(2, /*region=*/true);
  const std::string html = PlacementReportHtml(f.graph, f.report, f.in_run, BuiltIn());
  // onnxruntime runs 1.5 ms of the run's 2.2492 ms; it has no estimate of its own.
  ExpectContains(
      html,
      "onnxruntime</td><td class=\"num\">4</td><td class=\"num\">in whole plans only</td>"
      "<td class=\"num\">-</td><td class=\"num\">1.50 ms</td><td class=\"num\">66.7%</td>");
  ExpectContains(html, "region on onnxruntime (region) · 4 nodes");
  ExpectContains(html, "class=\"cluster\"");
  EXPECT_EQ(html.find(">0.0%<"), std::string::npos);
}

TEST(PlacementReportTest, TheGraphSaysHowItWasLaidOutAndHasALegend) {
  ReportFixture f = MakeReportFixture(1, /*region=*/false);
  const std::string html = PlacementReportHtml(f.graph, f.report, f.in_run, BuiltIn());
  ExpectContains(html, "(built-in layered layout.)");
  ExpectContains(html, "<span class=\"item\"><span class=\"swatch\" style=\"background:" +
                           BackendColour("onednn") + "\"></span>onednn</span>");
  EXPECT_TRUE(testing::ParseXml(testing::SvgOf(html))) << "the embedded graph is well-formed";
}

TEST(PlacementReportTest, TheKeptPlacementIsSaidInBrief) {
  OptimizeReport whole;
  GroupReport region;
  region.backend = "openvino";
  region.rule = "whole";
  region.precision = Precision::kBfloat16;
  region.nodes = {0, 1, 2};
  whole.groups = {region};
  EXPECT_EQ(PlacementInBrief(whole), "openvino bf16, whole model");
  OptimizeReport mixed;
  for (const char* backend : {"xnnpack", "onednn", "native", "onednn"}) {
    GroupReport group;
    group.backend = backend;
    mixed.groups.push_back(group);
  }
  EXPECT_EQ(PlacementInBrief(mixed), "onednn 2 groups, native 1, xnnpack 1");
}

}  // namespace
}  // namespace collage
