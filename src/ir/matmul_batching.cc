#include "ir/matmul_batching.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collage/sdk/errors.h"

namespace collage {

namespace {

// A MatMul of the default domain whose second input is a constant 2-D weight [K, N] of the
// first input's dtype, the first input [..., K] of rank ≥ 1.
bool IsMatMulByConstantWeight(const Graph& g, const Node& n) {
  if (n.op_type != "MatMul" || !n.domain.empty() || n.inputs.size() != 2 || n.outputs.size() != 1 ||
      n.outputs[0] == kNoValue || n.inputs[0] == kNoValue || n.inputs[1] == kNoValue) {
    return false;
  }
  const Value& a = g.value(n.inputs[0]);
  const Value& b = g.value(n.inputs[1]);
  return b.is_constant() && b.type.shape.size() == 2 && !a.type.shape.empty() &&
         a.type.dtype == b.type.dtype && a.type.shape.back() == b.type.shape[0] &&
         b.type.shape[0] > 0 && b.type.shape[1] > 0;
}

// Rows of a product's input: every element of A [..., K] belongs to one row of K.
int64_t RowsOf(const Graph& g, const Node& matmul) {
  const TensorType& a = g.value(matmul.inputs[0]).type;
  return a.num_elements() / a.shape.back();
}

int64_t K(const Graph& g, const Node& matmul) { return g.value(matmul.inputs[1]).type.shape[0]; }
int64_t N(const Graph& g, const Node& matmul) { return g.value(matmul.inputs[1]).type.shape[1]; }

// [K, N_1] … [K, N_n] side by side: [K, ΣN].
Tensor ConcatColumns(const std::vector<const Tensor*>& parts) {
  const int64_t k = parts[0]->shape()[0];
  const size_t element = DTypeSize(parts[0]->dtype());
  int64_t total = 0;
  for (const Tensor* p : parts) total += p->shape()[1];
  Tensor out(parts[0]->dtype(), {k, total});
  auto* dst = static_cast<uint8_t*>(out.data());
  for (int64_t row = 0; row < k; ++row) {
    for (const Tensor* p : parts) {
      const size_t bytes = static_cast<size_t>(p->shape()[1]) * element;
      std::memcpy(dst, static_cast<const uint8_t*>(p->data()) + static_cast<size_t>(row) * bytes,
                  bytes);
      dst += bytes;
    }
  }
  return out;
}

// A new graph made of the old one's nodes less those replaced, plus the nodes that replace
// them, sorted topologically. The old values keep their ids (every one is added first, in
// order); new values get the ids after them.
class BatchRewrite {
 public:
  explicit BatchRewrite(const Graph& old) : old_(old), removed_(old.num_nodes(), false) {
    for (const Value& v : old.values()) {
      if (v.is_constant()) {
        next_.AddConstant(v.name, *v.constant);
      } else {
        next_.AddValue(v.name, v.type);
      }
    }
  }

  Graph& next() { return next_; }
  bool removed(NodeId id) const { return removed_[static_cast<size_t>(id)]; }
  void Remove(NodeId id) { removed_[static_cast<size_t>(id)] = true; }
  // `node` runs where the old node `at` ran, after the nodes added before it at that place.
  void Add(NodeId at, Node node) { added_.push_back({at, std::move(node)}); }

  // A Split of `value` along `axis` into `outputs`, written for the graph's opset (the sizes
  // an attribute before opset 13, an input from it).
  void AddSplit(NodeId at, const std::string& name, ValueId value, int64_t axis,
                const std::vector<int64_t>& sizes, std::vector<ValueId> outputs) {
    Node split;
    split.name = name;
    split.op_type = "Split";
    split.attributes.Set("axis", Attribute(axis));
    split.inputs = {value};
    if (old_.opset() < 13) {
      split.attributes.Set("split", Attribute(sizes));
    } else {
      split.inputs.push_back(next_.AddConstant(
          next_.UniqueName(name + ".sizes"),
          Tensor::FromVector<int64_t>({static_cast<int64_t>(sizes.size())}, sizes)));
    }
    split.outputs = std::move(outputs);
    Add(at, std::move(split));
  }

