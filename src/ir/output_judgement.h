// Whether an output computed by some placement agrees with the reference kernels' output: the
// one rule the candidates' measurement, the plans' check and the differential harness share.
// A float output is held to a normalized error (NormalizedError); a quantized one may instead
// land within its quantization steps (QuantizationTolerance); one computed from activations
// quantized at run time may differ by a fraction of its magnitude
// (DynamicQuantizationTolerance), which widens the float bound.
#pragma once

#include <string>

#include "collage/sdk/graph.h"
#include "collage/sdk/subgraph.h"
#include "collage/tensor.h"

namespace collage {

struct OutputJudgement {
  double error = 0;            // NormalizedError(actual, reference)
  double bound = 0;            // the error allowed: the tolerance, or the dynamic bound if wider
  double steps_allowed = 0;    // QuantizationTolerance, in the output's units; 0 when none
  bool within_steps = false;   // every element within steps_allowed
  bool quantized = false;      // the output has a quantization step or a dynamic bound
  bool ok = false;             // error <= bound, or within_steps
  std::string problem;         // why the error is infinite, when it is
};

// Judges output `value` of `graph` (computed by the nodes of `scope`, or the whole graph when
// null) against the reference's, with `tolerance` for float error.
OutputJudgement JudgeOutput(const Graph& graph, ValueId value, const SubGraph* scope,
                            const Tensor& actual, const Tensor& reference, double tolerance);

}  // namespace collage
