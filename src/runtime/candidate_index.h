// Every group each backend offers for one graph, enumerated once. An optimize reads every
// offer from it: the measured candidates, each backend's placement alone (a finalist, and a
// plan calibration runs), the reference placement on the native kernels, and the two-level
// search's regions and merges. Enumerating runs every rule's pattern and constraints over the
// whole graph, for every backend; a large model's optimize did so several times over before.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collage/precision.h"
#include "collage/sdk/backend.h"
#include "collage/sdk/rule.h"
#include "collage/status.h"
#include "runtime/placement.h"

namespace collage {

class CandidateIndex {
 public:
  // The offers of `backends` (native added first when missing; a name given twice counts
  // once) in `precisions` (float32 always among them). An unknown name is refused, listing
  // the registered ones. `strict_non_finite`: only rules meeting the NaN/Inf contract.
  static StatusOr<CandidateIndex> Build(const Graph& graph,
                                        const std::vector<std::string>& backends,
                                        const BackendRegistry& registry, bool strict_non_finite,
                                        const std::vector<Precision>& precisions);

  // The indexed backends, native first, then in the order given.
  const std::vector<const Backend*>& backends() const { return backends_; }
  // Every offer of `backend` in every precision (a group's float32 offer before its reduced
  // ones); empty for a backend not indexed.
  const std::vector<Candidate>& OffersOf(const std::string& backend) const;
  // The float32 offers alone, pointing into the index (no copies of their node sets).
  std::vector<const Candidate*> Float32OffersOf(const std::string& backend) const;

 private:
  std::vector<const Backend*> backends_;
  std::map<std::string, std::vector<Candidate>> offers_;
};

// PlaceOnSingleBackend (runtime/placement.h) over the index's float32 offers of `backend`
// (which the index must hold) and of native.
StatusOr<Placement> PlaceOnSingleBackend(const Graph& graph, const Backend& backend,
                                         const CandidateIndex& index,
                                         const BackendRegistry& registry);

}  // namespace collage
