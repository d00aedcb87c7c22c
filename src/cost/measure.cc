#include "cost/measure.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "collage/latency_stats.h"
#include "cost/cache_scrub.h"
#include "ir/output_judgement.h"
#include "runtime/executable.h"
#include "runtime/kernel_runner.h"
#include "runtime/layout_conversion.h"
#include "runtime/threading.h"

namespace collage {
namespace {

CostRecord Invalid(std::string reason) {
  CostRecord record;
  record.valid = false;
  record.reason = std::move(reason);
  return record;
}

double Spread(const std::vector<double>& samples) {
  LatencyStats stats = ComputeLatencyStats(samples);
  return stats.p50_ms > 0 ? (stats.p90_ms - stats.p50_ms) / stats.p50_ms : 0.0;
}

// Library code may throw (std::bad_alloc above all); a measurement never lets it escape.
template <typename F>
CostRecord Guarded(F&& measure) {
  try {
    return measure();
  } catch (const std::bad_alloc&) {
    return Invalid("out of memory while measuring");
  } catch (const std::exception& e) {
    return Invalid(std::string("exception while measuring: ") + e.what());
  }
}

using Buffer = std::unique_ptr<void, void (*)(void*)>;
Buffer ZeroedBuffer(size_t bytes) {
  size_t rounded = (bytes + kBufferSlack + 63) / 64 * 64;
  Buffer buffer(std::aligned_alloc(64, rounded), std::free);
  if (buffer) std::memset(buffer.get(), 0, rounded);
  return buffer;
}

}  // namespace

MeasureSettings SettingsForBackend(MeasureSettings settings, const Backend& backend) {
  settings.scrub_on_calling_thread = backend.has_own_thread_pool();
  return settings;
}

std::string MeasureMethodKey(const MeasureSettings& settings) {
  std::string caches =
      settings.scrub_bytes == 0
          ? "warm"
          : fmt::format("scrub:{}MiB", (settings.scrub_bytes + (size_t{1} << 19)) >> 20);
  if (settings.scrub_bytes > 0 && settings.scrub_on_calling_thread) caches += " on the calling thread";
  // A candidate is invalid when its outputs fail the check against the reference kernels:
  // a verdict cached under an older check (before quantized outputs were judged by their
  // rounding depth, ir/quantization_step.h) is not reused.
  constexpr const char* kOutputCheck = "check 2";
  return caches + "; " + OpenMpWaitSetting() + "; " + kOutputCheck;
}

CostRecord TimeRepeatedly(const std::function<Status()>& run, const MeasureSettings& settings,
                          const std::function<void()>& prepare) {
  auto get_ready = [&] {
    ScrubCaches(settings.scrub_bytes, !settings.scrub_on_calling_thread);
    if (settings.scrub_bytes > 0 && prepare) prepare();
  };
  for (int i = 0; i < settings.warmup_runs; ++i) {
    get_ready();
    if (Status s = run(); !s.ok()) return Invalid("run failed: " + s.message());
  }
  std::vector<double> samples;
  const auto begin = std::chrono::steady_clock::now();
  while (static_cast<int>(samples.size()) < std::max(1, settings.max_runs)) {
    get_ready();
    const auto start = std::chrono::steady_clock::now();
    if (Status s = run(); !s.ok()) return Invalid("run failed: " + s.message());
    const auto end = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    if (static_cast<int>(samples.size()) < settings.min_runs) continue;
    if (std::chrono::duration<double>(end - begin).count() >= settings.max_seconds) break;
    if (Spread(samples) <= settings.target_spread) break;
  }
  LatencyStats stats = ComputeLatencyStats(samples);
  CostRecord record;
  record.valid = true;
  record.median_ms = stats.p50_ms;
  record.p90_ms = stats.p90_ms;
  record.samples = stats.count;
  return record;
}

CostRecord MeasureCandidate(const Backend& backend, const CompileRequest& request,
                            const BackendRegistry& registry, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& reference_outputs, double tolerance,
                            const MeasureSettings& settings) {
  return Guarded([&]() -> CostRecord {
    auto runner = KernelRunner::Create(backend, request, registry);
    if (!runner.ok()) return Invalid("does not compile: " + runner.status().message());
    auto outputs = (*runner)->Run(inputs);
    if (!outputs.ok()) return Invalid("run failed: " + outputs.status().message());
    if (outputs->size() != reference_outputs.size()) {
      return Invalid(fmt::format("returned {} outputs, the reference {}", outputs->size(),
                                 reference_outputs.size()));
    }
    for (size_t i = 0; i < outputs->size(); ++i) {
      const OutputJudgement j = JudgeOutput(*request.graph, request.outputs[i], &request.nodes,
                                            (*outputs)[i], reference_outputs[i], tolerance);
      if (!j.ok) {
        return Invalid(
            fmt::format("output {} differs from the reference kernels: normalized "
                        "error {:.3g} > {:.1e}{}",
                        i, j.error, j.bound, j.problem.empty() ? "" : " (" + j.problem + ")"));
      }
    }
    auto bound = (*runner)->Bind(inputs);
    if (!bound.ok()) return Invalid("cannot bind its inputs: " + bound.status().message());
    const BoundKernel& kernel = **bound;
    CostRecord record = TimeRepeatedly([&] { return kernel.Run(); },
                                       SettingsForBackend(settings, backend),
                                       [&] {
                                         for (size_t i = 0; i < kernel.num_inputs(); ++i)
                                           TouchBytes(kernel.input(i), kernel.input_bytes(i));
                                       });
    record.input_layouts = (*runner)->kernel().input_layouts();
    record.output_layouts = (*runner)->kernel().output_layouts();
    return record;
  });
}

CostRecord MeasureConversion(const TensorType& type, const Layout& from, const Layout& to,
                             const BackendRegistry& registry, const MeasureSettings& settings) {
  return Guarded([&]() -> CostRecord {
    auto kernel = CompileLayoutConversion(type, from, to, registry);
    if (!kernel.ok()) return Invalid("does not compile: " + kernel.status().message());
    // A conversion moves bytes whatever their values: zeros (a valid float) will do.
    Buffer input = ZeroedBuffer(from.BufferBytes(type));
    Buffer output = ZeroedBuffer(to.BufferBytes(type));
    Buffer workspace = ZeroedBuffer((*kernel)->workspace_bytes());
    if (!input || !output || !workspace) return Invalid("out of memory while measuring");
    const void* inputs[] = {input.get()};
    void* outputs[] = {output.get()};
    KernelBuffers buffers{inputs, outputs, (*kernel)->workspace_bytes() ? workspace.get() : nullptr};
    const size_t input_bytes = from.BufferBytes(type);
    CostRecord record = TimeRepeatedly([&] { return (*kernel)->Run(buffers); }, settings,
                                       [&] { TouchBytes(input.get(), input_bytes); });
    record.input_layouts = {from};
    record.output_layouts = {to};
    return record;
  });
}

}  // namespace collage
