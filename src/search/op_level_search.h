// The op-level placement search (the paper's dynamic programming, DESIGN.md 1.5): the
// cheapest way to cover every node with candidate groups, each group paying its measured
// cost plus the layout conversions its inputs need.
//
// A state is the set of covered nodes plus, for every live value (computed, and still
// awaited by an uncovered node or returned by the graph), the layout its producer wrote and
// the layouts it has already been converted to — so a conversion is paid once per value and
// layout, as the executable runs it — and the backend of the last group run, so that a
// group of another backend pays the library switch (the executable runs the groups in the
// order found). From a
// state the search adds candidates containing the first uncovered node n (in topological order)
// whose inputs are computed and that overlap nothing covered; when some candidate containing n is
// still waiting for an input, it also adds the other ready candidates, so that groups such as a
// convolution fused with the Add of a later branch are reachable. Every transition grows the
// covered set, so states are settled level by level (by covered count): exact with an unbounded
// beam, and with a beam, each level keeps the states of lowest cost-so-far plus a lower bound of
// the rest.
#pragma once

#include <cstdint>
#include <vector>

#include "cost/search_candidate.h"

namespace collage {

struct OpLevelSearchOptions {
  // States kept per level; 0 keeps them all (exact, possibly slow on large graphs).
  int beam_width = 0;
};

struct OpLevelResult {
  std::vector<int> groups;  // candidate indices in an order the executable can run
  double cost_ms = 0;       // their costs plus every conversion, outputs to plain included
  int64_t states = 0;       // states settled
  int64_t states_cut = 0;   // states the beam dropped (0: the result is exact)
  int levels_cut = 0;       // levels where it dropped any
};

// `candidates` are the valid ones (invalid ones left out); they must cover every node.
// `library_switch` prices a group whose backend differs from the group's before it; without
// it, switching libraries is free.
StatusOr<OpLevelResult> SearchOpLevel(const Graph& graph,
                                      const std::vector<SearchCandidate>& candidates,
                                      const TransitionCost& transition,
                                      const LibrarySwitchCost& library_switch,
                                      const OpLevelSearchOptions& options);
StatusOr<OpLevelResult> SearchOpLevel(const Graph& graph,
                                      const std::vector<SearchCandidate>& candidates,
                                      const TransitionCost& transition,
                                      const OpLevelSearchOptions& options);

// The placement `found` stands for: its groups, from `candidates`, in its order.
Placement PlacementOf(const OpLevelResult& found, const std::vector<SearchCandidate>& candidates);

}  // namespace collage
