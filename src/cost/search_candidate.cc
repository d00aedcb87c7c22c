#include "cost/search_candidate.h"

#include <utility>

#include "collage/sdk/errors.h"

namespace collage {

SearchCandidate SearchCandidateOf(const Graph& graph, PlacedGroup group) {
  CompileRequest request = CompileRequest::For(graph, group.nodes, group.rule, 1);
  return {std::move(group), std::move(request.inputs), std::move(request.outputs), {}, {}, 0};
}

StatusOr<std::vector<SearchCandidate>> EnumerateSearchCandidates(
    const Graph& graph, const std::vector<std::string>& backends, const BackendRegistry& registry,
    bool strict_non_finite, const std::vector<Precision>& precisions) {
  COLLAGE_ASSIGN_OR_RETURN(
      CandidateIndex index,
      CandidateIndex::Build(graph, backends, registry, strict_non_finite, precisions));
  return SearchCandidatesOf(graph, index);
}

std::vector<SearchCandidate> SearchCandidatesOf(const Graph& graph, const CandidateIndex& index) {
  std::vector<SearchCandidate> candidates;
  for (const Backend* backend : index.backends()) {
    for (const Candidate& offered : index.OffersOf(backend->name())) {
      candidates.push_back(SearchCandidateOf(graph, {backend->name(), offered}));
    }
  }
  return candidates;
}

}  // namespace collage
