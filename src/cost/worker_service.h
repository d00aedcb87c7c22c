// The measurement worker's side of the protocol (cost/worker_protocol.h): what
// collage_measure_worker does with each request, in the library so that tests can drive it
// without a process. A candidate's group is imported as it arrived (no constant folding, no
// graph simplification, which would change the nodes), checked against the parent's
// GroupSignature, and measured by an InProcessMeasurer: the same random inputs (same seed),
// reference outputs and MeasureCandidate as in the parent.
#pragma once

#include <memory>
#include <string>

#include "cost/measurer.h"
#include "cost/worker_protocol.h"

namespace collage {

class MeasureWorkerService {
 public:
  explicit MeasureWorkerService(const BackendRegistry& registry)
      : registry_(registry), measurer_(registry) {}

  // This worker's protocol version and backends.
  WorkerHello Hello() const;
  // One request payload → its reply payload: always a record, invalid (with the reason) for
  // a request it cannot read, a group that does not import or arrived changed.
  std::string Answer(const std::string& payload);

  CostRecord AnswerCandidate(const CandidateRequest& request);
  CostRecord AnswerConversion(const ConversionRequest& request);

 private:
  const BackendRegistry& registry_;
  InProcessMeasurer measurer_;
  // The last group imported, kept while the same model comes again (the next backend's
  // offer of the same nodes), so that its reference run is reused.
  std::string model_;
  std::unique_ptr<Graph> graph_;
};

}  // namespace collage
