// The HTML page of a placement (collage/report.h says what it shows), drawn from the graph the
// session runs and the report's document (report/report_document.h): the page shows nothing
// the JSON does not hold.
#pragma once

#include <string>

#include "collage/optimize.h"
#include "collage/report.h"
#include "collage/sdk/graph.h"
#include "report/report_document.h"

namespace collage {

// The page of `document` (OptimizeReportDocument of an optimize of `graph`).
std::string PlacementReportHtml(const Graph& graph, const ReportDocument& document,
                                const PlacementReportOptions& options = {});

// As the public PlacementReportHtml, for `graph` (the session's: SessionGraph).
std::string PlacementReportHtml(const Graph& graph, const OptimizeReport& report,
                                const RunProfile& in_run,
                                const PlacementReportOptions& options = {});

}  // namespace collage
