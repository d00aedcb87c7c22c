// Measuring one candidate group on one backend, or one layout conversion (DESIGN.md 1.4):
// compile, check against the reference kernels, warm up, then time repeated runs until the
// spread is small or a cap is reached. The caller applies the thread policy first, so that
// the measurement runs with the deployment's settings.
#pragma once

#include <functional>
#include <vector>

#include "collage/sdk/backend.h"
#include "cost/cost_database.h"

namespace collage {

struct MeasureSettings {
  int warmup_runs = 2;
  int min_runs = 5;
  int max_runs = 100;
  // Timed runs stop at this much time spent (once min_runs are done)...
  double max_seconds = 0.25;
  // ...or as soon as (p90 - median) / median falls below this.
  double target_spread = 0.05;
  // Bytes scrubbed through the caches before every run (untimed), then the kernel's inputs
  // are read: the caches as the rest of a run leaves them (cost/cache_scrub.h). 0: warm, the
  // kernel's data stays in the caches from one run to the next.
  size_t scrub_bytes = 0;
  // Scrub on the calling thread alone instead of the OpenMP team: for the kernels of a
  // backend with a thread pool of its own (Backend::has_own_thread_pool). Set per candidate
  // by MeasureCandidate from its backend (so the measurement worker's protocol carries no
  // such field); part of the method key.
  bool scrub_on_calling_thread = false;
};

// `settings` as a candidate of `backend` is measured with them.
MeasureSettings SettingsForBackend(MeasureSettings settings, const Backend& backend);

// The measurement method as the cost database keys it: the caches ("warm", "scrub:<MiB>",
// or "scrub:<MiB> on the calling thread"), the OpenMP wait setting the libraries run under and the version of the
// outputs' check ("warm; GOMP_SPINCOUNT=100000; check 2") — costs measured one way are never
// reused for another.
std::string MeasureMethodKey(const MeasureSettings& settings);

// Runs `run` settings.warmup_runs times, then times it; median and p90 in the record, which
// is valid unless a run failed. Before every run, untimed: the scrub settings.scrub_bytes
// asks for, then `prepare` (reading the inputs back into the caches).
CostRecord TimeRepeatedly(const std::function<Status()>& run, const MeasureSettings& settings,
                          const std::function<void()>& prepare = {});

// Compiles `request` on `backend`, runs it on `inputs` (plain tensors, one per request input)
// and compares with `reference_outputs` within `tolerance` (normalized error); then times
// the kernel alone on inputs already in its layouts. Never fails: a compile error, a run
// error, an exception or a wrong answer gives an invalid record with the reason.
CostRecord MeasureCandidate(const Backend& backend, const CompileRequest& request,
                            const BackendRegistry& registry, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& reference_outputs, double tolerance,
                            const MeasureSettings& settings);

// The conversion kernel the executable would insert between `from` and `to` for a value of
// `type` (runtime/layout_conversion.h), timed the same way.
CostRecord MeasureConversion(const TensorType& type, const Layout& from, const Layout& to,
                             const BackendRegistry& registry, const MeasureSettings& settings);

}  // namespace collage
