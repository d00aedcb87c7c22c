// Rules and fusion generators: how a backend declares which groups of nodes it can run.
//
//   Rule("conv_relu", Op("Relu")(Op("Conv")(Any(), Const(), Optional(Const()))))
//       .Where([](const Match& m) { return m.capture_type(0).shape.size() == 4; })
//       .Compiles(CompileConvRelu);  // (const CompileRequest&, const Match&)
//   Fusion("elementwise_chain").Seed({OpKind::kElementwise}).Grow({OpKind::kElementwise})
//       .MaxOps(8).Compiles(CompileChain);  // (const CompileRequest&)
//
// A Rule matches a fixed pattern. A Fusion is a generator (the paper's pattern generators,
// TVM's fusion-by-kind): from every seed node of an allowed kind it grows along the
// post-dominator path through nodes of the allowed kinds, emitting one candidate per size.
// Each carries the function that compiles what it offers, so that what a group means (which
// node is the convolution, which layout a variant runs in) is decided where the rule is
// written, never read back from the rule's name.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "collage/precision.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/op_kind.h"
#include "collage/sdk/pattern.h"
#include "collage/sdk/subgraph.h"

namespace collage {

// Defined in collage/sdk/kernel.h, a layer above the pattern language: a compile function is
// only stored here, and called by Backend::Compile.
class Kernel;
struct CompileRequest;

using MatchConstraint = std::function<bool(const Match& match)>;
// Compiles a group a rule offered, given the rule's match of it: match.op_nodes names each
// Op of the pattern (pre-order), match.captures each Any/Const leaf.
using RuleCompiler =
    std::function<StatusOr<std::unique_ptr<Kernel>>(const CompileRequest&, const Match&)>;
// Compiles a group a fusion generated (or a region the graph-level search merged from them).
using FusionCompiler = std::function<StatusOr<std::unique_ptr<Kernel>>(const CompileRequest&)>;

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
  // The function that compiles this rule's groups (required: registration refuses a rule
  // without one).
  Rule& Compiles(RuleCompiler compiler);
  // For a compile function that needs no match: it finds its nodes in the request by op
  // type, the group holding one node of each.
  template <typename Compile>
  requires std::is_invocable_v<const Compile&, const CompileRequest&> Rule& Compiles(
      Compile compile) {
    return Compiles(RuleCompiler(
        [compile](const CompileRequest& request, const Match&) { return compile(request); }));
  }

  // The precisions this rule's groups are offered in (collage/precision.h); default
  // float32 alone. Declare a reduced one only where the compile function computes it natively
  // on this CPU (the backend decides when it registers, from its library's own report): the
  // search then weighs both.
  Rule& Precisions(std::vector<Precision> precisions);
  // A constraint on the offers in `precision` only (a library that computes a shape in
  // float32 but not in bf16): the group is offered in the rule's other precisions still.
  Rule& WhereIn(Precision precision, MatchConstraint constraint);
  // Whether a match (of the pattern and every Where) is offered in `precision`: declared,
  // and every WhereIn of that precision holds.
  bool OffersIn(const Match& match, Precision precision) const;
  const std::string& name() const { return name_; }
  bool meets_non_finite_contract() const { return meets_non_finite_contract_; }
  const std::vector<Precision>& precisions() const { return precisions_; }
  // Whether `precision` is among precisions().
  bool Computes(Precision precision) const;
  const Pattern& pattern() const { return pattern_; }
  const RuleCompiler& compiler() const { return compiler_; }
  // The pattern as text, e.g. "Relu(Conv(any, const, const?))" (constraints are code and are
  // shown as " where <n> constraints").
  std::string Describe() const;

  // Tries the pattern rooted at `node`.
  bool MatchAt(const Graph& graph, NodeId node, Match* match) const;
  // Every match in the graph, one per root node at most, in node order. A match is kept only
  // if its nodes form a convex set and no node other than the root has an output read
  // outside the match or returned by the graph (the group computes those values internally).
  std::vector<Match> FindAll(const Graph& graph) const;
  // The match FindAll gives for exactly `nodes`, or none when this rule does not offer that
  // group (its pattern rooted at some member covers other nodes, or fails).
  std::optional<Match> MatchGroup(const Graph& graph, const SubGraph& nodes) const;

