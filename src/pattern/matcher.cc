#include "pattern/matcher.h"

#include <algorithm>

namespace collage {
namespace {

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// The name an Op pattern knows a node by: its op type, with the domain in front for ops of
// other domains ("com.microsoft::QLinearAdd"), as OpRegistry::OpTypes lists them.
std::string PatternName(const Node& node) {
  return IsDefaultDomain(node.domain) ? node.op_type : node.domain + "::" + node.op_type;
}

class Matcher {
 public:
  Matcher(const Graph& graph, Match* match) : graph_(graph), match_(match) {}

  bool MatchRoot(const Pattern& pattern, NodeId node) {
    const Pattern::Data& data = pattern.data();
    if (data.kind == Pattern::Kind::kAlt) {
      for (const Pattern& alternative : data.children) {
        Mark mark = Save();
        if (MatchRoot(alternative, node)) return PassesValuePredicates(data, RootValue(node));
        Restore(mark);
      }
      return false;
    }
    if (data.kind != Pattern::Kind::kOp) return false;
    return MatchOpNode(data, node, RootValue(node));
  }

 private:
  struct Mark {
    size_t op_nodes;
    size_t captures;
  };
  Mark Save() const { return {match_->op_nodes.size(), match_->captures.size()}; }
  void Restore(const Mark& mark) {
    match_->op_nodes.resize(mark.op_nodes);
    match_->captures.resize(mark.captures);
  }

  ValueId RootValue(NodeId node) const {
    const Node& n = graph_.node(node);
    return n.outputs.empty() ? kNoValue : n.outputs[0];
  }

  bool PassesValuePredicates(const Pattern::Data& data, ValueId value) const {
    if (data.value_predicates.empty()) return true;
    if (value == kNoValue) return false;
    return std::all_of(data.value_predicates.begin(), data.value_predicates.end(),
                       [&](const ValuePredicate& p) { return p(graph_, value); });
  }

  bool PassesNodePredicates(const Pattern::Data& data, NodeId node) const {
    if (data.node_predicates.empty()) return true;
    if (node < 0) return false;
    const Node& n = graph_.node(node);
    return std::all_of(data.node_predicates.begin(), data.node_predicates.end(),
                       [&](const NodePredicate& p) { return p(graph_, n); });
  }

  // `value` is the output of `node` the pattern stands for (kNoValue only for a root
  // without outputs).
  bool MatchOpNode(const Pattern::Data& data, NodeId node, ValueId value) {
    const Node& n = graph_.node(node);
    if (std::find(data.op_types.begin(), data.op_types.end(), PatternName(n)) ==
        data.op_types.end()) {
      return false;
    }
    if (!PassesNodePredicates(data, node) || !PassesValuePredicates(data, value)) return false;
    match_->op_nodes.push_back(node);
    if (!data.inputs_given) return true;
    if (n.inputs.size() > data.children.size()) return false;
    for (size_t i = 0; i < data.children.size(); ++i) {
      ValueId input = i < n.inputs.size() ? n.inputs[i] : kNoValue;
      if (!MatchValue(data.children[i], input)) return false;
    }
    return true;
  }

  bool MatchValue(const Pattern& pattern, ValueId value) {
    const Pattern::Data& data = pattern.data();
    switch (data.kind) {
      case Pattern::Kind::kOptional:
        if (value == kNoValue) {
          NumberAbsent(data.children[0]);
          return true;
        }
        return MatchValue(data.children[0], value) && PassesValuePredicates(data, value) &&
               PassesNodePredicates(data, graph_.value(value).producer);
      case Pattern::Kind::kAlt:
        if (value == kNoValue) return false;
        for (const Pattern& alternative : data.children) {
          Mark mark = Save();
          if (MatchValue(alternative, value)) {
            return PassesValuePredicates(data, value) &&
                   PassesNodePredicates(data, graph_.value(value).producer);
          }
          Restore(mark);
        }
        return false;
      case Pattern::Kind::kOp: {
        if (value == kNoValue) return false;
        NodeId producer = graph_.value(value).producer;
        return producer >= 0 && MatchOpNode(data, producer, value);
      }
      case Pattern::Kind::kConst:
        if (value == kNoValue || !graph_.value(value).is_constant()) return false;
        [[fallthrough]];
      case Pattern::Kind::kAny:
        if (value == kNoValue) return false;
        if (!PassesValuePredicates(data, value) ||
            !PassesNodePredicates(data, graph_.value(value).producer)) {
          return false;
        }
        match_->captures.push_back(value);
        return true;
    }
    return false;
  }

  // Numbers the patterns of an absent optional input (see matcher.h).
  void NumberAbsent(const Pattern& pattern) {
    const Pattern::Data& data = pattern.data();
    switch (data.kind) {
      case Pattern::Kind::kOp:
        match_->op_nodes.push_back(-1);
        if (data.inputs_given) {
          for (const Pattern& child : data.children) NumberAbsent(child);
        }
        return;
      case Pattern::Kind::kAny:
      case Pattern::Kind::kConst:
        match_->captures.push_back(kNoValue);
        return;
      case Pattern::Kind::kAlt:
      case Pattern::Kind::kOptional:
        NumberAbsent(data.children[0]);
        return;
    }
  }

  const Graph& graph_;
  Match* match_;
};

}  // namespace

bool MatchPatternAt(const Pattern& pattern, const Graph& graph, NodeId node, Match* match) {
  match->graph = &graph;
  match->root = node;
  match->op_nodes.clear();
  match->captures.clear();
  Matcher matcher(graph, match);
  return matcher.MatchRoot(pattern, node);
}

SubGraph MatchedNodes(const Match& match) {
  SubGraph nodes(match.graph->num_nodes());
  for (NodeId n : match.op_nodes) {
    if (n >= 0) nodes.Add(n);
  }
  return nodes;
}

bool InteriorValuesStayInside(const Graph& graph, const SubGraph& nodes, NodeId root) {
  const std::vector<ValueId>& graph_outputs = graph.outputs();
  for (NodeId n : nodes.Nodes()) {
    if (n == root) continue;
    for (ValueId out : graph.node(n).outputs) {
      if (out == kNoValue) continue;
      const std::vector<NodeId>& consumers = graph.value(out).consumers;
      if (std::any_of(consumers.begin(), consumers.end(),
                      [&](NodeId c) { return !nodes.Contains(c); })) {
        return false;
      }
      if (std::find(graph_outputs.begin(), graph_outputs.end(), out) != graph_outputs.end()) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace collage
