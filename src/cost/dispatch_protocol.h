// The envelope between RayMeasurer (cost/ray_measurer.h) and its dispatcher,
// tools/ray/collage_ray_dispatch.py, over the dispatcher's stdin and stdout, in the worker
// protocol's frames and fields (cost/worker_protocol.h). The dispatcher measures many jobs
// at once on Ray nodes and answers in the order they finish, so every job carries an id;
// what a job asks and what it answers are the worker protocol's own payloads, passed
// through untouched (the dispatcher reads only the envelope).
//
//   dispatcher → parent, once at start:  'H' the hello of a worker on a matching node
//                                        (forwarded as it came), then 'N'
//   parent → dispatcher:  'J' u32 job, then a 'C' or 'V' payload (the rest of the frame)
//   dispatcher → parent:  'D' u32 job, then the relay's 'F' payload (the rest of the frame)
//                         'L' u32 job, text why: the job's Ray task was lost (its node
//                             died) more times than it is retried
//                         'N' u32 nodes: how many alive nodes offer the device's resource,
//                             at start and whenever it changes
//                         'X' text: the dispatcher cannot go on (no Ray, no matching node,
//                             the worker cannot start there); it exits after it
//
// The parent ends the dispatcher by closing its stdin.
#pragma once

#include <cstdint>
#include <string>

#include "collage/status.h"
#include "cost/cost_database.h"

namespace collage {

struct DispatchJob {
  uint32_t job = 0;
  std::string request;  // a 'C' or 'V' payload
};

struct DispatchJobDone {
  uint32_t job = 0;
  CostRecord record;
};

struct DispatchJobLost {
  uint32_t job = 0;
  std::string why;
};

std::string EncodeJob(uint32_t job, const std::string& request);
// `full_record`: an 'F' payload (EncodeFullRecord).
std::string EncodeJobDone(uint32_t job, const std::string& full_record);
std::string EncodeJobLost(uint32_t job, const std::string& why);
std::string EncodeNodes(uint32_t nodes);
std::string EncodeFatal(const std::string& why);

// Each fails (kInvalidArgument) on a payload of another kind, a truncated one or one with
// bytes left over; a job's nested request or record must be well formed too.
StatusOr<DispatchJob> DecodeJob(const std::string& payload);
StatusOr<DispatchJobDone> DecodeJobDone(const std::string& payload);
StatusOr<DispatchJobLost> DecodeJobLost(const std::string& payload);
StatusOr<uint32_t> DecodeNodes(const std::string& payload);
StatusOr<std::string> DecodeFatal(const std::string& payload);

}  // namespace collage
