#include "runtime/threading.h"

#include <omp.h>
#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "collage/backend.h"

namespace collage {
namespace {

// OpenMP workers block as soon as a parallel region ends (OMP_WAIT_POLICY=PASSIVE; libgomp
// then spins 0 iterations) instead of spinning for up to ~300k iterations, which would take
// the core the next library's threads need. bench/thread_policy_bench.cc (2 threads, one
// child process per setting, each library's kernel alone and interleaved with the others):
// once XNNPACK's workers also yield after each run (XNN_FLAG_YIELD_WORKERS), every OpenMP
// wait setting gives interleaved/alone ≈ 1.1 on a quiet machine, and one thread count for
// all libraries is 12% faster than their defaults; before the yield flag, on a busy
// machine, PASSIVE was the setting that hurt interleaving least. GOMP_SPINCOUNT is left
// unset, so that PASSIVE's zero spin holds (kOpenMpWaitPolicy). Whole plans that alternate
// libraries at 2 threads (`collage bench --plan`, NAS-RNN's op-level plan): libgomp's default spin
// 540 ms, GOMP_SPINCOUNT=10000 60 ms, 1000 19 ms, PASSIVE 12–16 ms.
bool IsSet(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0';
}

}  // namespace

void InitThreadPolicyEnvironment() {
  // The two variables are one setting in libgomp (GOMP_SPINCOUNT overrides the spin count
  // OMP_WAIT_POLICY implies), so a user who set either keeps full control of both.
  if (IsSet("OMP_WAIT_POLICY") || IsSet("GOMP_SPINCOUNT")) return;
  setenv("OMP_WAIT_POLICY", kOpenMpWaitPolicy, /*overwrite=*/0);
}

int ResolveThreadCount(int requested) {
  if (requested > 0) return requested;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  return omp_get_num_procs();
}

void ApplyThreadPolicy(int num_threads, BackendRegistry& registry) {
  const int threads = ResolveThreadCount(num_threads);
  // The OpenMP team size is a per-thread setting: set it on every call, for the calling thread.
  omp_set_num_threads(threads);
  // Backends keep one process-wide count; tell those of the process-wide registry only when
  // it (or their number: plug-ins arrive later) changed — checked without a lock, since every
  // Session::Run comes here. Another registry is always told: it may be short-lived, and a new
  // one at the same address would look unchanged.
  static std::atomic<int> applied_threads{0};
  static std::atomic<size_t> applied_backends{0};
  const bool global = &registry == &BackendRegistry::Global();
  if (global && applied_threads.load() == threads && applied_backends.load() == registry.size()) {
    return;
  }
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  for (const Backend* backend : registry.backends()) {
    registry.FindMutable(backend->name())->SetNumThreads(threads);
  }
  if (global) {
    applied_threads.store(threads);
    applied_backends.store(registry.size());
  }
}

}  // namespace collage
