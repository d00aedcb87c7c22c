// Graphviz's dot draws the report's graph where it is installed (every edge a path with an
// arrowhead, conversions labelled, a region a cluster), and a dot that fails, hangs or is
// switched off leaves the built-in layout in its place: a report is always drawn.
#include "report/report_dot.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>

#include "report_test_util.h"
#include "report/report_graph_drawing.h"

namespace collage {
namespace {

using namespace testing;

// Sets an environment variable for one test, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// An executable shell script named dot in its own folder, for a PATH holding only it.
std::string FakeDot(const TempDir& dir, const std::string& body) {
  const std::string path = dir.file("dot");
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(ReportDotTest, TheDotSourceNamesEveryBoxEdgeClusterAndConversion) {
  const auto f = MakeReportFixture(2, /*region=*/true);
  const ReportGraph graph = BuildReportGraph(f.graph, f.report, f.in_run);
  const std::string dot = ReportGraphDot(graph);
  EXPECT_EQ(dot.rfind("digraph placement {", 0), 0u);
  EXPECT_NE(dot.find("subgraph cluster_0 {"), std::string::npos);
  EXPECT_NE(dot.find("label=<nChw8c→nhwc 45 µs>"), std::string::npos) << dot;
  for (const ReportEdge& e : graph.edges)
    EXPECT_NE(dot.find(fmt::format("  b{} -> b{}", e.from, e.to)), std::string::npos);
}

TEST(ReportDotTest, DotDrawsEveryEdgeWithAnArrowheadAndTheRegionAsACluster) {
  if (FindDot().empty()) GTEST_SKIP() << "Graphviz dot is not installed (apt-get install graphviz)";
  const auto f = MakeReportFixture(3, /*region=*/true);
  const ReportGraph graph = BuildReportGraph(f.graph, f.report, f.in_run);
  const GraphDrawing drawing = DrawReportGraph(graph, ReportLayout::kDot);
  ASSERT_TRUE(drawing.by_dot) << drawing.how;
  XmlDoc doc = ParseXml(drawing.svg);
  ASSERT_TRUE(doc) << "not well-formed XML:\n" << drawing.svg;
  xmlNode* root = xmlDocGetRootElement(doc.get());
  ASSERT_EQ(Name(root), "svg");

  EXPECT_EQ(Find(root, "g", "node").size(), graph.boxes.size());
  std::set<std::string> drawn;
  std::string conversion_text;
  for (xmlNode* edge : Find(root, "g", "edge")) {
    drawn.insert(Text(Find(edge, "title").at(0)));
    EXPECT_EQ(Find(edge, "path").size(), 1u);
    EXPECT_EQ(Find(edge, "polygon").size(), 1u) << "dot draws the arrowhead as a polygon";
    for (xmlNode* text : Find(edge, "text")) conversion_text += Text(text) + "\n";
  }
  std::set<std::string> expected;
  for (const ReportEdge& e : graph.edges) expected.insert(fmt::format("b{}->b{}", e.from, e.to));
  EXPECT_EQ(drawn, expected);
  EXPECT_NE(conversion_text.find("nChw8c→nhwc 45 µs"), std::string::npos) << conversion_text;
  EXPECT_NE(conversion_text.find("plain→nChw8c 4.2 µs"), std::string::npos) << conversion_text;

  ASSERT_EQ(Find(root, "g", "cluster").size(), 1u);
  // Its title drawn over the edges (after them), with a halo.
  std::vector<xmlNode*> titles = Find(root, "g", "cluster-title");
  ASSERT_EQ(titles.size(), 1u);
  EXPECT_NE(Text(titles[0]).find("region on onnxruntime"), std::string::npos);
  for (xmlNode* after = titles[0]->next; after != nullptr; after = after->next)
    EXPECT_NE(after->type, XML_ELEMENT_NODE) << "the titles come last, over the edges";
}

TEST(ReportDotTest, AFailingDotFallsBackToTheBuiltInLayout) {
  TempDir dir;
  FakeDot(dir, "/bin/cat >/dev/null; echo 'syntax error in line 1' >&2; exit 3");
  const ScopedEnv path("PATH", dir.file(""));
  const auto f = MakeReportFixture(1, /*region=*/false);
  const GraphDrawing drawing =
      DrawReportGraph(BuildReportGraph(f.graph, f.report, f.in_run), ReportLayout::kDot);
  EXPECT_FALSE(drawing.by_dot);
  EXPECT_NE(drawing.how.find("exited with status 3"), std::string::npos) << drawing.how;
  EXPECT_NE(drawing.how.find("syntax error in line 1"), std::string::npos) << drawing.how;
  EXPECT_TRUE(ParseXml(drawing.svg)) << "the built-in layout stands in";
}

TEST(ReportDotTest, ADotThatHangsIsStoppedAtTheTimeLimit) {
  TempDir dir;
  const std::string dot = FakeDot(dir, "exec sleep 60");
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> svg = RunDot(dot, "digraph g { a -> b }\n", std::chrono::milliseconds(300));
  ASSERT_FALSE(svg.ok());
  EXPECT_NE(svg.status().message().find("took longer than"), std::string::npos)
      << svg.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(ReportDotTest, ADotWithoutSvgOutputIsAnError) {
  TempDir dir;
  const std::string dot = FakeDot(dir, "/bin/cat >/dev/null; echo not svg");
  StatusOr<std::string> svg = RunDot(dot, "digraph g { a -> b }\n", std::chrono::seconds(10));
  ASSERT_FALSE(svg.ok());
  EXPECT_NE(svg.status().message().find("wrote no SVG"), std::string::npos)
      << svg.status().message();
}

// The library reads no environment: COLLAGE_REPORT_LAYOUT=builtin is the command line's
// (CliOptimizeTest.TheReportSaysWhichLayoutDrewItsGraph); a caller asks by the option.
TEST(ReportDotTest, TheBuiltInLayoutCanBeAskedFor) {
  const auto f = MakeReportFixture(1, /*region=*/false);
  const GraphDrawing drawing =
      DrawReportGraph(BuildReportGraph(f.graph, f.report, f.in_run), ReportLayout::kBuiltIn);
  EXPECT_FALSE(drawing.by_dot);
  EXPECT_EQ(drawing.how, "built-in layered layout");
  EXPECT_NE(drawing.svg.find("class=\"placement-graph\""), std::string::npos);
}

TEST(ReportDotTest, WithoutDotOnThePathTheBuiltInLayoutSaysWhy) {
  TempDir dir;  // empty: no dot in it
  const ScopedEnv path("PATH", dir.file(""));
  EXPECT_EQ(FindDot(), "");
  const auto f = MakeReportFixture(1, /*region=*/false);
  const GraphDrawing drawing =
      DrawReportGraph(BuildReportGraph(f.graph, f.report, f.in_run), ReportLayout::kAuto);
  EXPECT_FALSE(drawing.by_dot);
  EXPECT_NE(drawing.how.find("not installed"), std::string::npos) << drawing.how;
}

}  // namespace
}  // namespace collage
