#include <random>

#include "cost/group_signature.h"
#include "cost/measurer.h"
#include "runtime/kernel_runner.h"
#include "collage/sdk/errors.h"

namespace collage {

std::shared_ptr<ExecutionContext> InProcessMeasurer::ContextFor(int threads) {
  std::shared_ptr<ExecutionContext>& context = contexts_[threads];
  if (context == nullptr) context = std::make_shared<ExecutionContext>(threads);
  return context;
}

StatusOr<CostRecord> InProcessMeasurer::Candidate(const Graph& graph, const SubGraph& nodes,
                                                  const std::string& backend_name,
                                                  const std::string& rule, Precision precision,
                                                  int threads, double tolerance,
                                                  const MeasureSettings& settings) {
  const Backend* backend = registry_.Find(backend_name);
  if (backend == nullptr) return NotFound("no backend named '{}'", backend_name);
  CompileRequest request = CompileRequest::For(graph, nodes, rule, ContextFor(threads));
  request.precision = precision;
  const std::string node_text = nodes.ToString();
  if (reference_.graph != &graph || reference_.nodes != node_text) {
    reference_ = ReferenceRun();
    reference_.graph = &graph;
    reference_.nodes = node_text;
    std::mt19937 rng(kInputSeed);
    reference_.inputs = RandomInputs(request, rng);
    auto outputs = RunReferenceGroup(request, reference_.inputs);
    reference_.status = outputs.status();
    if (outputs.ok()) reference_.outputs = std::move(*outputs);
  }
  if (!reference_.status.ok()) {
    CostRecord invalid;
    invalid.reason = "the reference kernels cannot run it: " + reference_.status.message();
    return invalid;
  }
  return MeasureCandidate(*backend, request, registry_, reference_.inputs, reference_.outputs,
                          tolerance, settings);
}

StatusOr<CostRecord> InProcessMeasurer::Conversion(const TensorType& type, const Layout& from,
                                                   const Layout& to, int /*threads*/,
                                                   const MeasureSettings& settings) {
  return MeasureConversion(type, from, to, registry_, settings);
}

}  // namespace collage
