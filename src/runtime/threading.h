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

#include "collage/openmp_spin_count.h"

namespace collage {

// kOpenMpSpinCount: collage/openmp_spin_count.h (public: the Python package sets it too).

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
