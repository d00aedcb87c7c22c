#include "report/report_graph_drawing.h"

#include <chrono>

#include "report/report_dot.h"
#include "report/report_graph_layout.h"

namespace collage {
namespace {

// dot lays out a few hundred boxes in well under a second; a report must never wait long on it.
constexpr std::chrono::milliseconds kDotLimit(20000);

}  // namespace

GraphDrawing DrawReportGraph(const ReportGraph& graph, ReportLayout layout) {
  GraphDrawing drawing;
  if (layout == ReportLayout::kBuiltIn) {
    drawing.how = "built-in layered layout";
  } else if (const std::string dot = FindDot(); dot.empty()) {
    drawing.how = "built-in layered layout (Graphviz dot is not installed)";
  } else if (StatusOr<std::string> svg = RunDot(dot, ReportGraphDot(graph), kDotLimit); svg.ok()) {
    drawing.svg = std::move(svg).value();
    drawing.by_dot = true;
    drawing.how = "laid out by Graphviz dot";
    return drawing;
  } else {
    drawing.how = "built-in layered layout (" + svg.status().message() + ")";
  }
  drawing.svg = LayeredLayoutSvg(graph);
  return drawing;
}

}  // namespace collage
