// The pattern matcher behind Rule: walks a Pattern from a root node up through its inputs.
#pragma once

#include "collage/sdk/graph.h"
#include "collage/sdk/subgraph.h"
#include "collage/sdk/pattern.h"

namespace collage {

// Matches `pattern` with `node` as the root (the root must be an Op pattern, or an Alt of
// them). Fills match->op_nodes and match->captures in pre-order; constraints, convexity and
// escaping values are the caller's business (Rule).
//
// Details the header leaves open:
// - Alt: alternatives are tried in order; the first that matches wins, and only its Op and
//   leaf patterns are numbered, at the Alt's position in pre-order.
// - Optional with the input absent: the inner pattern is numbered as if present (an Alt
//   counting as its first alternative), with -1 for each Op pattern and kNoValue for each
//   Any/Const, so the numbering of later patterns does not depend on the presence of the input.
// - An Op pattern matches a node of the default ONNX domain ("" or "ai.onnx") only.
// - Node predicates (If, WithAttr) on a non-Op pattern test the value's producer and fail for
//   a value without one (a graph input or a constant).
// - Value predicates test the matched value: for the root, its first output.
bool MatchPatternAt(const Pattern& pattern, const Graph& graph, NodeId node, Match* match);

// The op nodes of a match as a node set.
SubGraph MatchedNodes(const Match& match);

// True when no node of `nodes` other than `root` has an output read outside the set or
// returned by the graph.
bool InteriorValuesStayInside(const Graph& graph, const SubGraph& nodes, NodeId root);

}  // namespace collage
