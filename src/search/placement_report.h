// The placement made visible (DESIGN.md: "placement you can see and explain"): a
// self-contained HTML page with the graph of groups drawn as SVG, each group coloured by its
// backend and labelled with its measured cost, and a table giving every group's rivals —
// the other backends' offers and their costs, or why they were invalid.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "collage/optimize.h"
#include "ir/graph.h"

namespace collage {

struct ReportLatency {
  std::string label;  // "optimized", "onednn alone", ...
  double p50_ms = 0;
};

// `latencies`: end-to-end measurements to show beside the placement (may be empty).
std::string PlacementReportHtml(const Graph& graph, const OptimizeReport& report,
                                const std::vector<ReportLatency>& latencies);

}  // namespace collage
