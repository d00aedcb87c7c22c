#include "search/op_level_search.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <queue>
#include <unordered_map>

#include "collage/sdk/errors.h"

namespace collage {
namespace {

// Layouts are numbered per value; a value meets few (its producers' and consumers').
constexpr int kMaxLayoutsPerValue = 32;

struct LiveValue {
  ValueId value;
  uint8_t home;        // the layout its producer wrote
  uint32_t available;  // layouts it exists in (bit per layout number), home included
};

// No group has run yet: the first group switches from no library.
constexpr uint8_t kNoLibrary = 255;

struct State {
  SubGraph covered;
  std::vector<LiveValue> live;  // sorted by value
  uint8_t library = kNoLibrary;  // the backend of the last group run
  double cost = 0;              // cost so far
  double bound = 0;             // lower bound of the cost of the uncovered nodes
  int parent = -1;
  int candidate = -1;
};

class Search {
 public:
  Search(const Graph& graph, const std::vector<SearchCandidate>& candidates,
         const TransitionCost& transition, const LibrarySwitchCost& library_switch)
      : graph_(graph),
        candidates_(candidates),
        transition_(transition),
        library_switch_(library_switch) {}

  StatusOr<OpLevelResult> Run(const OpLevelSearchOptions& options) {
    COLLAGE_RETURN_IF_ERROR(Prepare());
    const int32_t n = graph_.num_nodes();
    levels_.assign(static_cast<size_t>(n) + 1, {});
    index_.assign(static_cast<size_t>(n) + 1, {});
    beam_width_ = options.beam_width;
    best_estimates_.assign(static_cast<size_t>(n) + 1, {});
    State start;
    start.covered = SubGraph(n);
    for (ValueId in : graph_.inputs()) {
      if (StillNeeded(in, start.covered)) start.live.push_back({in, LayoutNumber(in, Layout::Plain()), 0});
    }
    for (LiveValue& lv : start.live) lv.available = 1u << lv.home;
    std::sort(start.live.begin(), start.live.end(), [](auto& a, auto& b) { return a.value < b.value; });
    start.bound = total_bound_;
    Offer(std::move(start), 0);

    OpLevelResult result;
    for (int32_t level = 0; level < n; ++level) {
      std::vector<int>& ids = levels_[static_cast<size_t>(level)];
      if (options.beam_width > 0 && static_cast<int>(ids.size()) > options.beam_width) {
        std::nth_element(ids.begin(), ids.begin() + options.beam_width, ids.end(), [&](int a, int b) {
          return Estimate(a) < Estimate(b);
        });
        result.states_cut += static_cast<int64_t>(ids.size()) - options.beam_width;
        result.levels_cut += 1;
        ids.resize(static_cast<size_t>(options.beam_width));
      }
      result.states += static_cast<int64_t>(ids.size());
      index_[static_cast<size_t>(level)].clear();
      for (int id : ids) Expand(id);
      std::vector<int>().swap(ids);
    }
    double best = std::numeric_limits<double>::infinity();
    int best_state = -1;
    for (int id : levels_[static_cast<size_t>(n)]) {
      const double total = states_[static_cast<size_t>(id)].cost + OutputConversions(states_[static_cast<size_t>(id)]);
      if (total < best) {
        best = total;
        best_state = id;
      }
    }
    result.states += static_cast<int64_t>(levels_[static_cast<size_t>(n)].size());
    result.states_cut += skipped_;
    if (best_state < 0) return Internal("the op-level search found no complete placement");
    result.cost_ms = best;
    for (int id = best_state; states_[static_cast<size_t>(id)].parent >= 0; id = states_[static_cast<size_t>(id)].parent) {
      result.groups.push_back(states_[static_cast<size_t>(id)].candidate);
    }
    std::reverse(result.groups.begin(), result.groups.end());
    return result;
  }

 private:
  struct Port {
    ValueId value;
    uint8_t layout;
  };