 private:
  std::string name_;
  Pattern pattern_;
  std::vector<MatchConstraint> constraints_;
  bool meets_non_finite_contract_ = false;
  std::vector<Precision> precisions_ = {Precision::kFloat32};
  std::vector<std::pair<Precision, MatchConstraint>> precision_constraints_;
  RuleCompiler compiler_;
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
  // Emits spans of the node order between the graph's narrow points instead (cuts where few
  // values are live: a block's or a layer's end): about `parts` spans of similar size, and
  // runs of 2, 4, ... of them, for engines whose regions between one node and the whole
  // model the op-level search should weigh. A span is kept when every node passes.
  Fusion& NarrowSpans(int parts);
  // Every node in a group must pass (e.g. the backend supports this op and dtype).
  Fusion& Where(NodePredicate predicate);
  // As Rule::PropagatesNonFinite: every group generated meets the NaN/Inf contract.
  Fusion& PropagatesNonFinite();
  // As Rule::Compiles.
  Fusion& Compiles(FusionCompiler compiler);
  // As Rule::Precisions.
  Fusion& Precisions(std::vector<Precision> precisions);
  const std::vector<Precision>& precisions() const { return precisions_; }
  bool Computes(Precision precision) const;

  const std::string& name() const { return name_; }
  int max_ops() const { return max_ops_; }
  bool maximal_regions() const { return maximal_regions_; }
  int narrow_span_parts() const { return narrow_span_parts_; }
  bool meets_non_finite_contract() const { return meets_non_finite_contract_; }
  const FusionCompiler& compiler() const { return compiler_; }
  // e.g. "fusion: seed {elementwise} grow {elementwise, broadcast}, 2..8 ops"
  std::string Describe() const;

  // Every group generated in the graph, convex, of MinOps..MaxOps nodes, duplicates removed.
  std::vector<SubGraph> Generate(const Graph& graph) const;
  // Whether this fusion may run `nodes`: MinOps..MaxOps nodes, each of a seed or grow kind
  // and passing every Where. Looser than Generate on purpose: the graph-level search merges
  // generated groups into larger regions (its placement checks convexity).
  bool Admits(const Graph& graph, const SubGraph& nodes) const;

 private:
  std::vector<SubGraph> GenerateMaximalRegions(const Graph& graph) const;
  std::vector<SubGraph> GenerateNarrowSpans(const Graph& graph) const;
  bool PassesWhere(const Graph& graph, const Node& node) const;  // every Where predicate
  bool Joins(const Node& node) const;  // of a seed or a grow kind

  std::string name_;
  std::vector<OpKind> seed_kinds_;
  std::vector<OpKind> grow_kinds_;
  int max_ops_ = 8;
  int min_ops_ = 2;
  bool maximal_regions_ = false;
  int narrow_span_parts_ = 0;  // 0: not NarrowSpans
  std::vector<NodePredicate> predicates_;
  bool meets_non_finite_contract_ = false;
  std::vector<Precision> precisions_ = {Precision::kFloat32};
  FusionCompiler compiler_;
};

class RuleSet {
 public:
  RuleSet& Add(Rule rule);
  RuleSet& Add(Fusion fusion);
  const std::vector<Rule>& rules() const { return rules_; }
  const std::vector<Fusion>& fusions() const { return fusions_; }
  size_t size() const { return rules_.size() + fusions_.size(); }
  // The rule / fusion of this name; null when the set has none.
  const Rule* FindRule(std::string_view name) const;
  const Fusion* FindFusion(std::string_view name) const;
  // Why the set cannot be registered: two entries of one name, or one without a compile
  // function (ok otherwise).
  Status CheckComplete() const;
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
  Precision precision = Precision::kFloat32;
};

// Every candidate of a rule set on a graph: all rule matches and all fusion groups, in rule
// declaration order. Two rules offering the same node set both appear (they may compile it
// differently, e.g. in different layouts); one rule never offers the same set twice.
// `strict_non_finite`: only the rules and fusions that declare PropagatesNonFinite. Every
// group is offered in each precision its rule declares that `precisions` lists (float32
// alone by default), float32 first.
std::vector<Candidate> EnumerateCandidates(const Graph& graph, const RuleSet& rules,
                                           bool strict_non_finite = false,
                                           const std::vector<Precision>& precisions = {
                                               Precision::kFloat32});

}  // namespace collage
