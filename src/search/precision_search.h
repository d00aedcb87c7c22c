// Reduced precision within an accuracy budget (OptimizeOptions::precision and ::tolerance):
// the search places each group at the (backend, precision) it measured fastest; the plan it
// keeps is then checked end to end (search/accuracy_check.h), and while its outputs stray
// beyond the tolerance, the reduced-precision groups whose return to float32 helps most are
// kept in float32 and the search runs again. A plan beyond the tolerance is never returned.
#pragma once

#include "search/optimizer.h"

namespace collage {

// The precisions the searches may offer for `choice`, float32 first.
std::vector<Precision> PrecisionsFor(PrecisionChoice choice);

// The kept search's result and the accuracy check that kept it (the report's accuracy, which
// OptimizePlacement sets: the report has one writer).
struct ResultWithinTolerance {
  OptimizeResult kept;
  OptimizeReport::AccuracyCheck accuracy;
};

// `index`: the offers in every precision of PrecisionsFor(options.precision).
StatusOr<ResultWithinTolerance> OptimizeWithinTolerance(const Graph& graph,
                                                        BackendRegistry& registry, int threads,
                                                        const OptimizeOptions& options,
                                                        const CandidateIndex& index);

}  // namespace collage
