// SubGraph: a set of nodes of one Graph, stored as a bit set of node ids (no graph copy),
// with its boundary (inputs, outputs) derived from the graph. Placement candidates are
// SubGraphs; a candidate must be convex so that it can run as one kernel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/sdk/graph.h"

namespace collage {

class SubGraph {
 public:
  SubGraph() = default;
  // A set over a graph with `num_nodes` nodes.
  explicit SubGraph(int32_t num_nodes);
  SubGraph(int32_t num_nodes, const std::vector<NodeId>& nodes);

  void Add(NodeId node);
  void Remove(NodeId node);
  bool Contains(NodeId node) const;
  bool empty() const;
  int32_t size() const;  // number of member nodes
  int32_t num_graph_nodes() const { return num_nodes_; }
  std::vector<NodeId> Nodes() const;  // ascending (= topological) order

  bool Overlaps(const SubGraph& other) const;
  SubGraph Union(const SubGraph& other) const;
  bool operator==(const SubGraph& other) const = default;

  // Values read by member nodes that no member produces (constants included), in order of
  // first use.
  std::vector<ValueId> Inputs(const Graph& graph) const;
  // Values produced by members that a non-member reads or that are graph outputs.
  std::vector<ValueId> Outputs(const Graph& graph) const;
  // True when no path leaves the set and comes back into it: running the set as one unit
  // then cannot deadlock against the rest of the graph.
  bool IsConvex(const Graph& graph) const;

  std::string ToString() const;  // "{0,3,4}"
  // The bit set itself (bit n of word n / 64 for node n): a compact key for searches.
  const std::vector<uint64_t>& bits() const { return words_; }

 private:
  int32_t num_nodes_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace collage
