#include "cost/dispatch_protocol.h"

#include "cost/protocol_fields.h"
#include "cost/worker_protocol.h"

namespace collage {

using wire::Reader;
using wire::Writer;

std::string EncodeJob(uint32_t job, const std::string& request) {
  Writer w(WorkerMessage::kJob);
  w.U32(job);
  return w.Take() + request;
}

std::string EncodeJobDone(uint32_t job, const std::string& full_record) {
  Writer w(WorkerMessage::kJobDone);
  w.U32(job);
  return w.Take() + full_record;
}

std::string EncodeJobLost(uint32_t job, const std::string& why) {
  Writer w(WorkerMessage::kJobLost);
  w.U32(job);
  w.Text(why);
  return w.Take();
}

std::string EncodeNodes(uint32_t nodes) {
  Writer w(WorkerMessage::kNodes);
  w.U32(nodes);
  return w.Take();
}

std::string EncodeFatal(const std::string& why) {
  Writer w(WorkerMessage::kFatal);
  w.Text(why);
  return w.Take();
}

StatusOr<DispatchJob> DecodeJob(const std::string& payload) {
  Reader r(payload, WorkerMessage::kJob, "job");
  DispatchJob job;
  job.job = r.U32();
  job.request = r.Rest();
  COLLAGE_RETURN_IF_ERROR(r.Finish());
  COLLAGE_ASSIGN_OR_RETURN(WorkerMessage kind, PayloadKind(job.request));
  if (kind != WorkerMessage::kCandidate && kind != WorkerMessage::kConversion)
    return InvalidArgument("job {}: not a candidate or a conversion request", job.job);
  return job;
}

StatusOr<DispatchJobDone> DecodeJobDone(const std::string& payload) {
  Reader r(payload, WorkerMessage::kJobDone, "job done");
  DispatchJobDone done;
  done.job = r.U32();
  const std::string record = r.Rest();
  COLLAGE_RETURN_IF_ERROR(r.Finish());
  COLLAGE_ASSIGN_OR_RETURN(done.record, DecodeFullRecord(record));
  return done;
}

StatusOr<DispatchJobLost> DecodeJobLost(const std::string& payload) {
  Reader r(payload, WorkerMessage::kJobLost, "job lost");
  DispatchJobLost lost;
  lost.job = r.U32();
  lost.why = r.Text();
  COLLAGE_RETURN_IF_ERROR(r.Finish());
  return lost;
}

StatusOr<uint32_t> DecodeNodes(const std::string& payload) {
  Reader r(payload, WorkerMessage::kNodes, "nodes");
  const uint32_t nodes = r.U32();
  COLLAGE_RETURN_IF_ERROR(r.Finish());
  return nodes;
}

StatusOr<std::string> DecodeFatal(const std::string& payload) {
  Reader r(payload, WorkerMessage::kFatal, "fatal");
  std::string why = r.Text();
  COLLAGE_RETURN_IF_ERROR(r.Finish());
  return why;
}

}  // namespace collage
