// What the cost model says a whole placement costs, added up exactly as the op-level search
// adds up the placement it finds: every group's measured cost, the layout conversions the
// executable inserts (once per value and layout, and to plain for the graph's outputs), and a
// library switch wherever a group's backend differs from the one before it. Lets any
// placement — a backend alone, a saved plan — be compared with its measured time.
#pragma once

#include <optional>
#include <vector>

#include "runtime/placement.h"
#include "cost/search_candidate.h"

namespace collage {

// nullopt when some group of `placement` is not among the priced `candidates` (a region the
// two-level search made is measured only within whole plans).
std::optional<double> EstimatePlacement(const Graph& graph, const Placement& placement,
                                        const std::vector<SearchCandidate>& candidates,
                                        const TransitionCost& transition,
                                        const LibrarySwitchCost& library_switch);

}  // namespace collage
