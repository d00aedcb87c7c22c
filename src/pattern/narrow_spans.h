// Spans of a graph's node order between its narrow points: the regions an engine is offered
// between one node and the whole model (Fusion::NarrowSpans).
//
// A cut after node i of the (topological) node order splits the graph in two; the values
// live across it — computed at or before i, read after it — are what a region ending there
// hands the next one. Where few are live (a residual block's or a transformer layer's end,
// where one hidden state flows on, plus whatever the whole model carries along, such as an
// attention mask), the graph is narrow: a region cut there is a natural unit of the model,
// and its boundary costs the fewest tensors. A contiguous range of a topological order is
// always convex.
#pragma once

#include <vector>

#include "collage/sdk/graph.h"

namespace collage {

// The number of node-computed values live across each cut: result[i] for the cut after node
// i, i in [0, num_nodes - 1) (empty for fewer than two nodes). Graph inputs and constants are
// not counted: every region may read them.
std::vector<int> ValuesLiveAcrossCuts(const Graph& graph);

// About `parts` spans of similar size (none under kMinSpanNodes nodes), each ending at a
// narrow point — a cut where no more values are live than anywhere near it — and every run
// of 2, 4, ... consecutive ones aligned to its length (as a binary tree's subtrees: each
// coarser span is two finer ones), so that the search can place any prefix or suffix of the
// model at the granularity it pays for. The whole graph is not among them. Each span is the
// ascending list of its node ids; the finest first.
std::vector<std::vector<NodeId>> NarrowPointSpans(const Graph& graph, int parts);

inline constexpr int kMinSpanNodes = 8;

}  // namespace collage
