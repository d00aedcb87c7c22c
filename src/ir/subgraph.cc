#include "collage/sdk/subgraph.h"

#include <algorithm>
#include <bit>
#include <unordered_set>

namespace collage {

SubGraph::SubGraph(int32_t num_nodes) : num_nodes_(num_nodes) {}

SubGraph::SubGraph(int32_t num_nodes, const std::vector<NodeId>& nodes) : SubGraph(num_nodes) {
  for (NodeId n : nodes) Add(n);
}

void SubGraph::Reach(int32_t word) {
  if (words_.empty()) {
    first_word_ = word;
    words_.push_back(0);
  } else if (word < first_word_) {
    words_.insert(words_.begin(), static_cast<size_t>(first_word_ - word), 0);
    first_word_ = word;
  } else if (word >= first_word_ + static_cast<int32_t>(words_.size())) {
    words_.resize(static_cast<size_t>(word - first_word_ + 1), 0);
  }
}

void SubGraph::Trim() {
  size_t lead = 0;
  while (lead < words_.size() && words_[lead] == 0) ++lead;
  if (lead == words_.size()) {
    words_.clear();
    first_word_ = 0;
    return;
  }
  while (words_.back() == 0) words_.pop_back();
  words_.erase(words_.begin(), words_.begin() + static_cast<std::ptrdiff_t>(lead));
  first_word_ += static_cast<int32_t>(lead);
}

void SubGraph::Add(NodeId node) {
  Reach(node / 64);
  words_[static_cast<size_t>(node / 64 - first_word_)] |= uint64_t{1} << (node % 64);
}

void SubGraph::Remove(NodeId node) {
  if (!Contains(node)) return;
  words_[static_cast<size_t>(node / 64 - first_word_)] &= ~(uint64_t{1} << (node % 64));
  Trim();
}

void SubGraph::AddAll(const SubGraph& other) {
  num_nodes_ = std::max(num_nodes_, other.num_nodes_);
  if (other.words_.empty()) return;
  Reach(other.first_word_);
  Reach(other.first_word_ + static_cast<int32_t>(other.words_.size()) - 1);
  const size_t shift = static_cast<size_t>(other.first_word_ - first_word_);
  for (size_t i = 0; i < other.words_.size(); ++i) words_[shift + i] |= other.words_[i];
}

bool SubGraph::Contains(NodeId node) const {
  if (node < 0 || node >= num_nodes_) return false;
  const int32_t w = node / 64 - first_word_;
  if (w < 0 || w >= static_cast<int32_t>(words_.size())) return false;
  return (words_[static_cast<size_t>(w)] >> (node % 64)) & 1;
}

bool SubGraph::empty() const { return words_.empty(); }

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
      nodes.push_back(static_cast<NodeId>((static_cast<size_t>(first_word_) + w) * 64 +
                                          static_cast<size_t>(b)));
      bits &= bits - 1;
    }
  }
  return nodes;
}

bool SubGraph::Overlaps(const SubGraph& other) const {
  const int32_t begin = std::max(first_word_, other.first_word_);
  const int32_t end = std::min(first_word_ + static_cast<int32_t>(words_.size()),
                               other.first_word_ + static_cast<int32_t>(other.words_.size()));
  for (int32_t w = begin; w < end; ++w) {
    if (words_[static_cast<size_t>(w - first_word_)] &
        other.words_[static_cast<size_t>(w - other.first_word_)]) {
      return true;
    }
  }
  return false;
}

SubGraph SubGraph::Union(const SubGraph& other) const {
  SubGraph result = *this;
  result.AddAll(other);
  return result;
}

std::vector<ValueId> SubGraph::Inputs(const Graph& graph) const {
  std::vector<ValueId> inputs;
  // A scan of the list found so far is fastest for the few inputs of most groups; a set
  // takes over when there are many, so that a whole-model group stays linear.
  constexpr size_t kScanLimit = 32;
  std::unordered_set<ValueId> seen;
  for (NodeId n : Nodes()) {
    for (ValueId in : graph.node(n).inputs) {
      if (in == kNoValue || Contains(graph.value(in).producer)) continue;
      if (inputs.size() < kScanLimit) {
        if (std::find(inputs.begin(), inputs.end(), in) != inputs.end()) continue;
        inputs.push_back(in);
        if (inputs.size() == kScanLimit) seen.insert(inputs.begin(), inputs.end());
      } else if (seen.insert(in).second) {
        inputs.push_back(in);
      }
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

std::string SubGraph::Key() const {
  std::string key(reinterpret_cast<const char*>(&first_word_), sizeof(first_word_));
  key.append(reinterpret_cast<const char*>(words_.data()), words_.size() * sizeof(uint64_t));
  return key;
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
