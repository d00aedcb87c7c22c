#include "bench_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <system_error>
#include <thread>

#include "commands.h"

namespace collage::cli {

namespace {

using Clock = std::chrono::steady_clock;

double MillisBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// What the streams share: the next run's number, the deadline, the first error.
struct StreamControl {
  explicit StreamControl(const BenchLimits& limits_in)
      : limits(limits_in),
        start(Clock::now()),
        deadline(start + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(limits.max_seconds))) {}

  const BenchLimits& limits;
  const Clock::time_point start;
  const Clock::time_point deadline;
  std::atomic<int> next_run{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;  // guards error and the merged results
  Status error;

  // Claims the next run, or says the limits are reached (or a stream failed). The first run
  // is always made, however short the duration: a benchmark of no run has no figure.
  bool ClaimRun() {
    if (failed.load()) return false;
    const int run = next_run.fetch_add(1);
    if (run > 0 && limits.max_seconds > 0 && Clock::now() >= deadline) return false;
    return limits.max_runs <= 0 || run < limits.max_runs;
  }
};

struct StreamResult {
  std::vector<double> latencies_ms;
  std::vector<TracedRun> traced;
  Clock::time_point last_end;
};

void RunStream(Session& session, const std::map<std::string, Tensor>& inputs,
               StreamControl& control, StreamResult& result) {
  while (control.ClaimRun()) {
    RunProfile profile;
    const Clock::time_point begin = Clock::now();
    auto outputs = session.Run(inputs, control.limits.profile ? &profile : nullptr);
    const Clock::time_point end = Clock::now();
    if (!outputs.ok()) {
      std::lock_guard<std::mutex> lock(control.mutex);
      if (!control.failed.exchange(true)) control.error = outputs.status();
      return;
    }
    result.latencies_ms.push_back(MillisBetween(begin, end));
    result.last_end = end;
    if (control.limits.profile) {
      result.traced.push_back({MillisBetween(control.start, begin), std::move(profile)});
    }
  }
}

}  // namespace

StatusOr<BenchRuns> RunBenchStreams(Session& session, const std::map<std::string, Tensor>& inputs,
                                    const BenchLimits& limits) {
  if (limits.streams < 1) return InvalidArgument("--streams must be >= 1");
  if (limits.max_runs <= 0 && limits.max_seconds <= 0) {
    return InvalidArgument("a benchmark needs a number of runs or a duration");
  }
  if (limits.profile && limits.streams > 1) {
    return InvalidArgument(
        "--profile and --export-profile time the steps of one stream's runs: use --streams 1");
  }
  StreamControl control(limits);
  std::vector<StreamResult> results(static_cast<size_t>(limits.streams));
  if (limits.streams == 1) {
    RunStream(session, inputs, control, results[0]);
  } else {
    std::vector<std::thread> threads;
    for (StreamResult& result : results) {
      try {
        threads.emplace_back([&session, &inputs, &control, &result] {
          RunStream(session, inputs, control, result);
        });
      } catch (const std::system_error& e) {
        // Out of threads or memory for their stacks: the streams started stop at their next
        // run, and the benchmark says why instead of aborting.
        std::lock_guard<std::mutex> lock(control.mutex);
        if (!control.failed.exchange(true)) {
          control.error = Status(StatusCode::kIoError,
                                 fmt::format("cannot start stream {} of {}: {} (ask for fewer "
                                             "--streams)",
                                             threads.size() + 1, limits.streams, e.what()));
        }
        break;
      }
    }
    for (std::thread& thread : threads) thread.join();
  }
  if (control.failed.load()) return control.error;

  BenchRuns runs;
  Clock::time_point last_end = control.start;
  for (StreamResult& result : results) {
    runs.latencies_ms.insert(runs.latencies_ms.end(), result.latencies_ms.begin(),
                             result.latencies_ms.end());
    if (!result.latencies_ms.empty()) last_end = std::max(last_end, result.last_end);
    for (TracedRun& traced : result.traced) {
      runs.profiles.push_back(traced.profile);
      runs.traced.push_back(std::move(traced));
    }
  }
  runs.wall_seconds = MillisBetween(control.start, last_end) / 1000.0;
  return runs;
}

}  // namespace collage::cli
