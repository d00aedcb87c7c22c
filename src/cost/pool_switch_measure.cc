#include "cost/pool_switch_measure.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <random>

#include "cost/group_signature.h"
#include "runtime/kernel_runner.h"

namespace collage {
namespace {

PoolSwitchRecords BothInvalid(const std::string& reason) {
  PoolSwitchRecords records;
  records.a_to_b.reason = records.b_to_a.reason = reason;
  return records;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

CostRecord Extra(const std::vector<double>& after_other, const std::vector<double>& after_own) {
  std::vector<double> extra;
  for (size_t i = 0; i < after_other.size(); ++i) extra.push_back(after_other[i] - after_own[i]);
  CostRecord record;
  record.valid = true;
  record.median_ms = std::max(0.0, Median(extra));
  record.p90_ms = record.median_ms;
  record.samples = static_cast<int>(extra.size());
  return record;
}

}  // namespace

PoolSwitchRecords MeasurePoolSwitch(const Backend& backend_a, const CompileRequest& a,
                                    const Backend& backend_b, const CompileRequest& b,
                                    const BackendRegistry& registry,
                                    const MeasureSettings& settings) {
  try {
    std::mt19937 rng(4321);
    auto runner_a = KernelRunner::Create(backend_a, a, registry);
    auto runner_b = KernelRunner::Create(backend_b, b, registry);
    if (!runner_a.ok()) return BothInvalid("does not compile: " + runner_a.status().message());
    if (!runner_b.ok()) return BothInvalid("does not compile: " + runner_b.status().message());
    auto bound_a = (*runner_a)->Bind(RandomInputs(a, rng));
    auto bound_b = (*runner_b)->Bind(RandomInputs(b, rng));
    if (!bound_a.ok()) return BothInvalid("cannot bind its inputs: " + bound_a.status().message());
    if (!bound_b.ok()) return BothInvalid("cannot bind its inputs: " + bound_b.status().message());
    const BoundKernel* sequence[] = {bound_a->get(), bound_a->get(), bound_b->get(),
                                     bound_b->get()};
    std::vector<double> times[4];
    // A switch costs microseconds, within the noise of one run: many turns, at least 20, as
    // many as the measurement's time allows (up to 200).
    constexpr int kMinTurns = 20, kMaxTurns = 200;
    const auto begin = std::chrono::steady_clock::now();
    for (int turn = -std::max(1, settings.warmup_runs); turn < kMaxTurns; ++turn) {
      for (int k = 0; k < 4; ++k) {
        const auto start = std::chrono::steady_clock::now();
        if (Status s = sequence[k]->Run(); !s.ok())
          return BothInvalid("run failed: " + s.message());
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        if (turn >= 0) times[k].push_back(ms);
      }
      const double spent =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      if (turn >= kMinTurns && spent >= settings.max_seconds) break;
    }
    // a after b, a after a, b after a, b after b.
    return {Extra(times[2], times[3]), Extra(times[0], times[1])};
  } catch (const std::exception& e) {
    return BothInvalid(std::string("exception while measuring: ") + e.what());
  }
}

}  // namespace collage
