// A placement: the model's nodes split into groups, each run by one backend through one of
// its rules. The executable runs the groups in order; the placement searches (op-level,
// graph-level) produce one, and so does "everything on one backend".
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "collage/sdk/backend.h"
#include "collage/sdk/rule.h"

namespace collage {

// A Candidate (rule + nodes) placed on a backend: adds the backend that runs it. What a
// Placement is made of, so what the executable compiles and runs; the searches return these
// and a plan file records them (PlanGroup). SearchCandidate (cost layer) builds on it.
struct PlacedGroup : Candidate {
  PlacedGroup() = default;
  // `offered` runs on `backend`, e.g. {"onednn", {"conv_relu", nodes}}.
  PlacedGroup(std::string backend, Candidate offered)
      : Candidate(std::move(offered)), backend(std::move(backend)) {}

  std::string backend;
};

struct Placement {
  std::vector<PlacedGroup> groups;  // in execution order
};

// Checks that the groups cover every node exactly once, each is convex, every backend is
// registered, and each group only reads values that earlier groups (or the graph inputs and
// constants) provide.
Status ValidatePlacement(const Graph& graph, const Placement& placement,
                         const BackendRegistry& registry);

// True when every non-constant input of `group` is a graph input or an output of a node in
// `covered`: the group can run once `covered` has run.
bool GroupInputsAvailable(const Graph& graph, const SubGraph& group, const SubGraph& covered);

// Puts every node on `backend` where one of its rules offers a group, and on native
// elsewhere: in topological order, each node not yet placed goes into the largest offered
// group containing it that overlaps nothing placed and can run at that point (ties go to the
// rule the backend declared first, so a backend lists its preferred variant first), unless a
// larger group of it waits for an input computed later, in which case it is placed when that
// group can run; a node no group of `backend` takes runs alone on native. `strict_non_finite`:
// only the backend's rules that meet the NaN/Inf contract offer groups.
StatusOr<Placement> PlaceOnSingleBackend(const Graph& graph, const Backend& backend,
                                         const BackendRegistry& registry,
                                         bool strict_non_finite = false);
// The same from groups already enumerated (runtime/candidate_index.h): `candidates` the
// backend's float32 offers, `native_candidates` native's.
StatusOr<Placement> PlaceOnSingleBackend(const Graph& graph, const Backend& backend,
                                         const std::vector<const Candidate*>& candidates,
                                         const std::vector<const Candidate*>& native_candidates,
                                         const BackendRegistry& registry);

// Fails, naming the first offending group and its rule, when a group runs a rule that does
// not declare the NaN/Inf contract (Rule::PropagatesNonFinite): what strict_non_finite
// sessions require of every placement they install.
Status CheckNonFiniteContract(const Graph& graph, const Placement& placement,
                              const BackendRegistry& registry);

// Nodes and groups per backend: "native: 1 nodes in 1 groups, onednn: 121 nodes in 60 groups".
std::string DescribePlacement(const Placement& placement);

}  // namespace collage
