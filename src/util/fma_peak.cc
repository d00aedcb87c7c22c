#include "collage/fma_peak.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace collage {
namespace {

#if defined(__x86_64__)

// Twelve independent accumulators: enough to keep two FMA pipes of 4-5 cycles' latency busy,
// few enough to stay in registers (the loops over them are unrolled whole). Each starts from a
// different value: two chains the compiler can prove equal it computes once, and the count
// of operations would then be too high. The values converge (a < 1) and stay normal: no
// subnormal slowdown. The sum is returned so that the compiler keeps the loop.
constexpr int kChains = 12;
#define COLLAGE_PEAK_LOOP(V, SET, STEP, REDUCE)                                          \
  const V a = SET(0.999999f), b = SET(1e-7f);                                            \
  V c[kChains];                                                                          \
  _Pragma("GCC unroll 12") for (int k = 0; k < kChains; ++k) c[k] = SET(1.f + 0.1f * k); \
  for (long i = 0; i < iterations; ++i) {                                                \
    _Pragma("GCC unroll 12") for (int k = 0; k < kChains; ++k) c[k] = STEP(c[k], a, b);  \
  }                                                                                      \
  V sum = c[0];                                                                          \
  _Pragma("GCC unroll 12") for (int k = 1; k < kChains; ++k) sum = REDUCE(sum, c[k]);    \
  return sum[0];

__attribute__((target("avx512f"))) float Avx512Loop(long iterations) {
  COLLAGE_PEAK_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps)
}
__attribute__((target("avx2,fma"))) float Avx2Loop(long iterations) {
  COLLAGE_PEAK_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps)
}
inline __m128 MulAdd(__m128 c, __m128 a, __m128 b) { return _mm_add_ps(_mm_mul_ps(c, a), b); }
float SseLoop(long iterations) { COLLAGE_PEAK_LOOP(__m128, _mm_set1_ps, MulAdd, _mm_add_ps) }
#undef COLLAGE_PEAK_LOOP

struct Loop {
  float (*run)(long);
  int lanes;
  const char* isa;
};

Loop WidestLoop() {
  if (__builtin_cpu_supports("avx512f")) return {Avx512Loop, 16, "AVX-512 FMA"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {Avx2Loop, 8, "AVX2 FMA"};
  return {SseLoop, 4, "SSE multiply+add"};
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// All threads start together and run `iterations` each; GFLOP/s over the slowest one's time.
// 0 when the threads cannot all be started (a process at its thread limit).
double TimedRate(const Loop& loop, int threads, long iterations) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> seconds(threads, 0);
  std::atomic<float> sink{0};
  std::vector<std::thread> workers;
  workers.reserve(threads);
  bool started = true;
  try {
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        const auto start = std::chrono::steady_clock::now();
        const float value = loop.run(iterations);
        seconds[t] = Seconds(start);
        sink.store(value, std::memory_order_relaxed);
      });
    }
  } catch (const std::system_error&) {
    started = false;  // those started still run once released, so that they can be joined
  }
  while (ready.load() < static_cast<int>(workers.size())) std::this_thread::yield();
  go.store(true, std::memory_order_release);
  for (std::thread& w : workers) w.join();
  if (!started) return 0;
  const double slowest = *std::max_element(seconds.begin(), seconds.end());
  const double flops = 2.0 * kChains * loop.lanes * static_cast<double>(iterations) * threads;
  return slowest > 0 ? flops / slowest / 1e9 : 0;
}

#endif  // __x86_64__

}  // namespace

FmaPeak MeasureFmaPeak(int threads, double seconds) {
  FmaPeak peak;
  peak.threads = std::max(1, threads);
#if defined(__x86_64__)
  const Loop loop = WidestLoop();
  peak.isa = loop.isa;
  // Size the run from a short one: about `seconds` per try.
  constexpr long kProbe = 20000;
  const double probe_rate = TimedRate(loop, 1, kProbe);
  const double flops_per_iteration = 2.0 * kChains * loop.lanes;
  const long iterations = std::max(
      kProbe, static_cast<long>(std::max(seconds, 0.001) * probe_rate * 1e9 / flops_per_iteration));
  for (int attempt = 0; attempt < 3; ++attempt) {
    peak.gflops = std::max(peak.gflops, TimedRate(loop, peak.threads, iterations));
  }
#endif
  return peak;
}

}  // namespace collage
