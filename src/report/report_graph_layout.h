// The built-in layout of the report's graph, for machines without Graphviz: layered top to
// bottom (each box one layer below the deepest box it reads from), the boxes of a layer
// ordered by the barycentre of their neighbours to cut crossings, an edge longer than one
// layer routed through a lane of its own in every layer it crosses (so no edge runs behind a
// box), every edge a curve ending in an arrowhead, a conversion's label on its edge, and a
// two-level region a tinted cluster box around its nodes.
#pragma once

#include <string>

#include "report/report_graph.h"

namespace collage {

// A standalone <svg> element (well-formed XML) drawing `graph`.
std::string LayeredLayoutSvg(const ReportGraph& graph);

}  // namespace collage