  Status Prepare() {
    const int32_t n = graph_.num_nodes();
    layouts_.assign(static_cast<size_t>(graph_.num_values()), {});
    transitions_.assign(static_cast<size_t>(graph_.num_values()), {});
    containing_.assign(static_cast<size_t>(n), {});
    starting_at_.assign(static_cast<size_t>(n), {});
    std::vector<double> node_bound(static_cast<size_t>(n), std::numeric_limits<double>::infinity());
    is_output_.assign(static_cast<size_t>(graph_.num_values()), false);
    for (ValueId out : graph_.outputs()) is_output_[static_cast<size_t>(out)] = true;
    libraries_.clear();
    for (size_t c = 0; c < candidates_.size(); ++c) {
      const SearchCandidate& cand = candidates_[c];
      auto library = std::find(libraries_.begin(), libraries_.end(), cand.backend);
      if (library == libraries_.end()) library = libraries_.insert(libraries_.end(), cand.backend);
      if (libraries_.size() >= kNoLibrary) return Unsupported("more than {} backends", kNoLibrary - 1);
      library_of_.push_back(static_cast<uint8_t>(library - libraries_.begin()));
      if (cand.input_layouts.size() != cand.inputs.size() || cand.output_layouts.size() != cand.outputs.size()) {
        return Internal("candidate {} ({} {}) has no layouts for its inputs or outputs", c, cand.backend,
                        cand.rule);
      }
      std::vector<Port> ins, outs;
      for (size_t i = 0; i < cand.inputs.size(); ++i) ins.push_back({cand.inputs[i], LayoutNumber(cand.inputs[i], cand.input_layouts[i])});
      for (size_t i = 0; i < cand.outputs.size(); ++i) outs.push_back({cand.outputs[i], LayoutNumber(cand.outputs[i], cand.output_layouts[i])});
      inputs_.push_back(std::move(ins));
      outputs_.push_back(std::move(outs));
      const std::vector<NodeId> members = cand.nodes.Nodes();
      if (!members.empty()) starting_at_[members.front()].push_back(static_cast<int>(c));
      for (NodeId node : members) {
        containing_[static_cast<size_t>(node)].push_back(static_cast<int>(c));
        node_bound[static_cast<size_t>(node)] =
            std::min(node_bound[static_cast<size_t>(node)], cand.cost_ms / static_cast<double>(members.size()));
      }
    }
    for (ValueId out : graph_.outputs()) {
      if (!graph_.value(out).is_constant()) LayoutNumber(out, Layout::Plain());
    }
    for (size_t v = 0; v < layouts_.size(); ++v) {
      if (layouts_[v].size() > kMaxLayoutsPerValue) {
        return Unsupported("value '{}' is offered in {} layouts; the search handles up to {}",
                           graph_.value(static_cast<ValueId>(v)).name, layouts_[v].size(), kMaxLayoutsPerValue);
      }
    }
    switch_ms_.assign(libraries_.size() * libraries_.size(), 0.0);
    for (size_t from = 0; from < libraries_.size(); ++from) {
      for (size_t to = 0; to < libraries_.size(); ++to) {
        if (from != to && library_switch_) {
          // Never negative: the lower bound of the rest assumes no edge lowers the cost.
          switch_ms_[from * libraries_.size() + to] =
              std::max(0.0, library_switch_(libraries_[from], libraries_[to]));
        }
      }
    }
    node_bound_ = node_bound;
    total_bound_ = 0;
    for (NodeId node = 0; node < n; ++node) {
      if (containing_[static_cast<size_t>(node)].empty()) {
        const Node& nd = graph_.node(node);
        return Unsupported("{} node '{}': no valid candidate runs it", nd.op_type, nd.name);
      }
      total_bound_ += node_bound[static_cast<size_t>(node)];
    }
    return Status();
  }

  uint8_t LayoutNumber(ValueId value, const Layout& layout) {
    std::vector<Layout>& known = layouts_[static_cast<size_t>(value)];
    for (size_t i = 0; i < known.size(); ++i) {
      if (known[i] == layout) return static_cast<uint8_t>(i);
    }
    known.push_back(layout);
    return static_cast<uint8_t>(std::min<size_t>(known.size() - 1, 255));
  }

  double Transition(ValueId value, uint8_t from, uint8_t to) {
    std::vector<double>& table = transitions_[static_cast<size_t>(value)];
    const size_t k = layouts_[static_cast<size_t>(value)].size();
    if (table.empty()) table.assign(k * k, -1.0);
    double& cost = table[from * k + to];
    if (cost < 0) {
      const std::vector<Layout>& known = layouts_[static_cast<size_t>(value)];
      cost = transition_(value, known[from], known[to]);
    }
    return cost;
  }

  bool StillNeeded(ValueId value, const SubGraph& covered) const {
    if (is_output_[static_cast<size_t>(value)]) return true;
    for (NodeId consumer : graph_.value(value).consumers) {
      if (!covered.Contains(consumer)) return true;
    }
    return false;
  }

