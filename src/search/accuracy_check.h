// The end-to-end accuracy of a placement whose groups may compute in a reduced precision: its
// outputs on a few sets of inputs against the float32 reference kernels' (native alone) on
// the same inputs, as the normalized error max |a - b| / max |reference| of each output (the
// measure a user states a tolerance in: relative to the output's own magnitude).
#pragma once

#include <memory>
#include <vector>

#include "collage/optimize.h"
#include "collage/sdk/backend.h"
#include "runtime/candidate_index.h"
#include "runtime/placement.h"

namespace collage {

class AccuracyCheck {
 public:
  // Runs the reference kernels on every input set. `sets`: the user's, each naming every
  // graph input once with a tensor of its type (the error names what differs); empty:
  // `random_sets` sets drawn with a fixed seed (collage/random_tensor.h).
  static StatusOr<AccuracyCheck> Prepare(const Graph& graph, const BackendRegistry& registry,
                                         int threads, const std::vector<NamedInputSet>& sets,
                                         int random_sets);
  // The same, the reference kernels' groups taken from `index`.
  static StatusOr<AccuracyCheck> Prepare(const Graph& graph, const BackendRegistry& registry,
                                         int threads, const std::vector<NamedInputSet>& sets,
                                         int random_sets, const CandidateIndex& index);

  // The placement's largest error over its outputs and the input sets (infinite where an
  // output is NaN or infinite and the reference's is not); an error when it does not
  // compile or run.
  StatusOr<double> ErrorOf(const Placement& placement) const;

  int num_sets() const { return static_cast<int>(inputs_.size()); }

 private:
  AccuracyCheck(const Graph& graph, const BackendRegistry& registry, int threads)
      : graph_(&graph), registry_(&registry), threads_(threads) {}

  const Graph* graph_;
  const BackendRegistry* registry_;
  int threads_;
  std::vector<std::vector<Tensor>> inputs_;     // by set, in graph input order
  std::vector<std::vector<Tensor>> reference_;  // by set, in graph output order
};

// The graph inputs of one user-given set in graph order, each checked against its declared
// type; `which` names the set in errors ("input set 2").
StatusOr<std::vector<Tensor>> OrderedInputSet(const Graph& graph, const NamedInputSet& set,
                                              const std::string& which);

}  // namespace collage
