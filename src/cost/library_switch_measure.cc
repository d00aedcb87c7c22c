#include "cost/library_switch_measure.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <random>

#include "cost/extra_time.h"
#include "cost/group_signature.h"
#include "runtime/kernel_runner.h"

namespace collage {
namespace {

LibrarySwitchRecords BothInvalid(const std::string& reason) {
  LibrarySwitchRecords records;
  records.a_to_b.reason = records.b_to_a.reason = reason;
  return records;
}

CostRecord SwitchRecord(const std::vector<double>& extra) {
  CostRecord record;
  record.valid = true;
  record.median_ms = std::max(0.0, MedianOf(extra));
  record.p90_ms = record.median_ms;
  record.samples = static_cast<int>(extra.size());
  return record;
}

// A kernel compiled and bound, ready to run again and again.
struct Prepared {
  std::unique_ptr<KernelRunner> runner;
  std::unique_ptr<BoundKernel> bound;
};

}  // namespace

std::string SwitchProbeMethodKey(const MeasureSettings& settings) {
  return MeasureMethodKey(settings) + "; beyond noise";
}

LibrarySwitchRecords MeasureLibrarySwitch(const std::vector<ProbeKernel>& a, const std::vector<ProbeKernel>& b,
                                          const BackendRegistry& registry, const MeasureSettings& settings) {
  if (a.size() != 2 || b.size() != 2) return BothInvalid("a library-switch probe needs two kernels of each backend");
  try {
    std::mt19937 rng(4321);
    std::vector<Prepared> kernels;  // a0, a1, b0, b1
    for (const ProbeKernel& probe : {a[0], a[1], b[0], b[1]}) {
      auto runner = KernelRunner::Create(*probe.backend, probe.request, registry);
      if (!runner.ok()) return BothInvalid("does not compile: " + runner.status().message());
      auto bound = (*runner)->Bind(RandomInputs(probe.request, rng));
      if (!bound.ok()) return BothInvalid("cannot bind its inputs: " + bound.status().message());
      kernels.push_back({std::move(*runner), std::move(*bound)});
    }
    // after_other[k] / after_own[k]: kernel k's times as the first and as the second of its pair.
    std::vector<double> after_other[4], after_own[4];
    // A switch costs microseconds, within the noise of one run: many turns, at least 20, as
    // many as the measurement's time allows (up to 200).
    constexpr int kMinTurns = 20, kMaxTurns = 200;
    const auto begin = std::chrono::steady_clock::now();
    for (int turn = -std::max(1, settings.warmup_runs); turn < kMaxTurns; ++turn) {
      const int flip_a = turn & 1, flip_b = (turn >> 1) & 1;
      const int order[4] = {flip_a, 1 - flip_a, 2 + flip_b, 3 - flip_b};
      for (int position = 0; position < 4; ++position) {
        const int k = order[position];
        const auto start = std::chrono::steady_clock::now();
        if (Status s = kernels[static_cast<size_t>(k)].bound->Run(); !s.ok()) {
          return BothInvalid("run failed: " + s.message());
        }
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (turn < 0) continue;
        (position % 2 == 0 ? after_other : after_own)[k].push_back(ms);
      }
      const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      if (turn >= kMinTurns && spent >= settings.max_seconds) break;
    }
    // Per kernel, median after the other library minus median after its own, where it
    // stands out of the noise.
    auto extra = [&](int first) {
      std::vector<double> differences;
      for (int k = first; k < first + 2; ++k)
        differences.push_back(SignificantExtraMs(after_other[k], after_own[k]));
      return differences;
    };
    return {SwitchRecord(extra(2)), SwitchRecord(extra(0))};
  } catch (const std::exception& e) {
    return BothInvalid(std::string("exception while measuring: ") + e.what());
  }
}

}  // namespace collage
