#include "search/accuracy_check.h"

#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "collage/native_backend.h"
#include "collage/normalized_error.h"
#include "collage/random_tensor.h"
#include "collage/sdk/errors.h"
#include "runtime/executable.h"

namespace collage {
namespace {

// Not the seed of the measurements' or the plan bench's inputs: the check runs on values the
// search did not see.
constexpr unsigned kAccuracySeed = 2024;

}  // namespace

StatusOr<std::vector<Tensor>> OrderedInputSet(const Graph& graph, const NamedInputSet& set,
                                              const std::string& which) {
  std::map<std::string, const Tensor*> by_name;
  for (const auto& [name, tensor] : set) {
    if (!by_name.emplace(name, &tensor).second) {
      return InvalidArgument("{} gives input '{}' twice", which, name);
    }
  }
  std::vector<Tensor> ordered;
  for (ValueId in : graph.inputs()) {
    const Value& value = graph.value(in);
    auto it = by_name.find(value.name);
    if (it == by_name.end()) return InvalidArgument("{} lacks input '{}'", which, value.name);
    const Tensor& given = *it->second;
    if (given.dtype() != value.type.dtype || given.shape() != value.type.shape) {
      return InvalidArgument("{}: input '{}' is {}[{}], the model takes {}", which, value.name,
                             DTypeName(given.dtype()), ShapeToString(given.shape()),
                             value.type.ToString());
    }
    ordered.push_back(given);
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    return InvalidArgument("{} names '{}', which is not an input of the model", which,
                           by_name.begin()->first);
  }
  return ordered;
}

StatusOr<AccuracyCheck> AccuracyCheck::Prepare(const Graph& graph, const BackendRegistry& registry,
                                               int threads, const std::vector<NamedInputSet>& sets,
                                               int random_sets) {
  COLLAGE_ASSIGN_OR_RETURN(CandidateIndex index, CandidateIndex::Build(graph, {}, registry, false,
                                                                       {Precision::kFloat32}));
  return Prepare(graph, registry, threads, sets, random_sets, index);
}

StatusOr<AccuracyCheck> AccuracyCheck::Prepare(const Graph& graph, const BackendRegistry& registry,
                                               int threads, const std::vector<NamedInputSet>& sets,
                                               int random_sets, const CandidateIndex& index) {
  AccuracyCheck check(graph, registry, threads);
  for (size_t s = 0; s < sets.size(); ++s) {
    COLLAGE_ASSIGN_OR_RETURN(std::vector<Tensor> ordered,
                             OrderedInputSet(graph, sets[s], fmt::format("input set {}", s + 1)));
    check.inputs_.push_back(std::move(ordered));
  }
  if (sets.empty()) {
    std::mt19937 rng(kAccuracySeed);
    for (int s = 0; s < std::max(1, random_sets); ++s) {
      std::vector<Tensor> drawn;
      for (ValueId in : graph.inputs()) {
        const TensorType& type = graph.value(in).type;
        drawn.push_back(RandomTensor(type.dtype, type.shape, rng));
      }
      check.inputs_.push_back(std::move(drawn));
    }
  }
  const Backend* native = registry.Find(kNativeBackend);
  if (native == nullptr) return NotFound("the native backend is not registered");
  COLLAGE_ASSIGN_OR_RETURN(Placement reference,
                           PlaceOnSingleBackend(graph, *native, index, registry));
  COLLAGE_ASSIGN_OR_RETURN(auto exe, Executable::Create(graph, reference, registry, threads));
  for (const std::vector<Tensor>& inputs : check.inputs_) {
    COLLAGE_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, exe->Run(inputs));
    check.reference_.push_back(std::move(outputs));
  }
  return check;
}

StatusOr<double> AccuracyCheck::ErrorOf(const Placement& placement) const {
  COLLAGE_ASSIGN_OR_RETURN(auto exe, Executable::Create(*graph_, placement, *registry_, threads_));
  double worst = 0;
  for (size_t s = 0; s < inputs_.size(); ++s) {
    COLLAGE_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, exe->Run(inputs_[s]));
    for (size_t o = 0; o < outputs.size(); ++o) {
      const double error = MagnitudeRelativeError(outputs[o], reference_[s][o]);
      // NaN compares false: an output that is not a number is the worst error there is.
      worst = std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(worst, error);
    }
  }
  return worst;
}

}  // namespace collage
