// SubGraph: a set of nodes of one Graph, stored as a bit set of node ids (no graph copy),
// with its boundary (inputs, outputs) derived from the graph. The bit set spans only the
// words from the first member to the last, so that a group of a few nodes costs a few words
// however large the graph (a 100,000-node model has 100,000 single-node candidates). Placement
// candidates are SubGraphs; a candidate must be convex so that it can run as one kernel.
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
  void AddAll(const SubGraph& other);  // in place: this = this ∪ other
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
  // A compact byte string that identifies the member set: a key for searches' hash maps.
  std::string Key() const;

 private:
  // Grows the window so that it holds word `word`.
  void Reach(int32_t word);
  // Drops zero words at both ends, so that equal sets have equal windows.
  void Trim();

  int32_t num_nodes_ = 0;
  // Bit b of words_[i] is node (first_word_ + i) * 64 + b. Empty when there are no members;
  // otherwise the first and last words are non-zero.
  int32_t first_word_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace collage
