#include "collage/sdk/subgraph.h"

#include <algorithm>
#include <bit>

namespace collage {

SubGraph::SubGraph(int32_t num_nodes)
    : num_nodes_(num_nodes), words_(static_cast<size_t>((num_nodes + 63) / 64), 0) {}

SubGraph::SubGraph(int32_t num_nodes, const std::vector<NodeId>& nodes) : SubGraph(num_nodes) {
  for (NodeId n : nodes) Add(n);
}

void SubGraph::Add(NodeId node) { words_[static_cast<size_t>(node) / 64] |= uint64_t{1} << (node % 64); }
void SubGraph::Remove(NodeId node) {
  words_[static_cast<size_t>(node) / 64] &= ~(uint64_t{1} << (node % 64));
}
bool SubGraph::Contains(NodeId node) const {
  if (node < 0 || node >= num_nodes_) return false;
  return (words_[static_cast<size_t>(node) / 64] >> (node % 64)) & 1;
}
bool SubGraph::empty() const {
  return std::all_of(words_.begin(), words_.end(), [](uint64_t w) { return w == 0; });
}
int32_t SubGraph::size() const {
  int32_t n = 0;
  for (uint64_t w : words_) n += std::popcount(w);
  return n;
}

std::vector<NodeId> SubGraph::Nodes() const {
  std::vector<NodeId> nodes;
  for (size_t w = 0; w < words_.size(); ++w) {
    uint64_t bits = words_[w];
    while (bits) {
      int b = std::countr_zero(bits);
      nodes.push_back(static_cast<NodeId>(w * 64 + static_cast<size_t>(b)));
      bits &= bits - 1;
    }
  }
  return nodes;
}

bool SubGraph::Overlaps(const SubGraph& other) const {
  size_t n = std::min(words_.size(), other.words_.size());
  for (size_t i = 0; i < n; ++i) {
    if (words_[i] & other.words_[i]) return true;
  }
  return false;
}

SubGraph SubGraph::Union(const SubGraph& other) const {
  SubGraph result(std::max(num_nodes_, other.num_nodes_));
  for (size_t i = 0; i < result.words_.size(); ++i) {
    uint64_t a = i < words_.size() ? words_[i] : 0;
    uint64_t b = i < other.words_.size() ? other.words_[i] : 0;
    result.words_[i] = a | b;
  }
  return result;
}

std::vector<ValueId> SubGraph::Inputs(const Graph& graph) const {
  std::vector<ValueId> inputs;
  for (NodeId n : Nodes()) {
    for (ValueId in : graph.node(n).inputs) {
      if (in == kNoValue || Contains(graph.value(in).producer)) continue;
      if (std::find(inputs.begin(), inputs.end(), in) == inputs.end()) inputs.push_back(in);
    }
  }
  return inputs;
}

std::vector<ValueId> SubGraph::Outputs(const Graph& graph) const {
  std::vector<ValueId> outputs;
  const std::vector<ValueId>& graph_outputs = graph.outputs();
  for (NodeId n : Nodes()) {
    for (ValueId out : graph.node(n).outputs) {
      if (out == kNoValue) continue;
      const Value& v = graph.value(out);
      bool used_outside = std::any_of(v.consumers.begin(), v.consumers.end(),
                                      [&](NodeId c) { return !Contains(c); });
      bool is_graph_output =
          std::find(graph_outputs.begin(), graph_outputs.end(), out) != graph_outputs.end();
      if (used_outside || is_graph_output) outputs.push_back(out);
    }
  }
  return outputs;
}

bool SubGraph::IsConvex(const Graph& graph) const {
  std::vector<NodeId> nodes = Nodes();
  if (nodes.size() <= 1) return true;
  // Nodes are topologically ordered, so a path that leaves and re-enters the set only passes
  // through non-members between the first and last member. Mark non-members reachable from
  // the set ("tainted"); a member fed by a tainted node closes such a path.
  const NodeId first = nodes.front();
  const NodeId last = nodes.back();
  std::vector<bool> tainted(static_cast<size_t>(last - first + 1), false);
  for (NodeId n = first; n <= last; ++n) {
    bool from_set_or_taint = false;
    bool from_taint = false;
    for (ValueId in : graph.node(n).inputs) {
      if (in == kNoValue) continue;
      NodeId p = graph.value(in).producer;
      if (p < first) continue;
      bool p_tainted = tainted[static_cast<size_t>(p - first)];
      from_taint = from_taint || p_tainted;
      from_set_or_taint = from_set_or_taint || p_tainted || Contains(p);
    }
    if (Contains(n)) {
      if (from_taint) return false;
    } else {
      tainted[static_cast<size_t>(n - first)] = from_set_or_taint;
    }
  }
  return true;
}

std::string SubGraph::ToString() const {
  std::string s = "{";
  for (NodeId n : Nodes()) {
    if (s.size() > 1) s += ',';
    s += std::to_string(n);
  }
  return s + "}";
}

}  // namespace collage
