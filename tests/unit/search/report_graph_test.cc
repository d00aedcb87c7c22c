// What the report draws: a box per group (per node inside a region, framed by its cluster), a
// box per model input and output, an edge for every value crossing between boxes, and each
// conversion of the profiled run on the edge it converts.
#include "report/report_graph.h"

#include <gtest/gtest.h>

#include <set>

#include "report_test_util.h"

namespace collage {
namespace {

using testing::MakeReportFixture;

bool HasEdge(const ReportGraph& graph, int from, int to) {
  for (const ReportEdge& e : graph.edges) {
    if (e.from == from && e.to == to) return true;
  }
  return false;
}

TEST(ReportGraphTest, GroupsInputsOutputsAndTheResidualEdgesAreAllThere) {
  const auto f = MakeReportFixture(2, /*region=*/false);
  const ReportGraph graph = BuildReportGraph(f.graph, f.report, f.in_run);
  // x, six groups, y.
  ASSERT_EQ(graph.boxes.size(), 8u);
  EXPECT_TRUE(graph.boxes.front().terminal);
  EXPECT_TRUE(graph.boxes.back().terminal);
  EXPECT_EQ(graph.boxes[1].lines.front(), "onednn · rule0");
  EXPECT_EQ(graph.boxes[1].lines.back(), "est 200 µs · run 350 µs");
  // Boxes: 0 x, 1 conv0, 2 relu0, 3 add0, 4 conv1, 5 relu1, 6 add1, 7 y. The Adds read the
  // block's input too: x → add0, add0 → add1 (past conv1 and relu1).
  const std::set<std::pair<int, int>> expected = {{0, 1}, {1, 2}, {2, 3}, {0, 3}, {3, 4},
                                                  {4, 5}, {5, 6}, {3, 6}, {6, 7}};
  EXPECT_EQ(graph.edges.size(), expected.size());
  for (const auto& [from, to] : expected)
    EXPECT_TRUE(HasEdge(graph, from, to)) << from << "->" << to;
  EXPECT_TRUE(graph.clusters.empty());
}

TEST(ReportGraphTest, ConversionsGoOnTheEdgeIntoTheStepThatNeededThem) {
  const auto f = MakeReportFixture(2, /*region=*/false);
  const ReportGraph graph = BuildReportGraph(f.graph, f.report, f.in_run);
  std::map<std::pair<int, int>, std::string> labels;
  for (const ReportEdge& e : graph.edges) {
    if (!e.conversion.empty()) labels[{e.from, e.to}] = e.conversion;
  }
  ASSERT_EQ(labels.size(), 2u);
  EXPECT_EQ(labels[std::make_pair(0, 1)], "plain→nChw8c 4.2 µs");  // x into conv0
  EXPECT_EQ(labels[std::make_pair(1, 2)], "nChw8c→nhwc 45 µs");    // conv0 into relu0
}

TEST(ReportGraphTest, WithoutAProfileNothingIsSaidAboutTheRun) {
  const auto f = MakeReportFixture(1, /*region=*/false);
  const ReportGraph graph = BuildReportGraph(f.graph, f.report, RunProfile());
  for (const ReportEdge& e : graph.edges) EXPECT_TRUE(e.conversion.empty());
  EXPECT_EQ(graph.boxes[1].lines.back(), "est 200 µs");
}

TEST(ReportGraphTest, ARegionIsAClusterOfItsNodesWithItsShareOfTheRun) {
  const auto f = MakeReportFixture(2, /*region=*/true);
  const ReportGraph graph = BuildReportGraph(f.graph, f.report, f.in_run);
  ASSERT_EQ(graph.clusters.size(), 1u);
  int members = 0;
  for (const ReportBox& box : graph.boxes) members += box.cluster == 0;
  EXPECT_EQ(members, 4);
  EXPECT_EQ(graph.clusters[0].lines[0], "region on onnxruntime (region) · 4 nodes");
  // 1.5 ms of 0.35 + 1.5 + 0.35 + the conversions' 0.0492 ms.
  EXPECT_EQ(graph.clusters[0].lines[1], "run 1.50 ms · 66.7% of the run");
}

}  // namespace
}  // namespace collage
