// OpenBLAS's thread count for one call, taken from the calling thread's OpenMP count (what
// Session::Run sets for its session), without racing other sessions.
//
// OpenBLAS 0.3.21's OpenMP build keeps one process-wide count (blas_cpu_number). At each call
// that may go parallel it compares it with the caller's omp_get_max_threads() and, when they
// differ, sets it (goto_set_num_threads), which also frees and reallocates the per-thread
// buffers a concurrent parallel call may be using; and once the count is 1 it stops looking at
// omp_get_max_threads() at all, so a 1-thread session would leave every later call on one
// thread. So every call from this backend holds this scope: calls wanting the count OpenBLAS
// has share a lock and run at once; a call wanting another count waits for them, sets it
// (openblas_set_num_threads) and runs alone. One session, or several with one count, never
// change the count: their only cost is an uncontended shared lock per call. Sessions with
// different counts using OpenBLAS at the same time take turns on it (its parallel calls take
// turns anyway, on its one set of buffers); the one changing the count waits for a moment
// when no call holds the shared lock (glibc's rwlock prefers readers), which the gaps
// between a run's OpenBLAS calls give it.
#pragma once

#include <cblas.h>
#include <omp.h>

#include <mutex>
#include <shared_mutex>

namespace collage::openblas {

class BlasThreadScope {
 public:
  BlasThreadScope() : shared_(Mutex()) {
    // Inside an active OpenMP region OpenBLAS runs single-threaded and reads no setting.
    if (omp_in_parallel()) return;
    const int wanted = omp_get_max_threads();
    if (openblas_get_num_threads() == wanted) return;
    shared_.unlock();
    exclusive_ = std::unique_lock<std::shared_mutex>(Mutex());
    if (openblas_get_num_threads() != wanted) openblas_set_num_threads(wanted);
  }
  BlasThreadScope(const BlasThreadScope&) = delete;
  BlasThreadScope& operator=(const BlasThreadScope&) = delete;

 private:
  static std::shared_mutex& Mutex() {
    static std::shared_mutex mutex;
    return mutex;
  }

  std::shared_lock<std::shared_mutex> shared_;
  std::unique_lock<std::shared_mutex> exclusive_;
};

}  // namespace collage::openblas
