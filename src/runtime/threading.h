// The threading policy: one thread count for every library a session uses (our OpenMP
// kernels, oneDNN and OpenBLAS through the shared OpenMP runtime, Eigen, XNNPACK's
// pthreadpool), per session, so that sessions with different counts run side by side; and
// wait settings that keep one library's idle workers from slowing the next library down
// when kernels of different libraries alternate. Measured by bench/thread_policy_bench.cc;
// the reasoning is in docs/architecture.md.
#pragma once

#include <cstring>
#include <initializer_list>

namespace collage {

// How long an idle OpenMP worker spins before it blocks (GOMP_SPINCOUNT, in pause
// iterations: 500 is roughly 10-25 microseconds, estimated from the pause instruction's
// latency, not measured), unless the user set GOMP_SPINCOUNT or
// OMP_WAIT_POLICY. A trade between two costs, both measured on whole plans at 2 threads
// (`collage bench --threads 2`, two runs each):
// - a worker still spinning when XNNPACK's pthreadpool runs next holds the core its worker
//   needs: NAS-RNN's op-level plan (oneDNN, XNNPACK and Eigen alternating ~180 times per
//   run) takes 560 ms at libgomp's default (300k), 71 at 10k, 27 at 2k, 17-19 at 500 and
//   13-14 ms with OMP_WAIT_POLICY=PASSIVE (no spin);
// - a worker that already blocked must be woken for the next region of the same library:
//   NASNet-A on oneDNN alone 24-29 ms at the default, 26-27 at 500, 34-39 ms PASSIVE;
//   NAS-RNN on oneDNN alone 11-12 ms at the default and at 500, 15-19 ms PASSIVE.
// 500 keeps nearly all of the spin's gain within a library and most of PASSIVE's gain
// across libraries; the searches route around what remains (whole plans are measured).
// XNNPACK's own workers yield after each run (XNN_FLAG_YIELD_WORKERS). libgomp reads this
// before main(): executables put it into effect by linking collage_thread_policy_preinit
// (thread_policy_preinit.cc).
inline constexpr const char kOpenMpSpinCount[] = "500";

// Whether an environment entry ("NAME=value") is an OpenMP wait setting: OMP_WAIT_POLICY or
// GOMP_SPINCOUNT, which libgomp treats as one setting (the spin count overrides the policy's).
inline bool IsOpenMpWaitSetting(const char* entry) {
  for (const char* name : {"OMP_WAIT_POLICY=", "GOMP_SPINCOUNT="}) {
    if (std::strncmp(entry, name, std::strlen(name)) == 0) return true;
  }
  return false;
}

// 0 → one thread per core the process may use.
int ResolveThreadCount(int requested);

// Gives the libraries that the calling thread runs `num_threads` threads (0 → one per core),
// without touching anything process-wide, so that sessions with different counts may run at
// the same time; Session::Run calls it on every run (it costs nothing measurable). It sets
// OpenMP's team size, a per-thread setting that our kernels, oneDNN, Eigen (never given
// Eigen::setNbThreads) and OpenBLAS (which takes it under a lock: backends/openblas/
// blas_threads.h) follow. XNNPACK's count is fixed when a kernel is compiled (the pool of
// the kernel's execution context, collage/sdk/execution_context.h). Nothing sets a backend's
// thread count process-wide: one count cannot be right for two sessions at once.
void ApplyThreadPolicy(int num_threads);

}  // namespace collage
