#include "collage/sdk/rule.h"

#include <algorithm>
#include <set>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_registry.h"
#include "pattern/matcher.h"
#include "pattern/narrow_spans.h"
#include "pattern/post_dominators.h"

namespace collage {

// --- Rule --------------------------------------------------------------------------------

Rule::Rule(std::string name, Pattern pattern) : name_(std::move(name)), pattern_(std::move(pattern)) {}

Rule& Rule::Where(MatchConstraint constraint) {
  constraints_.push_back(std::move(constraint));
  return *this;
}

Rule& Rule::PropagatesNonFinite() {
  meets_non_finite_contract_ = true;
  return *this;
}

Rule& Rule::Compiles(RuleCompiler compiler) {
  compiler_ = std::move(compiler);
  return *this;
}

namespace {

// Each precision once, in the enum's order (float32 first); an empty list keeps float32.
std::vector<Precision> DistinctPrecisions(std::vector<Precision> precisions) {
  if (precisions.empty()) return {Precision::kFloat32};
  std::sort(precisions.begin(), precisions.end());
  precisions.erase(std::unique(precisions.begin(), precisions.end()), precisions.end());
  return precisions;
}

bool Listed(const std::vector<Precision>& list, Precision precision) {
  return std::find(list.begin(), list.end(), precision) != list.end();
}

}  // namespace

Rule& Rule::Precisions(std::vector<Precision> precisions) {
  precisions_ = DistinctPrecisions(std::move(precisions));
  return *this;
}

Rule& Rule::WhereIn(Precision precision, MatchConstraint constraint) {
  precision_constraints_.emplace_back(precision, std::move(constraint));
  return *this;
}

bool Rule::Computes(Precision precision) const { return Listed(precisions_, precision); }

bool Fusion::Computes(Precision precision) const { return Listed(precisions_, precision); }

bool Rule::OffersIn(const Match& match, Precision precision) const {
  if (!Computes(precision)) return false;
  return std::all_of(
      precision_constraints_.begin(), precision_constraints_.end(),
      [&](const auto& entry) { return entry.first != precision || entry.second(match); });
}

bool Rule::MatchAt(const Graph& graph, NodeId node, Match* match) const {
  if (!MatchPatternAt(pattern_, graph, node, match)) return false;
  return std::all_of(constraints_.begin(), constraints_.end(),
                     [&](const MatchConstraint& c) { return c(*match); });
}

std::vector<Match> Rule::FindAll(const Graph& graph) const {
  std::vector<Match> matches;
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    Match match;
    if (!MatchAt(graph, n, &match)) continue;
    SubGraph nodes = MatchedNodes(match);
    if (!InteriorValuesStayInside(graph, nodes, n) || !nodes.IsConvex(graph)) continue;
    matches.push_back(std::move(match));
  }
  return matches;
}

std::optional<Match> Rule::MatchGroup(const Graph& graph, const SubGraph& nodes) const {
  if (nodes.empty() || nodes.num_graph_nodes() != graph.num_nodes()) return std::nullopt;
  // Every other node of a match is an ancestor of its root, and nodes are in topological
  // order: the root can only be the group's last node.
  const NodeId root = nodes.Nodes().back();
  Match match;
  if (!MatchAt(graph, root, &match)) return std::nullopt;
  if (!(MatchedNodes(match) == nodes)) return std::nullopt;
  if (!InteriorValuesStayInside(graph, nodes, root) || !nodes.IsConvex(graph)) return std::nullopt;
  return match;
}

// --- Fusion ------------------------------------------------------------------------------

Fusion::Fusion(std::string name) : name_(std::move(name)) {}

Fusion& Fusion::Seed(std::vector<OpKind> kinds) {
  seed_kinds_ = std::move(kinds);
  return *this;
}
Fusion& Fusion::Grow(std::vector<OpKind> kinds) {
  grow_kinds_ = std::move(kinds);
  return *this;
}
Fusion& Fusion::MaxOps(int max_ops) {
  max_ops_ = max_ops;
  return *this;
}
Fusion& Fusion::MinOps(int min_ops) {
  min_ops_ = min_ops;
  return *this;
}
Fusion& Fusion::MaximalRegions() {
  maximal_regions_ = true;
  return *this;
}
Fusion& Fusion::NarrowSpans(int parts) {
  narrow_span_parts_ = parts;
  return *this;
}
Fusion& Fusion::Where(NodePredicate predicate) {
  predicates_.push_back(std::move(predicate));
  return *this;
}
Fusion& Fusion::PropagatesNonFinite() {
  meets_non_finite_contract_ = true;
  return *this;
}
Fusion& Fusion::Compiles(FusionCompiler compiler) {
  compiler_ = std::move(compiler);
  return *this;
}

Fusion& Fusion::Precisions(std::vector<Precision> precisions) {
  precisions_ = DistinctPrecisions(std::move(precisions));
  return *this;
}

