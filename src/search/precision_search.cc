#include "search/precision_search.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "collage/native_backend.h"
#include "collage/sdk/errors.h"
#include "search/accuracy_check.h"

namespace collage {
namespace {

// Searches run at most: after this many, every group goes back to float32 (the last search).
// An engine's overlapping regions (its whole model and its spans) are excluded one at a time,
// a search each, before smaller groups get their turn; docs/precision.md has the case.
constexpr int kMaxSearches = 8;
// Reduced-precision groups of a plan beyond the tolerance are tried back in float32 in at most
// this many contiguous batches (in execution order), each one plan compiled and run on every
// input set; the batch whose return helps most stays float32 in the next search.
constexpr size_t kMaxBatches = 8;

// `placement` with the groups `batch` (indices) computed by the reference kernels, one node
// each (`alone`: their group of each node): float32, exactly as the reference computes them,
// whatever precision the group's own backend offers.
StatusOr<Placement> WithBatchInFloat32(const Placement& placement, const std::vector<size_t>& batch,
                                       const std::map<NodeId, Candidate>& alone) {
  Placement changed;
  size_t next = 0;
  for (size_t g = 0; g < placement.groups.size(); ++g) {
    if (next < batch.size() && batch[next] == g) {
      ++next;
      for (NodeId n : placement.groups[g].nodes.Nodes()) {
        auto it = alone.find(n);
        if (it == alone.end()) return Internal("the reference kernels offer no group of node {} alone", n);
        changed.groups.emplace_back(kNativeBackend, it->second);
      }
      continue;
    }
    changed.groups.push_back(placement.groups[g]);
  }
  return changed;
}

std::string Describe(const PlacedGroup& group) {
  return fmt::format("{} {} {} ({} nodes)", group.backend, group.rule,
                     PrecisionName(group.precision), group.nodes.size());
}

// Why a plan searched with reduced precision allowed is all float32.
std::string AllFloat32Reason(bool offered, bool reverted) {
  if (!offered) {
    return "no backend offers a reduced precision for this model on this CPU (bf16 needs "
           "AVX-512 BF16 or AMX)";
  }
  if (reverted)
    return "every plan with reduced-precision groups put the outputs beyond the tolerance";
  return "no reduced-precision group measured faster than float32";
}

}  // namespace

std::vector<Precision> PrecisionsFor(PrecisionChoice choice) {
  // auto: every reduced precision collage computes float models in; bf16 is the only one yet.
  if (choice == PrecisionChoice::kFloat32) return {Precision::kFloat32};
  return {Precision::kFloat32, Precision::kBfloat16};
}

StatusOr<ResultWithinTolerance> OptimizeWithinTolerance(const Graph& graph,
                                                        BackendRegistry& registry, int threads,
                                                        const OptimizeOptions& options,
                                                        const CandidateIndex& index) {
  if (!(options.tolerance > 0) || !std::isfinite(options.tolerance)) {
    return InvalidArgument("the tolerance must be a number above 0 (it is {})", options.tolerance);
  }
  COLLAGE_ASSIGN_OR_RETURN(AccuracyCheck check,
                           AccuracyCheck::Prepare(graph, registry, threads, options.accuracy_inputs,
                                                  options.accuracy_input_sets, index));
  // The reference kernels' group of each node alone: what a batch goes back to.
  std::map<NodeId, Candidate> alone;
  for (const Candidate* c : index.Float32OffersOf(kNativeBackend)) {
    if (c->nodes.size() == 1) alone.try_emplace(c->nodes.Nodes().front(), *c);
  }
  OptimizeReport::AccuracyCheck accuracy;
  accuracy.tolerance = options.tolerance;
  accuracy.input_sets = check.num_sets();

  PrecisionScope scope;
  scope.precisions = PrecisionsFor(options.precision);
  scope.float32_only.assign(static_cast<size_t>(graph.num_nodes()), false);
  bool offered = false;  // some backend offered a reduced precision (the first search says)

  for (int search = 1;; ++search) {
    COLLAGE_ASSIGN_OR_RETURN(OptimizeResult result,
                             SearchPlacement(graph, registry, threads, options, index, scope));
    accuracy.searches = search;
    if (search == 1) offered = result.report.reduced_candidates > 0;
    std::vector<size_t> reduced;
    for (size_t g = 0; g < result.placement.groups.size(); ++g) {
      if (result.placement.groups[g].precision != Precision::kFloat32) reduced.push_back(g);
    }
    StatusOr<double> error = check.ErrorOf(result.placement);
    if (reduced.empty()) {
      // Float32 throughout: held to the usual check, not the budget; its error is reported.
      COLLAGE_RETURN_IF_ERROR(error.status());
      accuracy.error = *error;
      accuracy.all_float32_because = AllFloat32Reason(offered, !accuracy.reverted.empty());
      return ResultWithinTolerance{std::move(result), std::move(accuracy)};
    }
    if (error.ok() && *error <= options.tolerance) {
      accuracy.error = *error;
      accuracy.reduced_groups = static_cast<int>(reduced.size());
      return ResultWithinTolerance{std::move(result), std::move(accuracy)};
    }
    if (search + 1 >= kMaxSearches) {
      // The last search: float32 everywhere.
      scope.float32_only.assign(scope.float32_only.size(), true);
      accuracy.reverted.push_back(
          fmt::format("after {} searches, every group (the last plan's error {:.3g})", search,
                      error.ok() ? *error : std::numeric_limits<double>::infinity()));
      continue;
    }
    // Which batch of reduced-precision groups, back in float32, brings the outputs closest
    // to the reference: those groups stay float32 in the next search.
    const size_t batches = std::min(kMaxBatches, reduced.size());
    size_t best_batch = 0;
    double best_error = std::numeric_limits<double>::infinity();
    std::vector<std::vector<size_t>> batch_groups(batches);
    for (size_t i = 0; i < reduced.size(); ++i)
      batch_groups[i * batches / reduced.size()].push_back(reduced[i]);
    for (size_t b = 0; b < batches; ++b) {
      COLLAGE_ASSIGN_OR_RETURN(Placement without,
                               WithBatchInFloat32(result.placement, batch_groups[b], alone));
      StatusOr<double> e = check.ErrorOf(without);
      const double value = e.ok() ? *e : std::numeric_limits<double>::infinity();
      if (b == 0 || value < best_error) {
        best_error = value;
        best_batch = b;
      }
    }
    for (size_t g : batch_groups[best_batch]) {
      const PlacedGroup& group = result.placement.groups[g];
      // A group of one node: that op's rounding is what strays, whoever computes it. A larger
      // group: that group alone goes; smaller reduced-precision groups over its nodes may
      // still keep the outputs within the tolerance.
      if (group.nodes.size() == 1) {
        scope.float32_only[static_cast<size_t>(group.nodes.Nodes().front())] = true;
      } else {
        scope.excluded.insert(GroupKey(group));
      }
      accuracy.reverted.push_back(
          fmt::format("{}: error {:.3g} with it, {:.3g} without", Describe(group),
                      error.ok() ? *error : std::numeric_limits<double>::infinity(), best_error));
    }
  }
}

}  // namespace collage
