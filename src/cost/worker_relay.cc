#include "cost/worker_relay.h"

#include "cost/worker_protocol.h"

namespace collage {

Status RelayRequests(int requests, int replies, WorkerOptions options) {
  StatusOr<std::unique_ptr<WorkerMeasurer>> started = WorkerMeasurer::Start(std::move(options));
  if (!started.ok()) return started.status();
  WorkerMeasurer& measurer = **started;
  // The child's hello, not one of our own: the relay loads no backend, the child measures.
  COLLAGE_RETURN_IF_ERROR(WriteFrame(replies, EncodeHello(measurer.hello())));
  while (true) {
    StatusOr<std::string> request = ReadFrame(requests);
    if (!request.ok()) {
      if (request.status().code() == StatusCode::kNotFound) return Status();  // the parent is done
      return request.status();
    }
    // A request the child cannot read is answered by the child, as an invalid record.
    COLLAGE_ASSIGN_OR_RETURN(CostRecord record, measurer.Relay(*request));
    COLLAGE_RETURN_IF_ERROR(WriteFrame(replies, EncodeFullRecord(record)));
  }
}

}  // namespace collage
