#include "runtime/threading.h"

#include <omp.h>
#include <sched.h>

#include <atomic>
#include <mutex>

#include "collage/backend.h"

namespace collage {
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
