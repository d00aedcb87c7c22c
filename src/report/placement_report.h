// The HTML page of a placement (collage/report.h says what it shows), drawn from the graph the
// session runs.
#pragma once

#include <string>

#include "collage/optimize.h"
#include "collage/report.h"
#include "collage/sdk/graph.h"

namespace collage {

// As the public PlacementReportHtml, for `graph` (the session's: SessionGraph).
std::string PlacementReportHtml(const Graph& graph, const OptimizeReport& report,
                                const RunProfile& in_run,
                                const PlacementReportOptions& options = {});

}  // namespace collage
