#include "cost/measurer.h"

namespace collage {

Status Measurer::CandidatesInBatch(const std::vector<CandidateJob>& jobs,
                                   const std::function<Status(size_t, CostRecord)>& on_done) {
  for (size_t i = 0; i < jobs.size(); ++i) {
    const CandidateJob& job = jobs[i];
    COLLAGE_ASSIGN_OR_RETURN(CostRecord record,
                             Candidate(*job.graph, job.nodes, job.backend, job.rule, job.precision,
                                       job.threads, job.tolerance, job.settings));
    COLLAGE_RETURN_IF_ERROR(on_done(i, std::move(record)));
  }
  return Status();
}

}  // namespace collage
