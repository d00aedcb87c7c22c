#include "pattern/narrow_spans.h"

#include <algorithm>
#include <cstdlib>

namespace collage {

std::vector<int> ValuesLiveAcrossCuts(const Graph& graph) {
  const int n = graph.num_nodes();
  if (n < 2) return {};
  // A value computed by node p and last read by node q is live across the cuts p .. q-1:
  // +1 at p, -1 at q, summed.
  std::vector<int> delta(static_cast<size_t>(n), 0);
  for (NodeId p = 0; p < n; ++p) {
    for (ValueId out : graph.node(p).outputs) {
      if (out == kNoValue) continue;
      NodeId last = p;
      for (NodeId c : graph.value(out).consumers) last = std::max(last, c);
      if (last == p) continue;
      ++delta[static_cast<size_t>(p)];
      --delta[static_cast<size_t>(last)];
    }
  }
  std::vector<int> live(static_cast<size_t>(n - 1));
  int running = 0;
  for (NodeId i = 0; i + 1 < n; ++i) {
    running += delta[static_cast<size_t>(i)];
    live[static_cast<size_t>(i)] = running;
  }
  return live;
}

namespace {

// Cuts where no more values are live than at any cut within `window` either side: the
// narrow points of each stretch of the model, whatever it carries along throughout.
std::vector<bool> NarrowPoints(const std::vector<int>& live, int window) {
  const int cuts = static_cast<int>(live.size());
  std::vector<bool> narrow(live.size(), false);
  for (int i = 0; i < cuts; ++i) {
    const int from = std::max(0, i - window), to = std::min(cuts - 1, i + window);
    const int least = *std::min_element(live.begin() + from, live.begin() + to + 1);
    narrow[static_cast<size_t>(i)] = live[static_cast<size_t>(i)] == least;
  }
  return narrow;
}

}  // namespace

std::vector<std::vector<NodeId>> NarrowPointSpans(const Graph& graph, int parts) {
  const int n = graph.num_nodes();
  parts = std::min(parts, n / kMinSpanNodes);
  if (parts < 2) return {};
  const std::vector<int> live = ValuesLiveAcrossCuts(graph);
  const std::vector<bool> narrow = NarrowPoints(live, std::max(4, n / (4 * parts)));
  // The finest spans' ends: for each even share of the nodes, the narrow cut nearest to it
  // that leaves kMinSpanNodes on both sides.
  std::vector<NodeId> ends;  // last node of each finest span
  NodeId previous_end = -1;
  for (int k = 1; k < parts; ++k) {
    const NodeId target = static_cast<NodeId>(static_cast<int64_t>(k) * n / parts) - 1;
    NodeId best = -1;
    for (NodeId cut = previous_end + kMinSpanNodes; cut + kMinSpanNodes < n; ++cut) {
      if (!narrow[static_cast<size_t>(cut)]) continue;
      if (best < 0 || std::abs(cut - target) < std::abs(best - target)) best = cut;
      if (cut > target) break;  // later ones are farther
    }
    if (best < 0) break;
    ends.push_back(best);
    previous_end = best;
  }
  ends.push_back(n - 1);
  const int finest = static_cast<int>(ends.size());
  std::vector<std::vector<NodeId>> spans;
  for (int width = 1; width < finest; width *= 2) {
    for (int first = 0; first + width <= finest; first += width) {
      const NodeId begin = first == 0 ? 0 : ends[static_cast<size_t>(first - 1)] + 1;
      const NodeId end = ends[static_cast<size_t>(first + width - 1)];
      std::vector<NodeId> span;
      for (NodeId id = begin; id <= end; ++id) span.push_back(id);
      spans.push_back(std::move(span));
    }
  }
  return spans;
}

}  // namespace collage