  bool Ready(int c, const SubGraph& covered) const {
    for (const Port& in : inputs_[static_cast<size_t>(c)]) {
      const NodeId producer = graph_.value(in.value).producer;
      if (producer >= 0 && !covered.Contains(producer)) return false;
    }
    return true;
  }

  double Estimate(int id) const {
    const State& s = states_[static_cast<size_t>(id)];
    return s.cost + s.bound;
  }

  double OutputConversions(const State& s) {
    double cost = 0;
    for (const LiveValue& lv : s.live) {
      if (!is_output_[static_cast<size_t>(lv.value)]) continue;
      const uint8_t plain = LayoutNumber(lv.value, Layout::Plain());
      if (!(lv.available & (1u << plain))) cost += Transition(lv.value, lv.home, plain);
    }
    return cost;
  }

  void Expand(int id) {
    // A copy: Advance adds states, which may move the one being expanded.
    const SubGraph covered = states_[static_cast<size_t>(id)].covered;
    NodeId first = 0;
    while (covered.Contains(first)) ++first;
    bool some_waiting = false;
    for (int c : containing_[static_cast<size_t>(first)]) {
      if (candidates_[static_cast<size_t>(c)].nodes.Overlaps(covered)) continue;
      if (Ready(c, covered)) {
        Advance(id, c);
      } else {
        some_waiting = true;
      }
    }
    if (!some_waiting) return;
    // A group containing `first` waits for a value computed after it: other ready groups
    // may run before it. A ready group's lowest node has every producer covered (nodes are
    // in topological order, so none of its producers is inside the group): the groups to
    // try start at such frontier nodes, a handful in a graph of parallel branches, instead
    // of being all the candidates.
    for (NodeId node = first + 1; node < graph_.num_nodes(); ++node) {
      if (starting_at_[static_cast<size_t>(node)].empty() || covered.Contains(node) ||
          !ProducersCovered(node, covered)) {
        continue;
      }
      for (int c : starting_at_[static_cast<size_t>(node)]) {
        if (!candidates_[static_cast<size_t>(c)].nodes.Overlaps(covered) && Ready(c, covered)) Advance(id, c);
      }
    }
  }

  bool ProducersCovered(NodeId node, const SubGraph& covered) const {
    for (ValueId in : graph_.node(node).inputs) {
      if (in == kNoValue) continue;
      const NodeId producer = graph_.value(in).producer;
      if (producer >= 0 && !covered.Contains(producer)) return false;
    }
    return true;
  }

  void Advance(int from, int c) {
    const State& s = states_[static_cast<size_t>(from)];
    const SearchCandidate& cand = candidates_[static_cast<size_t>(c)];
    // Cost first, from the state's live values as they are: a state the beam would cut
    // anyway is never built (most of them are, in graphs of many parallel branches).
    double cost = s.cost + cand.cost_ms + LibrarySwitch(s.library, library_of_[static_cast<size_t>(c)]);
    for (const Port& in : inputs_[static_cast<size_t>(c)]) {
      const LiveValue* lv = FindLive(s.live, in.value);
      if (lv == nullptr) return;  // cannot happen for a ready group
      if (!(lv->available & (1u << in.layout))) cost += Transition(in.value, lv->home, in.layout);
    }
    double bound = s.bound;
    for (NodeId node : cand.nodes.Nodes()) bound -= node_bound_[static_cast<size_t>(node)];
    const int32_t level = s.covered.size() + cand.nodes.size();
    if (BeamWouldCut(level, cost + bound)) {
      ++skipped_;
      return;
    }
    State next;
    next.covered = s.covered.Union(cand.nodes);
    next.live = s.live;
    next.cost = cost;
    next.bound = bound;
    next.parent = from;
    next.candidate = c;
    next.library = library_of_[static_cast<size_t>(c)];
    for (const Port& in : inputs_[static_cast<size_t>(c)]) {
      auto it = std::lower_bound(next.live.begin(), next.live.end(), in.value,
                                 [](const LiveValue& lv, ValueId v) { return lv.value < v; });
      it->available |= 1u << in.layout;
    }
    for (const Port& out : outputs_[static_cast<size_t>(c)]) {
      LiveValue lv{out.value, out.layout, 1u << out.layout};
      auto it = std::lower_bound(next.live.begin(), next.live.end(), out.value,
                                 [](const LiveValue& a, ValueId v) { return a.value < v; });
      next.live.insert(it, lv);
    }
    std::erase_if(next.live, [&](const LiveValue& lv) { return !StillNeeded(lv.value, next.covered); });
    Offer(std::move(next), level);
  }

