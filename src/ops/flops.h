// Arithmetic cost of a node, for `collage info` and reports: multiply-adds count as two
// floating-point operations (the usual convention for GFLOP figures of CNNs and
// transformers); other ops count one operation per output element.
#pragma once

#include "collage/model_summary.h"
#include "collage/sdk/graph.h"

namespace collage {

double NodeFlops(const Graph& graph, const Node& node);
double GraphFlops(const Graph& graph);
// The graph's op counts, parameters and FLOPs (collage/model_summary.h).
ModelSummary SummarizeGraph(const Graph& graph);

}  // namespace collage
