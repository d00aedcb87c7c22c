// The in-run profile's one internal part (the rest is public, collage/report.h): setting a
// report's group times from a profile, which matches steps to the graph's nodes.
#pragma once

#include "collage/optimize.h"
#include "collage/report.h"
#include "collage/sdk/graph.h"

namespace collage {

// Sets each report group's in_run_ms from the group step at the same position. Returns false
// and sets nothing when the steps are not the report's groups (another count, backend, rule
// or first node): a report of another placement must not borrow this one's times.
bool SetInRunTimes(const RunProfile& mean, const Graph& graph, OptimizeReport& report);

}  // namespace collage
