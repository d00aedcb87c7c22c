#include "ir/output_judgement.h"

#include <algorithm>

#include "collage/normalized_error.h"
#include "ir/quantization_step.h"

namespace collage {

OutputJudgement JudgeOutput(const Graph& graph, ValueId value, const SubGraph* scope,
                            const Tensor& actual, const Tensor& reference, double tolerance) {
  OutputJudgement j;
  j.error = NormalizedError(actual, reference, &j.problem);
  j.steps_allowed = QuantizationTolerance(graph, value, scope);
  const double dynamic = DynamicQuantizationTolerance(graph, value, scope);
  j.quantized = j.steps_allowed > 0 || dynamic > 0;
  j.bound = std::max(tolerance, dynamic);
  j.within_steps = WithinQuantizationTolerance(actual, reference, j.steps_allowed);
  j.ok = j.error <= j.bound || j.within_steps;
  return j;
}

}  // namespace collage
