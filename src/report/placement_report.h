// The placement made visible (DESIGN.md: "placement you can see and explain"): a
// self-contained HTML page titled with the model's file. It opens with the end-to-end decision
// between the finalists (the kept one marked, each one's speed against the others) and the
// time per backend; then the graph of groups (search/report_graph.h), each box coloured by its
// backend and labelled with its rule, its ops, its estimate and its time in a profiled run,
// a layout conversion on the edge it converts, a two-level region as a cluster around its
// nodes; then every group's rivals (the other backends' offers and their costs, or why they
// were invalid) and every layout conversion of the run.
#pragma once

#include <string>

#include "collage/optimize.h"
#include "collage/session.h"
#include "collage/sdk/graph.h"
#include "report/report_graph_drawing.h"

namespace collage {

struct PlacementReportOptions {
  std::string title;  // what the page is about, e.g. the model's file name; empty: the graph's name
  ReportLayout layout = ReportLayout::kAuto;
};

// `in_run`: the kept placement's steps with their mean time in profiled runs (its layout
// conversions are listed from it; the groups' times are GroupReport::in_run_ms). Empty: not
// profiled, the in-run columns say so.
std::string PlacementReportHtml(const Graph& graph, const OptimizeReport& report,
                                const RunProfile& in_run,
                                const PlacementReportOptions& options = {});

}  // namespace collage