namespace {

bool HasKind(const std::vector<OpKind>& kinds, const Node& node) {
  const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type);
  if (def == nullptr) return false;  // an op nobody knows the kind of is never fused
  return std::find(kinds.begin(), kinds.end(), def->kind) != kinds.end();
}

// Nodes lying on some path from a member of `group` to `target` (target > every member),
// excluding the members themselves, target included.
std::vector<NodeId> NodesBetween(const Graph& graph, const SubGraph& group, NodeId target) {
  const std::vector<NodeId> members = group.Nodes();
  const NodeId first = members.front();
  const size_t span = static_cast<size_t>(target - first + 1);
  std::vector<bool> from_group(span, false);
  for (NodeId n = first; n <= target; ++n) {
    if (group.Contains(n)) {
      from_group[static_cast<size_t>(n - first)] = true;
      continue;
    }
    for (ValueId in : graph.node(n).inputs) {
      if (in == kNoValue) continue;
      NodeId p = graph.value(in).producer;
      if (p >= first && from_group[static_cast<size_t>(p - first)]) {
        from_group[static_cast<size_t>(n - first)] = true;
        break;
      }
    }
  }
  std::vector<bool> to_target(span, false);
  to_target[span - 1] = true;
  std::vector<NodeId> between{target};
  for (NodeId n = target - 1; n >= first; --n) {
    bool reaches = false;
    for (ValueId out : graph.node(n).outputs) {
      if (out == kNoValue) continue;
      for (NodeId c : graph.value(out).consumers) {
        if (c <= target && to_target[static_cast<size_t>(c - first)]) reaches = true;
      }
    }
    to_target[static_cast<size_t>(n - first)] = reaches;
    if (reaches && from_group[static_cast<size_t>(n - first)] && !group.Contains(n)) {
      between.push_back(n);
    }
  }
  return between;
}

}  // namespace

// Maximal convex regions (Fusion::MaximalRegions), in one pass per region over the nodes in
// their (topological) order: a node outside the region that a path from the region reaches
// bars every node after it on that path, so each decision stays right when later nodes join.
bool Fusion::Joins(const Node& node) const {
  return HasKind(seed_kinds_, node) || HasKind(grow_kinds_, node);
}

std::vector<SubGraph> Fusion::GenerateMaximalRegions(const Graph& graph) const {
  const NodeId sink = graph.num_nodes();
  auto passes = [&](const Node& node) { return PassesWhere(graph, node); };
  std::vector<SubGraph> groups;
  SubGraph held(sink);  // nodes some region holds
  for (NodeId seed = 0; seed < sink; ++seed) {
    const Node& seed_node = graph.node(seed);
    if (held.Contains(seed) || !HasKind(seed_kinds_, seed_node) || !passes(seed_node)) continue;
    SubGraph region(sink, {seed});
    std::vector<bool> reached(static_cast<size_t>(sink), false);  // outside, reached from it
    for (NodeId n = seed + 1; n < sink; ++n) {
      bool from_region = false, barred = false;
      for (ValueId in : graph.node(n).inputs) {
        if (in == kNoValue) continue;
        const NodeId p = graph.value(in).producer;
        if (p < 0) continue;
        from_region = from_region || region.Contains(p);
        barred = barred || reached[static_cast<size_t>(p)];
      }
      const Node& node = graph.node(n);
      if (!barred && !held.Contains(n) && region.size() < max_ops_ && Joins(node) &&
          passes(node)) {
        region.Add(n);
      } else {
        reached[static_cast<size_t>(n)] = from_region || barred;
      }
    }
    if (region.size() < min_ops_) continue;
    held = held.Union(region);
    groups.push_back(std::move(region));
  }
  return groups;
}

std::vector<SubGraph> Fusion::GenerateNarrowSpans(const Graph& graph) const {
  std::vector<SubGraph> groups;
  for (const std::vector<NodeId>& span : NarrowPointSpans(graph, narrow_span_parts_)) {
    const int32_t size = static_cast<int32_t>(span.size());
    if (size < min_ops_ || size > max_ops_) continue;
    const bool passes = std::all_of(span.begin(), span.end(), [&](NodeId id) {
      const Node& node = graph.node(id);
      return Joins(node) && PassesWhere(graph, node);
    });
    if (passes) groups.emplace_back(graph.num_nodes(), span);
  }
  return groups;
}

