// Which layout draws the report's graph: Graphviz's dot where it is installed (the better
// drawing), else the built-in layered layout; dot failing (or taking too long) falls back to
// the built-in one too, so that a report is always written (ReportLayout, collage/report.h).
#pragma once

#include <string>

#include "collage/report.h"
#include "report/report_graph.h"

namespace collage {

struct GraphDrawing {
  std::string svg;  // one <svg> element
  bool by_dot = false;
  std::string how;  // for the reader: "laid out by Graphviz dot", or why not
};

GraphDrawing DrawReportGraph(const ReportGraph& graph, ReportLayout layout);

}  // namespace collage
