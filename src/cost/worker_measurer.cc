#include "cost/worker_measurer.h"

#include <dlfcn.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "collage/native_backend.h"
#include "collage/printable_text.h"
#include "collage/sdk/errors.h"
#include "collage/sdk/group_model.h"
#include "cost/group_signature.h"
#include "cost/worker_protocol.h"

namespace collage {
namespace {

using Clock = Subprocess::Clock;

// What of the worker's stderr goes into a record's reason: the end, where the last words are.
constexpr size_t kReasonStderrBytes = 600;
// How long a worker whose pipe closed gets to finish dying before it is killed.
constexpr auto kExitGrace = std::chrono::milliseconds(2000);

Clock::time_point DeadlineAfter(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

CostRecord Invalid(std::string reason) {
  CostRecord record;
  record.reason = std::move(reason);
  return record;
}

// Signals a kernel does not send itself by crashing: the out-of-memory killer's SIGKILL,
// another process's kill, a closed terminal's SIGHUP. A worker that dies of one was stopped
// from outside, which says little about the candidate.
bool SignalFromOutside(const std::string& how) {
  for (const char* name : {"SIGKILL", "SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT", "SIGPIPE"}) {
    if (how == std::string("died of ") + name) return true;
  }
  return false;
}

Status Cancelled() { return Status(StatusCode::kCancelled, "interrupted while measuring"); }

bool IsExecutable(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

// One frame's payload from the worker's stdout.
Subprocess::Wait ReadPayload(Subprocess& worker, Clock::time_point deadline, std::string* payload,
                             Status* malformed) {
  std::string header;
  Subprocess::Wait wait = worker.Read(4, &header, deadline);
  if (wait != Subprocess::Wait::kDone) return wait;
  StatusOr<uint32_t> size = FrameLength(header);
  if (!size.ok()) {
    *malformed = size.status();
    return Subprocess::Wait::kDone;
  }
  return worker.Read(*size, payload, deadline);
}

}  // namespace

std::string FindMeasureWorker(const std::string& configured, std::vector<std::string>* tried) {
  auto pick = [&](const std::string& path) {
    tried->push_back(path);
    return IsExecutable(path);
  };
  // An explicit choice is final: a wrong path is not silently replaced by another worker.
  if (!configured.empty()) return pick(configured) ? configured : "";
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::string beside = (self.parent_path() / "collage_measure_worker").string();
    if (pick(beside)) return beside;
  }
  // An application linking an installed libcollage.so: the worker is installed in the bin/
  // folder beside the library's lib/.
  Dl_info library{};
  if (dladdr(reinterpret_cast<void*>(&FindMeasureWorker), &library) != 0 && library.dli_fname) {
    const std::filesystem::path installed =
        std::filesystem::path(library.dli_fname).parent_path().parent_path() / "bin" /
        "collage_measure_worker";
    if (pick(installed.string())) return installed.string();
  }
#ifdef COLLAGE_MEASURE_WORKER_BUILD_PATH
  if (pick(COLLAGE_MEASURE_WORKER_BUILD_PATH)) return COLLAGE_MEASURE_WORKER_BUILD_PATH;
#endif
  return "";
}

Status CheckMeasureTimeout(double timeout_seconds) {
  if (!(timeout_seconds > 0) || timeout_seconds > kMaxMeasureTimeoutSeconds) {
    return InvalidArgument(
        "the measurement time-out must be above 0 s and at most {:g} s (a day), not {:g}",
        kMaxMeasureTimeoutSeconds, timeout_seconds);
  }
  return Status();
}

std::vector<std::pair<std::string, std::string>> WorkerBackends(
    const BackendRegistry& registry, const std::vector<std::string>& backends) {
  std::vector<std::pair<std::string, std::string>> wanted;
  std::vector<std::string> names = backends;
  names.push_back(kNativeBackend);  // always a candidate
  for (const std::string& name : names) {
    const Backend* backend = registry.Find(name);
    const bool listed = std::any_of(wanted.begin(), wanted.end(),
                                    [&](const auto& b) { return b.first == name; });
    if (backend != nullptr && !listed) wanted.emplace_back(name, backend->version());
  }
  return wanted;
}

StatusOr<std::unique_ptr<Measurer>> ChooseMeasurer(const std::string& configured,
                                                   double timeout_seconds,
                                                   const BackendRegistry& registry,
                                                   const std::vector<std::string>& backends,
                                                   std::vector<std::string>* warnings,
                                                   const CancellationToken& cancel) {
  COLLAGE_RETURN_IF_ERROR(CheckMeasureTimeout(timeout_seconds));
  std::vector<std::string> tried;
  const std::string worker = FindMeasureWorker(configured, &tried);
  const char* consequence =
      "candidates are measured in this process, where a library that crashes or hangs "
      "ends the optimize";
  if (worker.empty()) {
    warnings->push_back(fmt::format("no measurement worker found (looked for {}): {}",
                                    fmt::join(tried, ", "), consequence));
    return std::unique_ptr<Measurer>(new InProcessMeasurer(registry));
  }
  WorkerOptions options;
  options.executable = worker;
  options.plugin_paths = registry.plugin_paths();
  options.timeout_seconds = timeout_seconds;
  options.backends = WorkerBackends(registry, backends);
  options.cancel = cancel;
  StatusOr<std::unique_ptr<WorkerMeasurer>> started = WorkerMeasurer::Start(std::move(options));
  if (started.ok()) return std::unique_ptr<Measurer>(std::move(*started));
  if (started.status().code() == StatusCode::kCancelled) return started.status();
  warnings->push_back(fmt::format("{}: {}", started.status().message(), consequence));
  return std::unique_ptr<Measurer>(new InProcessMeasurer(registry));
}

std::string HelloMismatch(const WorkerHello& hello,
                          const std::vector<std::pair<std::string, std::string>>& backends) {
  if (hello.version != kWorkerProtocolVersion) {
    return fmt::format("speaks protocol version {}, this collage {} (another build of collage?)",
                       hello.version, kWorkerProtocolVersion);
  }
  for (const auto& wanted : backends) {
    // Not a structured binding: clang 14 cannot capture one in a lambda.
    const std::string& name = wanted.first;
    const std::string& version = wanted.second;
    auto it = std::find_if(hello.backends.begin(), hello.backends.end(),
                           [&](const auto& b) { return b.first == name; });
    if (it == hello.backends.end()) {
      return fmt::format(
          "has no backend '{}' (one registered in this process by code, not loaded from a "
          "plug-in, cannot be measured there)",
          name);
    }
    if (it->second != version)
      return fmt::format("has backend '{}' version '{}', this process '{}'", name, it->second, version);
  }
  return "";
}

StatusOr<std::string> CandidateRequestPayload(const CandidateJob& job) {
  CandidateRequest request;
  COLLAGE_ASSIGN_OR_RETURN(request.model, GroupModelBytes(*job.graph, job.nodes));
  request.signature = GroupSignature(*job.graph, job.nodes);
  request.backend = job.backend;
  request.rule = job.rule;
  request.precision = job.precision;
  request.threads = job.threads;
  request.tolerance = job.tolerance;
  request.settings = job.settings;
  return EncodeCandidate(request);
}

std::string ConversionRequestPayload(const TensorType& type, const Layout& from, const Layout& to,
                                     int threads, const MeasureSettings& settings) {
  ConversionRequest request;
  request.type = type.ToString();
  request.from = LayoutToText(from);
  request.to = LayoutToText(to);
  request.threads = threads;
  request.settings = settings;
  return EncodeConversion(request);
}

StatusOr<std::unique_ptr<WorkerMeasurer>> WorkerMeasurer::Start(WorkerOptions options) {
  std::unique_ptr<WorkerMeasurer> measurer(new WorkerMeasurer(std::move(options)));
  COLLAGE_RETURN_IF_ERROR(measurer->EnsureWorker());
  return measurer;
}

std::string WorkerMeasurer::EndWorker(std::string* stderr_note) {
  if (!worker_) return "was not running";
  std::string how = worker_->WaitForExit(kExitGrace);
  std::string tail = worker_->stderr_tail();
  worker_.reset();
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  if (tail.size() > kReasonStderrBytes)
    tail = "..." + tail.substr(tail.size() - kReasonStderrBytes);
  *stderr_note = tail.empty() ? "" : " (its stderr: " + PrintableText(tail) + ")";
  return how;
}

Status WorkerMeasurer::EnsureWorker() {
  if (worker_) return Status();
  std::vector<std::string> args = {"--parent-pid", std::to_string(::getpid())};
  for (const std::string& plugin : options_.plugin_paths) {
    args.push_back("--plugin");
    args.push_back(plugin);
  }
  COLLAGE_ASSIGN_OR_RETURN(worker_, Subprocess::Spawn(options_.executable, args));
  worker_->set_cancellation(options_.cancel);
  ++workers_started_;
  auto refuse = [&](const std::string& why) {
    worker_.reset();
    return Unsupported("the measurement worker {} {}", options_.executable, why);
  };
  std::string payload;
  Status malformed;
  const Subprocess::Wait wait =
      ReadPayload(*worker_, DeadlineAfter(options_.timeout_seconds), &payload, &malformed);
  if (wait == Subprocess::Wait::kInterrupted) {
    worker_.reset();
    return Cancelled();
  }
  if (wait == Subprocess::Wait::kTimedOut) {
    return refuse(
        fmt::format("said nothing for {:g} s after it started", options_.timeout_seconds));
  }
  if (wait == Subprocess::Wait::kClosed) {
    std::string note;
    const std::string how = EndWorker(&note);
    return Unsupported("the measurement worker {} {} before its handshake{}", options_.executable,
                       how, note);
  }
  if (!malformed.ok()) return refuse("sent a malformed handshake: " + malformed.message());
  StatusOr<WorkerHello> hello = DecodeHello(payload);
  if (!hello.ok()) return refuse("sent a malformed handshake: " + hello.status().message());
  if (std::string why = HelloMismatch(*hello, options_.backends); !why.empty()) return refuse(why);
  hello_ = std::move(*hello);
  return Status();
}

StatusOr<CostRecord> WorkerMeasurer::Exchange(const std::string& payload) {
  COLLAGE_RETURN_IF_ERROR(EnsureWorker());
  worker_->ClearStderrTail();
  const auto deadline = DeadlineAfter(options_.timeout_seconds);
  auto fate = [&](Subprocess::Wait wait) -> StatusOr<CostRecord> {
    if (wait == Subprocess::Wait::kInterrupted) {
      worker_.reset();  // killed and reaped: nothing of it is left running
      return Cancelled();
    }
    if (wait == Subprocess::Wait::kTimedOut) {
      worker_.reset();
      CostRecord record = Invalid(fmt::format(
          "timed out after {:g} s (the measurement worker was killed)", options_.timeout_seconds));
      record.timed_out_after_s = options_.timeout_seconds;
      return record;
    }
    // A crash signal is the candidate's; a signal from outside is recorded as such (measured
    // once more); an exit without a reply is the worker giving up (a library calling exit(),
    // an allocation failure it reported), said with its stderr.
    std::string note;
    const std::string how = EndWorker(&note);
    const bool signalled = how.rfind("died of", 0) == 0;
    CostRecord record =
        Invalid("the measurement worker " + how +
                (signalled ? " while measuring this candidate" : " without replying") +
                (SignalFromOutside(how) ? ", a signal from outside it (the out-of-memory killer or "
                                          "another process): measured once more before it is "
                                          "given up"
                                        : "") +
                note);
    record.killed_from_outside = SignalFromOutside(how);
    return record;
  };
  Subprocess::Wait wait = worker_->Write(FrameHeader(payload.size()) + payload, deadline);
  if (wait != Subprocess::Wait::kDone) return fate(wait);
  std::string reply;
  Status malformed;
  wait = ReadPayload(*worker_, deadline, &reply, &malformed);
  if (wait != Subprocess::Wait::kDone) return fate(wait);
  StatusOr<CostRecord> record =
      malformed.ok() ? DecodeRecord(reply) : StatusOr<CostRecord>(malformed);
  if (!record.ok()) {
    // Out of step with us: this worker's next words cannot be trusted either.
    worker_.reset();
    return Invalid("the measurement worker sent a malformed reply: " + record.status().message());
  }
  return record;
}

StatusOr<CostRecord> WorkerMeasurer::Candidate(const Graph& graph, const SubGraph& nodes,
                                               const std::string& backend, const std::string& rule,
                                               Precision precision, int threads, double tolerance,
                                               const MeasureSettings& settings) {
  StatusOr<std::string> payload = CandidateRequestPayload(
      CandidateJob{&graph, nodes, backend, rule, precision, threads, tolerance, settings});
  if (!payload.ok())
    return Invalid("cannot be sent to the measurement worker: " + payload.status().message());
  return Exchange(*payload);
}

StatusOr<CostRecord> WorkerMeasurer::Conversion(const TensorType& type, const Layout& from,
                                                const Layout& to, int threads,
                                                const MeasureSettings& settings) {
  return Exchange(ConversionRequestPayload(type, from, to, threads, settings));
}

}  // namespace collage
