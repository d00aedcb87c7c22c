// Measurement in a worker process (collage_measure_worker, protocol in
// cost/worker_protocol.h), so that a library that segfaults, aborts or hangs costs one
// invalid candidate instead of the whole optimize: the worker's death or silence is the
// candidate's record ("the measurement worker died of SIGSEGV while measuring this
// candidate", "timed out after 60 s"), and the next request starts a new worker.
//
// When the optimize is cancelled (WorkerOptions::cancel) the worker is killed and the
// measurement gives kCancelled: nothing is recorded for the candidate in flight.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cost/measurer.h"
#include "cost/worker_protocol.h"
#include "util/subprocess.h"

namespace collage {

struct WorkerOptions {
  std::string executable;  // collage_measure_worker
  std::vector<std::string>
      plugin_paths;  // loaded by the worker too (BackendRegistry::plugin_paths)
  // The backends (name, version) the parent measures on: a worker lacking one, or having
  // another version of it, is refused.
  std::vector<std::pair<std::string, std::string>> backends;
  double timeout_seconds = 60;  // per request; the worker is killed past it
  CancellationToken cancel;     // the optimize's: cancelled, the worker is killed
};

// Where the worker is: `configured` (OptimizeOptions::measure_worker; the command line and
// Python set it from $COLLAGE_MEASURE_WORKER) when set, then collage_measure_worker next to
// the running executable, then in the bin/ folder beside an installed library, then the one in
// the build tree this library was built in. "" when none exists; `*tried` lists the paths
// looked at.
std::string FindMeasureWorker(const std::string& configured, std::vector<std::string>* tried);

class WorkerMeasurer;

// The longest a measurement may be allowed: a day (a larger limit, 1e10 s, would overflow
// the deadline's clock).
inline constexpr double kMaxMeasureTimeoutSeconds = 86400;

// kInvalidArgument unless 0 < timeout_seconds <= kMaxMeasureTimeoutSeconds.
Status CheckMeasureTimeout(double timeout_seconds);

// The backends (name, version) of `registry` a worker must have to measure an optimize over
// `backends`: those of them registered here, and native, always a candidate.
std::vector<std::pair<std::string, std::string>> WorkerBackends(
    const BackendRegistry& registry, const std::vector<std::string>& backends);

// The measurer of an optimize over `backends` of `registry`: a started WorkerMeasurer where
// FindMeasureWorker(`configured`) finds one that accepts, else, with a warning in `warnings`
// saying why (none found, or the one found refused), an InProcessMeasurer. kCancelled when
// interrupted while the worker starts.
StatusOr<std::unique_ptr<Measurer>> ChooseMeasurer(
    const std::string& configured, double timeout_seconds, const BackendRegistry& registry,
    const std::vector<std::string>& backends, std::vector<std::string>* warnings,
    const CancellationToken& cancel = CancellationToken());

// Why a worker that said `hello` cannot measure for a parent wanting `backends` (name,
// version): "speaks protocol version 2, ...", "has no backend 'x' ..."; "" when it can.
std::string HelloMismatch(const WorkerHello& hello,
                          const std::vector<std::pair<std::string, std::string>>& backends);

// The request payloads a worker measures ('C', 'V'): what WorkerMeasurer sends, and what
// RayMeasurer wraps in jobs. A group that cannot be serialized is an error (the caller
// records the candidate invalid with it).
StatusOr<std::string> CandidateRequestPayload(const CandidateJob& job);
std::string ConversionRequestPayload(const TensorType& type, const Layout& from, const Layout& to,
                                     int threads, const MeasureSettings& settings);

class WorkerMeasurer : public Measurer {
 public:
  // Starts a worker and checks its handshake: kUnsupported when it cannot start, speaks
  // another protocol version, lacks one of options.backends or has another version of it.
  static StatusOr<std::unique_ptr<WorkerMeasurer>> Start(WorkerOptions options);
  ~WorkerMeasurer() override = default;

  StatusOr<CostRecord> Candidate(const Graph& graph, const SubGraph& nodes,
                                 const std::string& backend, const std::string& rule,
                                 Precision precision, int threads, double tolerance,
                                 const MeasureSettings& settings) override;
  StatusOr<CostRecord> Conversion(const TensorType& type, const Layout& from, const Layout& to,
                                  int threads, const MeasureSettings& settings) override;
  bool MeasuresInThisProcess() const override { return false; }
  double time_limit_seconds() const override { return options_.timeout_seconds; }

  // One request payload ('C' or 'V') measured by the worker, the candidate's fate included:
  // what `collage_measure_worker --relay` does with each request, so that the rules for a
  // worker's death and silence exist once. kCancelled when interrupted; another error when
  // no new worker can be started.
  StatusOr<CostRecord> Relay(const std::string& request) { return Exchange(request); }
  // The running worker's hello (the last one started).
  const WorkerHello& hello() const { return hello_; }

  // Workers started so far (1 + one per crash or time-out that was followed by a request).
  int workers_started() const { return workers_started_; }
  // The running worker's pid, -1 when none runs.
  pid_t worker_pid() const { return worker_ ? worker_->pid() : -1; }

 private:
  explicit WorkerMeasurer(WorkerOptions options) : options_(std::move(options)) {}
  // Spawns a worker when none runs and checks its hello.
  Status EnsureWorker();
  // Sends one request and reads its reply; the candidate's fate (crash, time-out) as an
  // invalid record, an interrupt as kCancelled.
  StatusOr<CostRecord> Exchange(const std::string& payload);
  // The worker's pipe closed: reaped; how it ended ("died of SIGSEGV", "exited with status
  // 1"), and the end of its stderr as " (its stderr: ...)" or "".
  std::string EndWorker(std::string* stderr_note);

  WorkerOptions options_;
  std::unique_ptr<Subprocess> worker_;
  WorkerHello hello_;
  int workers_started_ = 0;
};

}  // namespace collage
