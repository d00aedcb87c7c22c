// Rules and fusion generators: how a backend declares which groups of nodes it can run.
//
//   Rule("conv_relu", Op("Relu")(Op("Conv")(Any(), Const(), Optional(Const()))))
//       .Where([](const Match& m) { return m.capture_type(0).shape.size() == 4; });
//   Fusion("elementwise_chain").Seed({OpKind::kElementwise}).Grow({OpKind::kElementwise})
//       .MaxOps(8);
//
// A Rule matches a fixed pattern. A Fusion is a generator (the paper's pattern generators,
// TVM's fusion-by-kind): from every seed node of an allowed kind it grows along the
// post-dominator path through nodes of the allowed kinds, emitting one candidate per size.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collage/sdk/graph.h"
#include "collage/sdk/op_kind.h"
#include "collage/sdk/subgraph.h"
#include "collage/sdk/pattern.h"

namespace collage {

using MatchConstraint = std::function<bool(const Match& match)>;

class Rule {
 public:
  Rule(std::string name, Pattern pattern);
  // Every constraint must hold for a match to count (they run after the pattern matched).
  Rule& Where(MatchConstraint constraint);
  // Declares that every group this rule offers meets the NaN/Inf contract (docs/backends.md):
  // NaN and infinities in, the reference kernels' NaN/Inf pattern out. Only declared rules run
  // under SessionOptions::strict_non_finite, and the harness (backend_ops
  // --nan-contract=enforce, part of `make test`) fails a declared rule that deviates. Declare
  // only what the harness measured; undeclared is the safe default.
  Rule& PropagatesNonFinite();

  const std::string& name() const { return name_; }
  bool meets_non_finite_contract() const { return meets_non_finite_contract_; }
  const Pattern& pattern() const { return pattern_; }
  // The pattern as text, e.g. "Relu(Conv(any, const, const?))" (constraints are code and are
  // shown as " where <n> constraints").
  std::string Describe() const;

  // Tries the pattern rooted at `node`.
  bool MatchAt(const Graph& graph, NodeId node, Match* match) const;
  // Every match in the graph, one per root node at most, in node order. A match is kept only
  // if its nodes form a convex set and no node other than the root has an output read
  // outside the match or returned by the graph (the group computes those values internally).
  std::vector<Match> FindAll(const Graph& graph) const;

 private:
  std::string name_;
  Pattern pattern_;
  std::vector<MatchConstraint> constraints_;
  bool meets_non_finite_contract_ = false;
};

class Fusion {
 public:
  explicit Fusion(std::string name);
  Fusion& Seed(std::vector<OpKind> kinds);  // kinds a group may start from
  Fusion& Grow(std::vector<OpKind> kinds);  // kinds it may grow through
  Fusion& MaxOps(int max_ops);              // largest group emitted (default 8)
  Fusion& MinOps(int min_ops);              // smallest group emitted (default 2)
  // Emits maximal regions instead of post-dominator chains, for engines that compile whole
  // regions: from the first node that passes and that no region holds yet, every later node
  // that passes joins (in node order, up to MaxOps) unless a path from the region reaches it
  // through a node outside, which would make the region non-convex. A fully supported graph
  // is one candidate; an unsupported node splits what depends on it into the next region.
  Fusion& MaximalRegions();
  // Every node in a group must pass (e.g. the backend supports this op and dtype).
  Fusion& Where(NodePredicate predicate);
  // As Rule::PropagatesNonFinite: every group generated meets the NaN/Inf contract.
  Fusion& PropagatesNonFinite();

  const std::string& name() const { return name_; }
  int max_ops() const { return max_ops_; }
  bool maximal_regions() const { return maximal_regions_; }
  bool meets_non_finite_contract() const { return meets_non_finite_contract_; }
  // e.g. "fusion: seed {elementwise} grow {elementwise, broadcast}, 2..8 ops"
  std::string Describe() const;

  // Every group generated in the graph, convex, of MinOps..MaxOps nodes, duplicates removed.
  std::vector<SubGraph> Generate(const Graph& graph) const;

 private:
  std::vector<SubGraph> GenerateMaximalRegions(const Graph& graph) const;

  std::string name_;
  std::vector<OpKind> seed_kinds_;
  std::vector<OpKind> grow_kinds_;
  int max_ops_ = 8;
  int min_ops_ = 2;
  bool maximal_regions_ = false;
  std::vector<NodePredicate> predicates_;
  bool meets_non_finite_contract_ = false;
};

class RuleSet {
 public:
  RuleSet& Add(Rule rule);
  RuleSet& Add(Fusion fusion);
  const std::vector<Rule>& rules() const { return rules_; }
  const std::vector<Fusion>& fusions() const { return fusions_; }
  size_t size() const { return rules_.size() + fusions_.size(); }
  // Whether the rule or fusion of this name declares PropagatesNonFinite (false for a name
  // the set does not have).
  bool MeetsNonFiniteContract(const std::string& name) const;

 private:
  std::vector<Rule> rules_;
  std::vector<Fusion> fusions_;
};

// A group of nodes one backend offers to run, and the rule or fusion that produced it: the
// first link of the group chain (docs/architecture.md, "One group, from offer to plan").
// PlacedGroup (runtime) adds the backend that runs it, SearchCandidate (cost) its boundary,
// layouts and cost.
struct Candidate {
  std::string rule;
  SubGraph nodes;
};

// Every candidate of a rule set on a graph: all rule matches and all fusion groups, in rule
// declaration order. Two rules offering the same node set both appear (they may compile it
// differently, e.g. in different layouts); one rule never offers the same set twice.
// `strict_non_finite`: only the rules and fusions that declare PropagatesNonFinite.
std::vector<Candidate> EnumerateCandidates(const Graph& graph, const RuleSet& rules,
                                           bool strict_non_finite = false);

}  // namespace collage
