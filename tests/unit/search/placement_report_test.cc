// The HTML report sets what a run showed beside what the search estimated: every group's
// estimate and in-run time, the layout conversions' times, and the end-to-end decision with
// the kept finalist marked (or, without one, that nothing was measured end to end).
#include "search/placement_report.h"

#include <gtest/gtest.h>

#include "optimize_test_util.h"

namespace collage {
namespace {

using testing::RepeatedBlocks;

class PlacementReportTest : public ::testing::Test {
 protected:
  // One group per node of a one-block model (Conv, Relu, Add), with estimates and in-run times.
  void SetUp() override {
    graph_ = RepeatedBlocks(1);
    const char* backends[] = {"onednn", "xnnpack", "native"};
    for (int n = 0; n < graph_.num_nodes(); ++n) {
      GroupReport group;
      group.backend = backends[n % 3];
      group.rule = "rule" + std::to_string(n);
      group.nodes = {n};
      group.cost_ms = 0.2;
      group.in_run_ms = 0.35;
      report_.groups.push_back(group);
    }
    report_.estimated_ms = 0.7;
    NodeTiming conversion;
    conversion.node_name = "block0.conv_out";
    conversion.op_type = "LayoutConversion";
    conversion.backend = "xnnpack";
    conversion.rule = "nchw->nhwc";
    conversion.milliseconds = 0.045;
    NodeTiming step;
    step.op_type = "Conv";
    step.milliseconds = 0.35;
    in_run_.nodes = {step, conversion, step, step};
  }

  void AddDecision() {
    FinalistReport op_level{"op-level", 0.7, 0.8, 1.0, 9, true, ""};
    FinalistReport onednn{"single-backend:onednn", 0, 1.2, 1.5, 6, false, ""};
    FinalistReport xnnpack{"single-backend:xnnpack", 0, 0, 0, 0, false, "wrong outputs"};
    report_.finalists = {op_level, onednn, xnnpack};
    report_.kept_finalist = "op-level";
    report_.measured_ms = 0.8;
    report_.decision_rounds = 15;
    report_.round_spread = 0.04;
  }

  static void ExpectContains(const std::string& html, const std::string& text) {
    EXPECT_NE(html.find(text), std::string::npos) << text;
  }

  Graph graph_;
  OptimizeReport report_;
  RunProfile in_run_;
};

TEST_F(PlacementReportTest, EveryGroupHasItsEstimateBesideItsTimeInTheRun) {
  AddDecision();
  const std::string html = PlacementReportHtml(graph_, report_, in_run_);
  for (const char* text :
       {"<th>estimated</th><th>in run</th><th>in run / estimated</th>",
        "<td>200 us</td><td>350 us</td><td>1.75x</td>", "share of the estimate",
        "Layout conversions in the run",
        "<td>block0.conv_out</td><td>nchw-&gt;nhwc</td><td>xnnpack</td><td>45 us</td>"}) {
    ExpectContains(html, text);
  }
}

TEST_F(PlacementReportTest, TheFinalistsAreListedWithTheKeptOneMarked) {
  AddDecision();
  const std::string html = PlacementReportHtml(graph_, report_, in_run_);
  for (const char* text :
       {"End-to-end decision", "15 interleaved rounds", "spread (p90 - p10) / median: 4.0%",
        "<td>op-level plan</td><td>700 us</td><td>800 us</td>"
        "<td>1.00x</td><td>9</td><td><b>kept</b></td>",
        "<td>onednn alone</td><td>-</td><td>1.20 ms</td><td>1.50x</td><td>6</td><td></td>",
        "<td>xnnpack alone</td><td colspan=\"5\">skipped: wrong outputs</td>",
        "estimated 700 us, measured 800 us end to end (estimate 12.5% low)"}) {
    ExpectContains(html, text);
  }
}

TEST_F(PlacementReportTest, WithoutADecisionOrAProfileTheReportSaysSo) {
  const std::string html = PlacementReportHtml(graph_, report_, RunProfile());
  ExpectContains(html, "Not measured end to end");
  ExpectContains(html, "not profiled");
  EXPECT_EQ(html.find("Layout conversions in the run"), std::string::npos);
}

}  // namespace
}  // namespace collage
