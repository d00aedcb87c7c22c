// The placement made visible (DESIGN.md: "placement you can see and explain"): a
// self-contained HTML page with the graph of groups drawn as SVG, each group coloured by its
// backend and labelled with its measured cost, and a table giving every group's rivals —
// the other backends' offers and their costs, or why they were invalid. Beside the search's
// estimates it sets what a run showed: the end-to-end decision between the finalists, every
// group's and every layout conversion's time in a profiled run of the kept placement.
#pragma once

#include <string>

#include "collage/optimize.h"
#include "collage/session.h"
#include "ir/graph.h"

namespace collage {

// `in_run`: the kept placement's steps with their mean time in profiled runs (its layout
// conversions are listed from it; the groups' times are GroupReport::in_run_ms). Empty: not
// profiled, the in-run columns say so.
std::string PlacementReportHtml(const Graph& graph, const OptimizeReport& report,
                                const RunProfile& in_run);

}  // namespace collage
