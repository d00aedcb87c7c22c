#include "pattern/post_dominators.h"

#include <algorithm>

namespace collage {

std::vector<NodeId> SuccessorsWithSink(const Graph& graph, NodeId node) {
  const NodeId sink = graph.num_nodes();
  const std::vector<ValueId>& graph_outputs = graph.outputs();
  std::vector<NodeId> successors;
  bool feeds_sink = false;
  for (ValueId out : graph.node(node).outputs) {
    if (out == kNoValue) continue;
    const std::vector<NodeId>& consumers = graph.value(out).consumers;
    successors.insert(successors.end(), consumers.begin(), consumers.end());
    if (std::find(graph_outputs.begin(), graph_outputs.end(), out) != graph_outputs.end()) {
      feeds_sink = true;
    }
  }
  if (successors.empty()) feeds_sink = true;
  if (feeds_sink) successors.push_back(sink);
  std::sort(successors.begin(), successors.end());
  successors.erase(std::unique(successors.begin(), successors.end()), successors.end());
  return successors;
}

std::vector<NodeId> ImmediatePostDominators(const Graph& graph) {
  // Nodes are topologically ordered and every post-dominator of n comes after n, so walking
  // backwards gives each successor's post-dominator chain before n needs it. The immediate
  // post-dominator of n is the nearest common ancestor of its successors in the
  // post-dominator tree (Cooper, Harvey and Kennedy's intersection, on topological ids).
  const NodeId sink = graph.num_nodes();
  std::vector<NodeId> ipdom(static_cast<size_t>(sink) + 1, sink);
  auto intersect = [&](NodeId a, NodeId b) {
    while (a != b) {
      while (a < b) a = ipdom[static_cast<size_t>(a)];
      while (b < a) b = ipdom[static_cast<size_t>(b)];
    }
    return a;
  };
  for (NodeId n = sink - 1; n >= 0; --n) {
    std::vector<NodeId> successors = SuccessorsWithSink(graph, n);
    NodeId common = successors.front();
    for (size_t i = 1; i < successors.size(); ++i) common = intersect(common, successors[i]);
    ipdom[static_cast<size_t>(n)] = common;
  }
  ipdom.pop_back();
  return ipdom;
}

}  // namespace collage
