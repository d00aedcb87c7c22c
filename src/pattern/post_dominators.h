// Post-dominators of a graph's nodes, the path fusion generators grow along.
#pragma once

#include <vector>

#include "collage/sdk/graph.h"

namespace collage {

// The immediate post-dominator of every node, computed over the DAG completed by a virtual
// sink with id graph.num_nodes(): every node producing a graph output, and every node whose
// outputs nobody reads, feeds the sink. Node p post-dominates n when every path from n to the
// sink passes through p; the immediate one is the nearest. Result[n] is a node id > n, or
// num_nodes() when only the sink post-dominates n.
std::vector<NodeId> ImmediatePostDominators(const Graph& graph);

// The distinct consumers of a node's outputs, plus the virtual sink (graph.num_nodes()) when
// an output is a graph output or the node has no consumer; ascending.
std::vector<NodeId> SuccessorsWithSink(const Graph& graph, NodeId node);

}  // namespace collage
