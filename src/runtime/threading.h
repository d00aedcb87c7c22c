// The threading policy: one thread count for every library a session uses (our OpenMP
// kernels, oneDNN, OpenBLAS, Eigen, MKL and XNNPACK, all on the shared OpenMP runtime), per
// session, so that sessions with different counts run side by side; and
// wait settings that keep one library's idle workers from slowing the next library down
// when kernels of different libraries alternate. Measured by bench/thread_policy_bench.cc;
// the reasoning is in docs/architecture.md.
#pragma once

#include <cstring>
#include <initializer_list>
#include <string>

namespace collage {

// How long an idle OpenMP worker spins before it blocks (GOMP_SPINCOUNT, in iterations of
// libgomp's wait loop: one pause instruction took ~11 ns on a 2-vCPU Xeon, so 100000 is
// ~1.1 ms, an estimate), unless the user set GOMP_SPINCOUNT or OMP_WAIT_POLICY. Every library
// collage places runs on the one OpenMP team — XNNPACK too, through the pthreadpool API
// implemented on it (backends/xnnpack/openmp_pthreadpool.cc) — so a spinning worker holds no
// core that another pool's worker needs, and the spin only decides whether the team is still
// awake for the next parallel region. Too short a spin and a worker blocks between many small primitives and must be
// woken for the next; what decides the length is a serial stretch between two parallel
// kernels (a recurrence run on one thread, then a small kernel on the team). 100000 covers
// serial stretches of about a millisecond while bounding what a spinning worker costs the
// engines, whose pools are their own (ONNX Runtime's, OpenVINO's TBB arena): at most ~1 ms of
// one core per hand-off, which the library-switch probe measures and the search prices. The
// measurements behind the value are in docs/architecture.md, "Threads".
// libgomp reads this before main(): executables put it into effect by linking
// collage_thread_policy_preinit (thread_policy_preinit.cc).
inline constexpr const char kOpenMpSpinCount[] = "100000";

// Whether an environment entry ("NAME=value") is an OpenMP wait setting: OMP_WAIT_POLICY or
// GOMP_SPINCOUNT, which libgomp treats as one setting (the spin count overrides the policy's).
inline bool IsOpenMpWaitSetting(const char* entry) {
  for (const char* name : {"OMP_WAIT_POLICY=", "GOMP_SPINCOUNT="}) {
    if (std::strncmp(entry, name, std::strlen(name)) == 0) return true;
  }
  return false;
}

// The OpenMP wait setting this process's libraries run under, as libgomp read it at start:
// "GOMP_SPINCOUNT=100000", "OMP_WAIT_POLICY=passive", or "libgomp default". Part of the cost
// database's key: at 2 threads the same kernel measures up to 4x apart under two settings.
std::string OpenMpWaitSetting();

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
