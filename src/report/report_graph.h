// What the placement report draws, apart from how it is laid out: one box per group of the
// placement (per node inside a two-level region, the region drawn as a cluster around them),
// one per model input and output, an edge wherever a value flows between boxes, and on an
// edge the layout conversions the run made for it. Both layouts (Graphviz dot and the
// built-in one) draw this and only this.
#pragma once

#include <string>
#include <vector>

#include "collage/optimize.h"
#include "collage/sdk/graph.h"
#include "collage/session.h"
#include "report/report_document.h"

namespace collage {

struct ReportBox {
  std::vector<std::string> lines;  // the label, one line each
  std::string fill;                // "#rrggbb"
  std::string tooltip;             // shown on hover: the full names, the rivals
  int cluster = -1;                // index into ReportGraph::clusters, -1: none
  bool terminal = false;           // a model input or output, not a step
};

struct ReportEdge {
  int from = 0;
  int to = 0;
  std::string conversion;  // "nchw→nhwc 12 µs" (one line per conversion); empty: none
};

// A two-level region: one step of the plan, running many nodes on one backend.
struct ReportCluster {
  std::vector<std::string> lines;
  std::string colour;
};

struct ReportGraph {
  std::vector<ReportBox> boxes;
  std::vector<ReportEdge> edges;  // at most one per (from, to)
  std::vector<ReportCluster> clusters;
};

// From the report's document (report/report_document.h) of an optimize of `graph`: its groups,
// and its profiled run of the kept placement (the conversions go on the edges, a region's
// share of it on the region; no steps: not profiled).
ReportGraph BuildReportGraph(const Graph& graph, const ReportDocument& document);
// The same from the report itself and `in_run`.
ReportGraph BuildReportGraph(const Graph& graph, const OptimizeReport& report,
                             const RunProfile& in_run);

}  // namespace collage
