#include "search/placement_estimate.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace collage {

std::optional<double> EstimatePlacement(const Graph& graph, const Placement& placement,
                                        const std::vector<SearchCandidate>& candidates,
                                        const TransitionCost& transition,
                                        const LibrarySwitchCost& library_switch) {
  std::map<std::tuple<std::string, std::string, std::string>, const SearchCandidate*> by_group;
  for (const SearchCandidate& c : candidates)
    by_group[{c.backend, c.rule + "/" + PrecisionName(c.precision), c.nodes.ToString()}] = &c;
  struct Held {
    Layout home;
    std::vector<Layout> available;
  };
  std::map<ValueId, Held> values;
  for (ValueId in : graph.inputs()) values[in] = {Layout::Plain(), {Layout::Plain()}};
  auto read_in = [&](ValueId value, const Layout& layout) -> double {
    auto it = values.find(value);
    if (it == values.end()) return 0;  // not produced: ValidatePlacement's concern
    Held& held = it->second;
    if (std::find(held.available.begin(), held.available.end(), layout) != held.available.end())
      return 0;
    held.available.push_back(layout);
    return transition(value, held.home, layout);
  };
  double total = 0;
  const std::string* last_backend = nullptr;
  for (const PlacedGroup& group : placement.groups) {
    auto found = by_group.find(
        {group.backend, group.rule + "/" + PrecisionName(group.precision), group.nodes.ToString()});
    if (found == by_group.end()) return std::nullopt;
    const SearchCandidate& c = *found->second;
    total += c.cost_ms;
    if (last_backend != nullptr && *last_backend != c.backend && library_switch) {
      total += std::max(0.0, library_switch(*last_backend, c.backend));
    }
    last_backend = &c.backend;
    for (size_t i = 0; i < c.inputs.size(); ++i) total += read_in(c.inputs[i], c.input_layouts[i]);
    for (size_t i = 0; i < c.outputs.size(); ++i)
      values[c.outputs[i]] = {c.output_layouts[i], {c.output_layouts[i]}};
  }
  for (ValueId out : graph.outputs()) {
    if (!graph.value(out).is_constant()) total += read_in(out, Layout::Plain());
  }
  return total;
}

}  // namespace collage