  // The graph, or nullopt when the nodes cannot be ordered. One stack never makes a cycle (its
  // products do not reach one another), but two stacks of one pass can wait on each other (a
  // member of each reads what a member of the other wrote): the pass is then dropped and the
  // graph left as it was.
  StatusOr<std::optional<Graph>> Finish() {
    struct Entry {
      NodeId at;
      int order;  // among the entries at one place: old node first, then the added ones
      const Node* node;
    };
    std::vector<Entry> entries;
    for (NodeId id = 0; id < old_.num_nodes(); ++id) {
      if (!removed(id)) entries.push_back({id, 0, &old_.node(id)});
    }
    for (size_t i = 0; i < added_.size(); ++i) {
      entries.push_back({added_[i].first, static_cast<int>(i) + 1, &added_[i].second});
    }
    // Kahn's algorithm, the ready entry with the earliest place first.
    std::vector<int> producer(static_cast<size_t>(next_.num_values()), -1);
    for (size_t e = 0; e < entries.size(); ++e) {
      for (ValueId out : entries[e].node->outputs) {
        if (out != kNoValue) producer[static_cast<size_t>(out)] = static_cast<int>(e);
      }
    }
    std::vector<int> pending(entries.size(), 0);
    std::vector<std::vector<int>> readers(entries.size());
    for (size_t e = 0; e < entries.size(); ++e) {
      std::vector<int> from;
      for (ValueId in : entries[e].node->inputs) {
        if (in != kNoValue && producer[static_cast<size_t>(in)] >= 0) {
          from.push_back(producer[static_cast<size_t>(in)]);
        }
      }
      std::sort(from.begin(), from.end());
      from.erase(std::unique(from.begin(), from.end()), from.end());
      pending[e] = static_cast<int>(from.size());
      for (int p : from) readers[static_cast<size_t>(p)].push_back(static_cast<int>(e));
    }
    using Key = std::tuple<NodeId, int, int>;
    std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
    for (size_t e = 0; e < entries.size(); ++e) {
      if (pending[e] == 0) ready.emplace(entries[e].at, entries[e].order, static_cast<int>(e));
    }
    size_t emitted = 0;
    while (!ready.empty()) {
      const int e = std::get<2>(ready.top());
      ready.pop();
      COLLAGE_RETURN_IF_ERROR(next_.AddNode(*entries[static_cast<size_t>(e)].node).status());
      ++emitted;
      for (int r : readers[static_cast<size_t>(e)]) {
        if (--pending[static_cast<size_t>(r)] == 0) {
          ready.emplace(entries[static_cast<size_t>(r)].at, entries[static_cast<size_t>(r)].order,
                        r);
        }
      }
    }
    if (emitted != entries.size()) return std::optional<Graph>();
    for (ValueId in : old_.inputs()) next_.AddInput(in);
    for (ValueId out : old_.outputs()) next_.AddOutput(out);
    next_.set_opset(old_.opset());
    next_.set_name(old_.name());
    next_.RemoveDeadCode();
    return std::optional<Graph>(std::move(next_));
  }