std::vector<SubGraph> Fusion::Generate(const Graph& graph) const {
  if (maximal_regions_) return GenerateMaximalRegions(graph);
  if (narrow_span_parts_ > 0) return GenerateNarrowSpans(graph);
  const NodeId sink = graph.num_nodes();
  const std::vector<NodeId> ipdom = ImmediatePostDominators(graph);
  auto passes = [&](const Node& node) { return PassesWhere(graph, node); };
  std::vector<SubGraph> groups;
  std::set<std::vector<NodeId>> seen;
  auto emit = [&](const SubGraph& group) {
    if (group.size() < min_ops_ || !group.IsConvex(graph)) return;
    if (seen.insert(group.Nodes()).second) groups.push_back(group);
  };
  for (NodeId seed = 0; seed < sink; ++seed) {
    const Node& seed_node = graph.node(seed);
    if (!HasKind(seed_kinds_, seed_node) || !passes(seed_node)) continue;
    SubGraph group(sink, {seed});
    if (group.size() > max_ops_) continue;
    emit(group);
    for (NodeId tip = ipdom[static_cast<size_t>(seed)]; tip != sink;
         tip = ipdom[static_cast<size_t>(tip)]) {
      std::vector<NodeId> added = NodesBetween(graph, group, tip);
      if (group.size() + static_cast<int32_t>(added.size()) > max_ops_) break;
      bool allowed = std::all_of(added.begin(), added.end(), [&](NodeId n) {
        return HasKind(grow_kinds_, graph.node(n)) && passes(graph.node(n));
      });
      if (!allowed) break;
      for (NodeId n : added) group.Add(n);
      emit(group);
    }
  }
  return groups;
}

bool Fusion::Admits(const Graph& graph, const SubGraph& nodes) const {
  if (nodes.num_graph_nodes() != graph.num_nodes()) return false;
  if (nodes.size() < min_ops_ || nodes.size() > max_ops_) return false;
  for (NodeId id : nodes.Nodes()) {
    const Node& node = graph.node(id);
    if (!HasKind(seed_kinds_, node) && !HasKind(grow_kinds_, node)) return false;
    if (!PassesWhere(graph, node)) return false;
  }
  return true;
}

bool Fusion::PassesWhere(const Graph& graph, const Node& node) const {
  return std::all_of(predicates_.begin(), predicates_.end(),
                     [&](const NodePredicate& p) { return p(graph, node); });
}

// --- RuleSet -----------------------------------------------------------------------------

RuleSet& RuleSet::Add(Rule rule) {
  rules_.push_back(std::move(rule));
  return *this;
}

RuleSet& RuleSet::Add(Fusion fusion) {
  fusions_.push_back(std::move(fusion));
  return *this;
}

bool RuleSet::MeetsNonFiniteContract(const std::string& name) const {
  if (const Rule* rule = FindRule(name)) return rule->meets_non_finite_contract();
  if (const Fusion* fusion = FindFusion(name)) return fusion->meets_non_finite_contract();
  return false;
}

const Rule* RuleSet::FindRule(std::string_view name) const {
  for (const Rule& rule : rules_) {
    if (rule.name() == name) return &rule;
  }
  return nullptr;
}

const Fusion* RuleSet::FindFusion(std::string_view name) const {
  for (const Fusion& fusion : fusions_) {
    if (fusion.name() == name) return &fusion;
  }
  return nullptr;
}

Status RuleSet::CheckComplete() const {
  std::set<std::string> names;
  auto check = [&](const std::string& name, bool compiles) -> Status {
    if (!names.insert(name).second)
      return InvalidArgument("two rules or fusions are named '{}'", name);
    if (!compiles) return InvalidArgument("rule '{}' has no compile function (Compiles)", name);
    return Status();
  };
  for (const Rule& rule : rules_) {
    COLLAGE_RETURN_IF_ERROR(check(rule.name(), static_cast<bool>(rule.compiler())));
  }
  for (const Fusion& fusion : fusions_) {
    COLLAGE_RETURN_IF_ERROR(check(fusion.name(), static_cast<bool>(fusion.compiler())));
  }
  return Status();
}

std::vector<Candidate> EnumerateCandidates(const Graph& graph, const RuleSet& rules,
                                           bool strict_non_finite,
                                           const std::vector<Precision>& precisions) {
  std::vector<Candidate> candidates;
  // One candidate per group and precision that both the rule and the caller list.
  for (const Rule& rule : rules.rules()) {
    if (strict_non_finite && !rule.meets_non_finite_contract()) continue;
    std::set<std::vector<NodeId>> seen;
    for (const Match& match : rule.FindAll(graph)) {
      SubGraph nodes = MatchedNodes(match);
      if (!seen.insert(nodes.Nodes()).second) continue;
      for (Precision precision : rule.precisions()) {
        if (Listed(precisions, precision) && rule.OffersIn(match, precision)) {
          candidates.push_back({rule.name(), nodes, precision});
        }
      }
    }
  }
  for (const Fusion& fusion : rules.fusions()) {
    if (strict_non_finite && !fusion.meets_non_finite_contract()) continue;
    for (SubGraph& nodes : fusion.Generate(graph)) {
      for (Precision precision : fusion.precisions()) {
        if (Listed(precisions, precision)) candidates.push_back({fusion.name(), nodes, precision});
      }
    }
  }
  return candidates;
}

}  // namespace collage
