// An optimize's report as one JSON document: the one serializer of OptimizeReport. The
// command line's --json file and Python's report are this document as text
// (OptimizeReportJson); the HTML page is drawn from it (PlacementReportHtml), so whatever the
// page shows, the JSON holds too. docs/cli.md lists the fields.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collage/optimize.h"
#include "collage/run_profile.h"
#include "collage/sdk/graph.h"

namespace collage {

using ReportDocument = nlohmann::ordered_json;

// What a document says besides the report: the session's side of the optimize.
struct ReportDocumentContext {
  std::string model;      // the model's path, as the caller named it
  std::string plan_path;  // where the plan was saved; empty: not saved (null)
  int threads = 0;        // the session's thread count
  std::string placement;  // the session's placement described (Session::DescribePlacement)
  std::vector<std::string> warnings;  // the optimize's and the session's, each once
};

// `report` of an optimize of `graph` (the graph the session runs). `in_run`: the kept
// placement's steps in a run (report.in_run, or a fresh profile; empty: not profiled).
ReportDocument OptimizeReportDocument(const Graph& graph, const OptimizeReport& report,
                                      const RunProfile& in_run,
                                      const ReportDocumentContext& context);

// A group's (or a rival's) rule as the page and the tables show it: "conv" in float32,
// "conv bf16" in a reduced precision (RuleInPrecision's spelling, from the document's fields).
std::string RuleShown(const ReportDocument& group);

}  // namespace collage