 private:
  const Graph& old_;
  Graph next_;
  std::vector<bool> removed_;
  std::vector<std::pair<NodeId, Node>> added_;
};

// Siblings: one input, several constant weights → one wider product and a Split.
int MergeSiblings(const Graph& g, BatchRewrite& rewrite) {
  // input → its products, in node order (the weights take the input's dtype).
  std::map<ValueId, std::vector<NodeId>> by_input;
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    if (IsMatMulByConstantWeight(g, n) && RowsOf(g, n) * 16 <= K(g, n)) {
      by_input[n.inputs[0]].push_back(id);
    }
  }
  // One concatenated weight per tuple of weights, shared by every product that uses the tuple
  // (a recurrent cell's steps apply the same maps to each step's state).
  std::map<std::vector<ValueId>, ValueId> merged_weights;
  int merged = 0;
  for (const auto& [input, members] : by_input) {
    if (members.size() < 2) continue;
    const Node& first = g.node(members[0]);
    std::vector<ValueId> weights;
    std::vector<const Tensor*> parts;
    std::vector<int64_t> widths;
    std::vector<ValueId> outputs;
    for (NodeId m : members) {
      const Node& n = g.node(m);
      weights.push_back(n.inputs[1]);
      parts.push_back(&*g.value(n.inputs[1]).constant);
      widths.push_back(N(g, n));
      outputs.push_back(n.outputs[0]);
      rewrite.Remove(m);
    }
    Graph& next = rewrite.next();
    auto [it, fresh] = merged_weights.emplace(weights, kNoValue);
    if (fresh) {
      it->second =
          next.AddConstant(next.UniqueName(first.name + ".merged_weight"), ConcatColumns(parts));
    }
    TensorType wide = g.value(first.outputs[0]).type;
    int64_t total = 0;
    for (int64_t w : widths) total += w;
    wide.shape.back() = total;
    const std::string name = next.UniqueName(first.name + ".merged");
    Node product = first;
    product.name = name;
    product.inputs = {input, it->second};
    product.outputs = {next.AddValue(name, wide)};
    const ValueId product_out = product.outputs[0];
    rewrite.Add(members[0], std::move(product));
    rewrite.AddSplit(members[0], name + ".split", product_out, -1, widths, std::move(outputs));
    merged += static_cast<int>(members.size());
  }
  return merged;
}

// Same leading dims (all but the last two) and dtype: the inputs can be joined along their rows.
bool RowsJoin(const Graph& g, const Node& a, const Node& b) {
  const TensorType& x = g.value(a.inputs[0]).type;
  const TensorType& y = g.value(b.inputs[0]).type;
  return x.dtype == y.dtype && x.shape.size() == y.shape.size() &&
         std::equal(x.shape.begin(), x.shape.end() - 2, y.shape.begin());
}

// Splits the products of `candidates` (ascending node ids) into sets that can each become one
// taller product: no member reaches another (their inputs join without a cycle) and their
// inputs join along rows. A product's depth is the number of candidates on the longest path
// that ends at it; products of one depth never reach each other, so one sweep over the nodes
// between the first and last candidate groups them all (linear in that span, where picking
// one set at a time would sweep it once per set).
std::vector<std::vector<NodeId>> IndependentSets(const Graph& g,
                                                 const std::vector<NodeId>& candidates) {
  const NodeId first = candidates.front();
  const NodeId last = candidates.back();
  // depth[j - first]: the most candidates on a path from the span's start to node j.
  std::vector<int32_t> depth(static_cast<size_t>(last - first + 1), 0);
  std::vector<std::vector<NodeId>> by_depth;
  size_t next_candidate = 0;
  for (NodeId j = first; j <= last; ++j) {
    int32_t d = 0;
    for (ValueId in : g.node(j).inputs) {
      const NodeId p = in == kNoValue ? -1 : g.value(in).producer;
      if (p >= first) d = std::max(d, depth[static_cast<size_t>(p - first)]);
    }
    if (candidates[next_candidate] == j) {
      ++next_candidate;
      ++d;
      if (by_depth.size() < static_cast<size_t>(d)) by_depth.resize(static_cast<size_t>(d));
      by_depth[static_cast<size_t>(d - 1)].push_back(j);
    }
    depth[static_cast<size_t>(j - first)] = d;
  }
  // Within a depth, products whose inputs join along rows (the first of each kind leads).
  std::vector<std::vector<NodeId>> sets;
  for (const std::vector<NodeId>& level : by_depth) {
    const size_t begin = sets.size();
    for (NodeId c : level) {
      auto joins = [&](const std::vector<NodeId>& set) {
        return RowsJoin(g, g.node(set.front()), g.node(c));
      };
      auto it = std::find_if(sets.begin() + static_cast<std::ptrdiff_t>(begin), sets.end(), joins);
      if (it == sets.end()) {
        sets.push_back({c});
      } else {
        it->push_back(c);
      }
    }
  }
  return sets;
}

// Stacking pays when the weight reads it saves are at least four times the bytes its Concat
// and Split move: (n - 1)·K·N ≥ 4 · 2·rows·(K + N).
bool StackingPays(const Graph& g, const std::vector<NodeId>& members) {
  const Node& first = g.node(members[0]);
  int64_t rows = 0;
  for (NodeId m : members) rows += RowsOf(g, g.node(m));
  const double saved = static_cast<double>(members.size() - 1) * static_cast<double>(K(g, first)) *
                       static_cast<double>(N(g, first));
  const double copied =
      2.0 * static_cast<double>(rows) * static_cast<double>(K(g, first) + N(g, first));
  return saved >= 4.0 * copied;
}

// Shared weights: one constant weight, several independent inputs → one taller product.
int StackSharedWeights(const Graph& g, BatchRewrite& rewrite) {
  std::map<ValueId, std::vector<NodeId>> by_weight;
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    if (IsMatMulByConstantWeight(g, n) && g.value(n.inputs[0]).type.shape.size() >= 2) {
      by_weight[n.inputs[1]].push_back(id);
    }
  }
  // One join per tuple of inputs, shared by the products of every weight that reads the tuple.
  std::map<std::vector<ValueId>, ValueId> joins;
  int stacked = 0;
  for (const auto& [weight, candidates] : by_weight) {
    if (candidates.size() < 2) continue;
    for (const std::vector<NodeId>& members : IndependentSets(g, candidates)) {
      if (members.size() < 2 || !StackingPays(g, members)) continue;
      const Node& first = g.node(members[0]);
      std::vector<ValueId> inputs;
      std::vector<int64_t> heights;
      std::vector<ValueId> outputs;
      int64_t total = 0;
      for (NodeId m : members) {
        const Node& n = g.node(m);
        inputs.push_back(n.inputs[0]);
        const int64_t height = *(g.value(n.inputs[0]).type.shape.end() - 2);
        heights.push_back(height);
        total += height;
        outputs.push_back(n.outputs[0]);
        rewrite.Remove(m);
      }
      Graph& next = rewrite.next();
      auto [it, fresh] = joins.emplace(inputs, kNoValue);
      if (fresh) {
        TensorType joined = g.value(inputs[0]).type;
        *(joined.shape.end() - 2) = total;
        const std::string name = next.UniqueName(first.name + ".stacked_input");
        Node concat;
        concat.name = name;
        concat.op_type = "Concat";
        concat.attributes.Set("axis", static_cast<int64_t>(-2));
        concat.inputs = inputs;
        concat.outputs = {next.AddValue(name, joined)};
        it->second = concat.outputs[0];
        rewrite.Add(members[0], std::move(concat));
      }
      TensorType tall = g.value(first.outputs[0]).type;
      *(tall.shape.end() - 2) = total;
      const std::string name = next.UniqueName(first.name + ".stacked");
      Node product = first;
      product.name = name;
      product.inputs = {it->second, weight};
      product.outputs = {next.AddValue(name, tall)};
      const ValueId product_out = product.outputs[0];
      rewrite.Add(members[0], std::move(product));
      rewrite.AddSplit(members[0], name + ".split", product_out, -2, heights, std::move(outputs));
      stacked += static_cast<int>(members.size());
    }
  }
  return stacked;
}