  double LibrarySwitch(uint8_t from, uint8_t to) const {
    if (from == kNoLibrary || from == to) return 0;
    return switch_ms_[from * libraries_.size() + to];
  }

  static const LiveValue* FindLive(const std::vector<LiveValue>& live, ValueId value) {
    auto it = std::lower_bound(live.begin(), live.end(), value,
                               [](const LiveValue& lv, ValueId v) { return lv.value < v; });
    return it == live.end() || it->value != value ? nullptr : &*it;
  }

  // True when `level` already holds beam-width distinct states estimated no worse than
  // `estimate`: the beam keeps those, so a state with this estimate is cut when the level
  // settles. (The estimates kept are those states had when offered; a cheaper duplicate
  // that replaced one only lowers the real figure, so the test never cuts a state the
  // beam would keep.)
  bool BeamWouldCut(int32_t level, double estimate) const {
    if (beam_width_ <= 0) return false;
    const auto& best = best_estimates_[static_cast<size_t>(level)];
    return static_cast<int>(best.size()) >= beam_width_ && estimate >= best.top();
  }

  void Offer(State state, int32_t level) {
    std::string key = state.covered.Key();
    key.push_back(static_cast<char>(state.library));
    for (const LiveValue& lv : state.live) {
      key.append(reinterpret_cast<const char*>(&lv.value), sizeof(lv.value));
      key.push_back(static_cast<char>(lv.home));
      key.append(reinterpret_cast<const char*>(&lv.available), sizeof(lv.available));
    }
    auto& index = index_[static_cast<size_t>(level)];
    auto found = index.find(key);
    if (found != index.end()) {
      State& existing = states_[static_cast<size_t>(found->second)];
      if (state.cost < existing.cost) existing = std::move(state);
      return;
    }
    if (beam_width_ > 0) {
      auto& best = best_estimates_[static_cast<size_t>(level)];
      best.push(state.cost + state.bound);
      if (static_cast<int>(best.size()) > beam_width_) best.pop();
    }
    states_.push_back(std::move(state));
    const int id = static_cast<int>(states_.size()) - 1;
    index.emplace(std::move(key), id);
    levels_[static_cast<size_t>(level)].push_back(id);
  }

  const Graph& graph_;
  const std::vector<SearchCandidate>& candidates_;
  const TransitionCost& transition_;
  const LibrarySwitchCost& library_switch_;
  std::vector<std::string> libraries_;              // backends met, numbered
  std::vector<uint8_t> library_of_;                 // per candidate
  std::vector<double> switch_ms_;                   // libraries × libraries
  std::vector<std::vector<Layout>> layouts_;        // per value: the layouts it meets
  std::vector<std::vector<double>> transitions_;    // per value: k×k costs, -1 = not asked yet
  std::vector<std::vector<Port>> inputs_, outputs_;  // per candidate
  std::vector<std::vector<int>> containing_;        // per node: candidates containing it
  std::vector<std::vector<int>> starting_at_;       // per node: candidates whose lowest node it is
  std::vector<double> node_bound_;                  // per node: cheapest cost per node
  double total_bound_ = 0;
  std::vector<bool> is_output_;
  std::vector<State> states_;
  std::vector<std::vector<int>> levels_;  // per covered count: state ids
  std::vector<std::unordered_map<std::string, int>> index_;
  int beam_width_ = 0;
  // Per level: the beam-width smallest estimates of its distinct states (a max-heap).
  std::vector<std::priority_queue<double>> best_estimates_;
  int64_t skipped_ = 0;  // states never built because the beam would cut them
};

}  // namespace

StatusOr<OpLevelResult> SearchOpLevel(const Graph& graph,
                                      const std::vector<SearchCandidate>& candidates,
                                      const TransitionCost& transition,
                                      const OpLevelSearchOptions& options) {
  return SearchOpLevel(graph, candidates, transition, LibrarySwitchCost(), options);
}

StatusOr<OpLevelResult> SearchOpLevel(const Graph& graph,
                                      const std::vector<SearchCandidate>& candidates,
                                      const TransitionCost& transition,
                                      const LibrarySwitchCost& library_switch,
                                      const OpLevelSearchOptions& options) {
  Search search(graph, candidates, transition, library_switch);
  return search.Run(options);
}

Placement PlacementOf(const OpLevelResult& found, const std::vector<SearchCandidate>& candidates) {
  Placement placement;
  for (int g : found.groups) placement.groups.push_back(candidates[static_cast<size_t>(g)]);
  return placement;
}

}  // namespace collage
