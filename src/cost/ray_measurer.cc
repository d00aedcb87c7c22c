#include "cost/ray_measurer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <map>

#include "collage/printable_text.h"
#include "collage/sdk/errors.h"
#include "cost/dispatch_protocol.h"
#include "cost/worker_protocol.h"

namespace collage {
namespace {

using Clock = Subprocess::Clock;

// Beyond one measurement's limit, how long the dispatcher may be silent: connecting to Ray,
// waiting for a matching node (the dispatcher gives up after 30 s without one), starting a
// worker there, or noticing that a node died and sending its task again (Ray's health
// checks take about 15 s by default).
constexpr double kRaySlackSeconds = 120;
// What of the dispatcher's stderr (Ray's logs among it) goes into an error: its last words.
constexpr size_t kStderrBytes = 1500;
constexpr auto kExitGrace = std::chrono::milliseconds(3000);

Clock::time_point DeadlineAfter(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

Status Cancelled() { return Status(StatusCode::kCancelled, "interrupted while measuring on Ray"); }

}  // namespace

StatusOr<std::unique_ptr<RayMeasurer>> RayMeasurer::Start(RayOptions options) {
  std::unique_ptr<RayMeasurer> measurer(new RayMeasurer(std::move(options)));
  COLLAGE_RETURN_IF_ERROR(measurer->Launch());
  return measurer;
}

RayMeasurer::~RayMeasurer() {
  if (!dispatcher_) return;
  // End of input: the dispatcher disconnects from Ray, which ends its workers' tasks.
  dispatcher_->CloseStdin();
  dispatcher_->WaitForExit(kExitGrace);
}

Status RayMeasurer::Launch() {
  std::vector<std::string> args = {options_.dispatcher,
                                   "--address", options_.address,
                                   "--worker", options_.worker.executable,
                                   "--resource", options_.resource,
                                   "--device", options_.device,
                                   "--timeout", fmt::format("{:g}", options_.worker.timeout_seconds),
                                   "--parent-pid", std::to_string(::getpid())};
  for (const std::string& plugin : options_.worker.plugin_paths) {
    args.push_back("--plugin");
    args.push_back(plugin);
  }
  StatusOr<std::unique_ptr<Subprocess>> spawned = Subprocess::Spawn(options_.python, args);
  if (!spawned.ok()) {
    return Unsupported("cannot start the Ray dispatcher with {}: {}", options_.python,
                       spawned.status().message());
  }
  dispatcher_ = std::move(*spawned);
  dispatcher_->set_cancellation(options_.worker.cancel);
  const double patience = options_.worker.timeout_seconds + kRaySlackSeconds;
  COLLAGE_ASSIGN_OR_RETURN(std::string payload, NextFrame(patience, "connecting to Ray"));
  StatusOr<WorkerHello> hello = DecodeHello(payload);
  if (!hello.ok())
    return Stop(StatusCode::kUnsupported, "sent a malformed hello: " + hello.status().message());
  if (std::string why = HelloMismatch(*hello, options_.worker.backends); !why.empty()) {
    return Stop(StatusCode::kUnsupported,
                fmt::format("found that the measurement worker {} on the Ray nodes {}",
                            options_.worker.executable, why));
  }
  return Status();
}

Status RayMeasurer::Stop(StatusCode code, const std::string& why) {
  std::string how = "was not running";
  std::string tail;
  if (dispatcher_) {
    how = dispatcher_->WaitForExit(kExitGrace);
    tail = dispatcher_->stderr_tail();
    dispatcher_.reset();
  }
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  if (tail.size() > kStderrBytes) tail = "..." + tail.substr(tail.size() - kStderrBytes);
  std::string message = fmt::format("the Ray dispatcher ({} {}) {}; it {}", options_.python,
                                    options_.dispatcher, why, how);
  if (!tail.empty()) message += " (its stderr: " + PrintableText(tail) + ")";
  return Status(code, message);
}

StatusOr<std::string> RayMeasurer::NextFrame(double patience_s, const std::string& doing) {
  for (;;) {
    if (!dispatcher_) return Unsupported("the Ray dispatcher has been stopped");
    const auto deadline = DeadlineAfter(patience_s);
    std::string header, payload;
    Subprocess::Wait wait = dispatcher_->Read(4, &header, deadline);
    StatusOr<uint32_t> size = FrameLength(header);
    if (wait == Subprocess::Wait::kDone && size.ok()) wait = dispatcher_->Read(*size, &payload, deadline);
    switch (wait) {
      case Subprocess::Wait::kInterrupted: dispatcher_.reset(); return Cancelled();
      case Subprocess::Wait::kTimedOut:
        return Stop(StatusCode::kIoError,
                    fmt::format("said nothing for {:g} s while {}", patience_s, doing));
      case Subprocess::Wait::kClosed:
        return Stop(StatusCode::kIoError, fmt::format("ended while {}", doing));
      case Subprocess::Wait::kDone: break;
    }
    if (!size.ok()) return Stop(StatusCode::kIoError, "sent garbage: " + size.status().message());
    StatusOr<WorkerMessage> kind = PayloadKind(payload);
    if (!kind.ok()) return Stop(StatusCode::kIoError, "sent garbage: " + kind.status().message());
    if (*kind == WorkerMessage::kFatal) {
      StatusOr<std::string> why = DecodeFatal(payload);
      return Stop(StatusCode::kUnsupported,
                  why.ok() ? "gave up: " + *why : "sent garbage: " + why.status().message());
    }
    if (*kind != WorkerMessage::kNodes) return payload;
    StatusOr<uint32_t> nodes = DecodeNodes(payload);
    if (!nodes.ok()) return Stop(StatusCode::kIoError, "sent garbage: " + nodes.status().message());
    nodes_ = static_cast<int>(*nodes);
  }
}

Status RayMeasurer::Send(const std::string& payload) {
  if (!dispatcher_) return Unsupported("the Ray dispatcher has been stopped");
  const auto deadline = DeadlineAfter(options_.worker.timeout_seconds + kRaySlackSeconds);
  switch (dispatcher_->Write(FrameHeader(payload.size()) + payload, deadline)) {
    case Subprocess::Wait::kDone: return Status();
    case Subprocess::Wait::kInterrupted: dispatcher_.reset(); return Cancelled();
    case Subprocess::Wait::kTimedOut: return Stop(StatusCode::kIoError, "took no more jobs");
    case Subprocess::Wait::kClosed: break;
  }
  return Stop(StatusCode::kIoError, "ended while jobs were sent to it");
}

Status RayMeasurer::Measure(const std::vector<std::string>& requests,
                            const std::function<Status(size_t, CostRecord)>& on_done) {
  // Job ids grow for the life of the dispatcher, so that a late reply to a batch that was
  // abandoned (its on_done failed) is told apart from this batch's and dropped.
  std::map<uint32_t, size_t> outstanding;
  for (size_t i = 0; i < requests.size(); ++i) {
    const uint32_t job = next_job_++;
    COLLAGE_RETURN_IF_ERROR(Send(EncodeJob(job, requests[i])));
    outstanding[job] = i;
  }
  const double patience = options_.worker.timeout_seconds + kRaySlackSeconds;
  while (!outstanding.empty()) {
    COLLAGE_ASSIGN_OR_RETURN(
        std::string payload,
        NextFrame(patience, fmt::format("{} measurements were outstanding", outstanding.size())));
    uint32_t job = 0;
    CostRecord record;
    if (StatusOr<DispatchJobDone> done = DecodeJobDone(payload); done.ok()) {
      job = done->job;
      record = std::move(done->record);
    } else if (StatusOr<DispatchJobLost> lost = DecodeJobLost(payload); lost.ok()) {
      job = lost->job;
      // Nothing to do with the candidate: like a worker killed from outside, it is
      // measured once more before it is given up.
      record.reason = "the Ray task measuring it was lost (" + lost->why +
                      "), a failure from outside it: measured once more before it is given up";
      record.killed_from_outside = true;
    } else {
      return Stop(StatusCode::kIoError, "sent an unexpected message: " + done.status().message());
    }
    auto it = outstanding.find(job);
    if (it == outstanding.end()) continue;  // an abandoned batch's
    const size_t index = it->second;
    outstanding.erase(it);
    COLLAGE_RETURN_IF_ERROR(on_done(index, std::move(record)));
  }
  return Status();
}

Status RayMeasurer::CandidatesInBatch(const std::vector<CandidateJob>& jobs,
                                      const std::function<Status(size_t, CostRecord)>& on_done) {
  std::vector<std::string> requests;
  std::vector<size_t> sent;  // the job index of each request
  for (size_t i = 0; i < jobs.size(); ++i) {
    StatusOr<std::string> payload = CandidateRequestPayload(jobs[i]);
    if (!payload.ok()) {
      CostRecord record;
      record.reason = "cannot be sent to the measurement worker: " + payload.status().message();
      COLLAGE_RETURN_IF_ERROR(on_done(i, std::move(record)));
      continue;
    }
    requests.push_back(std::move(*payload));
    sent.push_back(i);
  }
  return Measure(requests, [&](size_t k, CostRecord record) { return on_done(sent[k], std::move(record)); });
}

StatusOr<CostRecord> RayMeasurer::Candidate(const Graph& graph, const SubGraph& nodes,
                                            const std::string& backend, const std::string& rule,
                                            Precision precision, int threads, double tolerance,
                                            const MeasureSettings& settings) {
  std::vector<CandidateJob> jobs = {
      CandidateJob{&graph, nodes, backend, rule, precision, threads, tolerance, settings}};
  CostRecord result;
  COLLAGE_RETURN_IF_ERROR(CandidatesInBatch(jobs, [&](size_t, CostRecord record) {
    result = std::move(record);
    return Status();
  }));
  return result;
}

StatusOr<CostRecord> RayMeasurer::Conversion(const TensorType& type, const Layout& from,
                                             const Layout& to, int threads,
                                             const MeasureSettings& settings) {
  CostRecord result;
  COLLAGE_RETURN_IF_ERROR(
      Measure({ConversionRequestPayload(type, from, to, threads, settings)},
              [&](size_t, CostRecord record) {
                result = std::move(record);
                return Status();
              }));
  return result;
}

}  // namespace collage
