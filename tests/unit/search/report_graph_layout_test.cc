// The built-in layout draws something a reader can follow: well-formed SVG, every edge a path
// ending in an arrowhead, no edge running behind a box (a residual edge gets a lane of its
// own), no two boxes on top of one another, conversions labelled on their edges, a region's
// nodes inside its frame and nothing else in it.
#include "report/report_graph_layout.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

#include "report_test_util.h"

namespace collage {
namespace {

using namespace testing;

struct Rect {
  double x, y, w, h;
  // Strictly inside, `inset` away from the border (an edge ends on a border).
  bool Holds(double px, double py, double inset) const {
    return px > x + inset && px < x + w - inset && py > y + inset && py < y + h - inset;
  }
  bool Overlaps(const Rect& o) const {
    return x < o.x + o.w && o.x < x + w && y < o.y + o.h && o.y < y + h;
  }
};

Rect RectOf(xmlNode* rect) {
  return {std::stod(Attr(rect, "x")), std::stod(Attr(rect, "y")), std::stod(Attr(rect, "width")),
          std::stod(Attr(rect, "height"))};
}

// Points along an SVG path of M, L and C commands (what the layout writes), 24 per segment.
std::vector<std::pair<double, double>> Sample(const std::string& d) {
  std::string spaced;
  for (char c : d) {
    if (c == ',')
      spaced += ' ';
    else if (std::isalpha(static_cast<unsigned char>(c)))
      spaced += std::string(" ") + c + " ";
    else
      spaced += c;
  }
  std::istringstream in(spaced);
  std::vector<std::pair<double, double>> points;
  double x = 0, y = 0;
  for (char op; in >> op;) {
    if (op == 'M' || op == 'L') {
      double nx = 0, ny = 0;
      in >> nx >> ny;
      for (int k = 0; op == 'L' && k <= 24; ++k)
        points.push_back({x + (nx - x) * k / 24, y + (ny - y) * k / 24});
      x = nx, y = ny;
    } else if (op == 'C') {
      double x1 = 0, y1 = 0, x2 = 0, y2 = 0, x3 = 0, y3 = 0;
      in >> x1 >> y1 >> x2 >> y2 >> x3 >> y3;
      for (int k = 0; k <= 24; ++k) {
        const double t = k / 24.0, u = 1 - t;
        points.push_back(
            {u * u * u * x + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t * t * t * x3,
             u * u * u * y + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t * t * t * y3});
      }
      x = x3, y = y3;
    } else {
      ADD_FAILURE() << "unexpected path command " << op;
      break;
    }
  }
  EXPECT_GT(points.size(), 1u) << d;
  return points;
}

class ReportGraphLayoutTest : public ::testing::TestWithParam<bool> {};

TEST_P(ReportGraphLayoutTest, EveryEdgeIsAVisibleArrowAndNoBoxCoversAnother) {
  const bool region = GetParam();
  const auto f = MakeReportFixture(4, region);
  const ReportGraph graph = BuildReportGraph(f.graph, f.report, f.in_run);
  const std::string svg = LayeredLayoutSvg(graph);
  XmlDoc doc = ParseXml(svg);
  ASSERT_TRUE(doc) << "not well-formed XML:\n" << svg;
  xmlNode* root = xmlDocGetRootElement(doc.get());
  ASSERT_EQ(Name(root), "svg");

  std::map<int, Rect> boxes;
  for (xmlNode* node : Find(root, "g", "node")) {
    std::vector<xmlNode*> rects = Find(node, "rect");
    ASSERT_EQ(rects.size(), 1u);
    boxes[std::stoi(Attr(node, "data-box"))] = RectOf(rects[0]);
  }
  ASSERT_EQ(boxes.size(), graph.boxes.size());
  for (const auto& [a, ra] : boxes) {
    for (const auto& [b, rb] : boxes)
      EXPECT_TRUE(a == b || !ra.Overlaps(rb)) << "boxes " << a << " and " << b << " overlap";
  }

  std::set<std::pair<int, int>> drawn;
  for (xmlNode* edge : Find(root, "g", "edge")) {
    const int from = std::stoi(Attr(edge, "data-from")), to = std::stoi(Attr(edge, "data-to"));
    drawn.insert({from, to});
    std::vector<xmlNode*> paths = Find(edge, "path");
    ASSERT_EQ(paths.size(), 1u);
    EXPECT_EQ(Attr(paths[0], "marker-end").rfind("url(#arrow", 0), 0u) << "no arrowhead";
    for (const auto& [px, py] : Sample(Attr(paths[0], "d"))) {
      for (const auto& [b, rect] : boxes) {
        EXPECT_FALSE(rect.Holds(px, py, 2)) << "edge " << from << "->" << to << " runs behind box "
                                            << b << " at " << px << "," << py;
      }
    }
  }
  std::set<std::pair<int, int>> expected;
  for (const ReportEdge& e : graph.edges) expected.insert({e.from, e.to});
  EXPECT_EQ(drawn, expected);
  // The defs hold the arrowheads the paths point at.
  EXPECT_EQ(Find(root, "marker").size(), 2u);

  std::vector<std::string> conversions;
  for (xmlNode* label : Find(root, "g", "conversion")) conversions.push_back(Text(label));
  EXPECT_EQ(conversions.size(), 2u);
  EXPECT_NE(std::find(conversions.begin(), conversions.end(), "nChw8c→nhwc 45 µs"),
            conversions.end());

  std::vector<xmlNode*> clusters = Find(root, "g", "cluster");
  ASSERT_EQ(clusters.size(), region ? 1u : 0u);
  if (region) {
    EXPECT_NE(Text(clusters[0]).find("region on onnxruntime"), std::string::npos);
    std::vector<xmlNode*> titles = Find(root, "g", "cluster-title");
    ASSERT_EQ(titles.size(), 1u);
    EXPECT_NE(Text(titles[0]).find("of the run"), std::string::npos);
    const Rect frame = RectOf(Find(clusters[0], "rect")[0]);
    for (const auto& [b, rect] : boxes) {
      const bool inside =
          frame.Holds(rect.x, rect.y, 0) && frame.Holds(rect.x + rect.w, rect.y + rect.h, 0);
      EXPECT_EQ(inside, graph.boxes[static_cast<size_t>(b)].cluster == 0) << "box " << b;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutARegion, ReportGraphLayoutTest, ::testing::Bool());

TEST(ReportGraphLayoutEdgeCasesTest, AnEmptyGraphAndOneBoxStillMakeWellFormedSvg) {
  ReportGraph graph;
  EXPECT_TRUE(ParseXml(LayeredLayoutSvg(graph)));
  graph.boxes.push_back(ReportBox{{"a <b> & \"c\""}, "#ffffff", "tip & more", -1, false});
  EXPECT_TRUE(ParseXml(LayeredLayoutSvg(graph)));
}

}  // namespace
}  // namespace collage
