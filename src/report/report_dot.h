// The report's graph laid out by Graphviz's dot, where it is installed: written in the dot
// language, piped through `dot -Tsvg` (no temporary files) under a time limit, and the <svg>
// element of its output kept for embedding in the page.
#pragma once

#include <chrono>
#include <string>

#include "collage/status.h"
#include "report/report_graph.h"

namespace collage {

// The dot-language description of `graph`: boxes b0, b1, ... in the order of graph.boxes,
// a region as a subgraph cluster_N, a conversion as its edge's label.
std::string ReportGraphDot(const ReportGraph& graph);

// The path of `dot` on $PATH; empty when it is not there.
std::string FindDot();

// The <svg> element dot makes of `source`. An error (never a hang) when dot fails, writes no
// SVG or takes longer than `limit`.
StatusOr<std::string> RunDot(const std::string& dot_path, const std::string& source,
                             std::chrono::milliseconds limit);

}  // namespace collage
