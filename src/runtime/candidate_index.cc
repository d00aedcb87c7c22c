#include "runtime/candidate_index.h"

#include <algorithm>

#include "collage/native_backend.h"
#include "collage/sdk/errors.h"

namespace collage {

StatusOr<CandidateIndex> CandidateIndex::Build(const Graph& graph,
                                               const std::vector<std::string>& backends,
                                               const BackendRegistry& registry,
                                               bool strict_non_finite,
                                               const std::vector<Precision>& precisions) {
  std::vector<std::string> names = backends;
  if (std::find(names.begin(), names.end(), kNativeBackend) == names.end()) {
    names.insert(names.begin(), kNativeBackend);
  }
  CandidateIndex index;
  for (const std::string& name : names) {
    if (index.offers_.count(name)) continue;
    const Backend* backend = registry.Find(name);
    if (backend == nullptr) {
      std::string registered;
      for (const Backend* b : registry.backends())
        registered += (registered.empty() ? "" : ", ") + b->name();
      return NotFound("no backend named '{}' (registered: {})", name, registered);
    }
    index.backends_.push_back(backend);
    index.offers_[name] =
        EnumerateCandidates(graph, backend->rules(), strict_non_finite, precisions);
  }
  return index;
}

const std::vector<Candidate>& CandidateIndex::OffersOf(const std::string& backend) const {
  static const std::vector<Candidate> kNone;
  auto it = offers_.find(backend);
  return it == offers_.end() ? kNone : it->second;
}

std::vector<const Candidate*> CandidateIndex::Float32OffersOf(const std::string& backend) const {
  std::vector<const Candidate*> float32;
  for (const Candidate& c : OffersOf(backend)) {
    if (c.precision == Precision::kFloat32) float32.push_back(&c);
  }
  return float32;
}

StatusOr<Placement> PlaceOnSingleBackend(const Graph& graph, const Backend& backend,
                                         const CandidateIndex& index,
                                         const BackendRegistry& registry) {
  return PlaceOnSingleBackend(graph, backend, index.Float32OffersOf(backend.name()),
                              index.Float32OffersOf(kNativeBackend), registry);
}

}  // namespace collage