// One pass of `rewrite_pass` over `graph`; the count it reports, 0 when nothing changed.
template <typename Pass>
StatusOr<int> RunPass(Graph& graph, Pass rewrite_pass) {
  BatchRewrite rewrite(graph);
  const int count = rewrite_pass(graph, rewrite);
  if (count == 0) return 0;
  COLLAGE_ASSIGN_OR_RETURN(std::optional<Graph> next, rewrite.Finish());
  if (!next) return 0;
  COLLAGE_RETURN_IF_ERROR(next->Validate());
  graph = std::move(*next);
  return count;
}

}  // namespace

StatusOr<MatMulBatchingStats> BatchSmallMatMuls(Graph& graph) {
  MatMulBatchingStats stats;
  // Each pass leaves fewer MatMuls than it found, so this ends; siblings first, so that each
  // step's merged product shares one concatenated weight the stacking then joins over steps.
  for (;;) {
    COLLAGE_ASSIGN_OR_RETURN(const int merged, RunPass(graph, MergeSiblings));
    COLLAGE_ASSIGN_OR_RETURN(const int stacked, RunPass(graph, StackSharedWeights));
    stats.siblings_merged += merged;
    stats.steps_stacked += stacked;
    if (merged == 0 && stacked == 0) return stats;
  }
}

}  // namespace collage
