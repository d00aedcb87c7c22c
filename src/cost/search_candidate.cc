#include "cost/search_candidate.h"

#include <algorithm>
#include <set>
#include <utility>

#include "collage/native_backend.h"
#include "collage/sdk/errors.h"

namespace collage {

SearchCandidate SearchCandidateOf(const Graph& graph, PlacedGroup group) {
  CompileRequest request = CompileRequest::For(graph, group.nodes, group.rule, 1);
  return {std::move(group), std::move(request.inputs), std::move(request.outputs), {}, {}, 0};
}

StatusOr<std::vector<SearchCandidate>> EnumerateSearchCandidates(
    const Graph& graph, const std::vector<std::string>& backends, const BackendRegistry& registry,
    bool strict_non_finite, const std::vector<Precision>& precisions) {
  std::vector<std::string> names = backends;
  if (std::find(names.begin(), names.end(), kNativeBackend) == names.end()) {
    names.insert(names.begin(), kNativeBackend);
  }
  std::vector<SearchCandidate> candidates;
  std::set<std::string> seen_backends;
  for (const std::string& name : names) {
    if (!seen_backends.insert(name).second) continue;
    const Backend* backend = registry.Find(name);
    if (backend == nullptr) {
      std::string registered;
      for (const Backend* b : registry.backends()) registered += (registered.empty() ? "" : ", ") + b->name();
      return NotFound("no backend named '{}' (registered: {})", name, registered);
    }
    for (Candidate& offered :
         EnumerateCandidates(graph, backend->rules(), strict_non_finite, precisions)) {
      candidates.push_back(SearchCandidateOf(graph, {name, std::move(offered)}));
    }
  }
  return candidates;
}

}  // namespace collage
