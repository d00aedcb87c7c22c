// The threading policy: one thread count for every library in the process (our OpenMP
// kernels, oneDNN and OpenBLAS through the shared OpenMP runtime, Eigen, XNNPACK's
// pthreadpool), and wait settings that keep one library's idle workers from slowing the
// next library down when kernels of different libraries alternate. Measured by
// bench/thread_policy_bench.cc; the reasoning is in docs/architecture.md.
#pragma once

namespace collage {

class BackendRegistry;

// The OpenMP wait policy collage runs under, unless the user set OMP_WAIT_POLICY or
// GOMP_SPINCOUNT (one setting in libgomp: the spin count overrides the one the policy
// implies, so a user who set either keeps both). OpenMP workers block as soon as a parallel region
// ends (OMP_WAIT_POLICY=PASSIVE; libgomp then spins 0 iterations) instead of spinning for up to
// ~300k iterations, which would take the core the next library's threads need.
// bench/thread_policy_bench.cc (2 threads, one child process per setting, each library's kernel
// alone and interleaved with the others): once XNNPACK's workers also yield after each run
// (XNN_FLAG_YIELD_WORKERS), every OpenMP wait setting gives interleaved/alone ≈ 1.1 on a quiet
// machine, and one thread count for all libraries is 12% faster than their defaults; before the
// yield flag, on a busy machine, PASSIVE was the setting that hurt interleaving least.
// GOMP_SPINCOUNT is left unset, so that PASSIVE's zero spin holds. Whole plans that alternate
// libraries at 2 threads show it far more (`collage bench --plan`, NAS-RNN's op-level plan, ~180
// hand-offs per run): libgomp's default spin 540 ms, GOMP_SPINCOUNT=10000 60 ms, 1000 19 ms,
// PASSIVE 12–16 ms. libgomp reads it before main(): executables put it into effect by linking
// collage_thread_policy_preinit (thread_policy_preinit.cc).
inline constexpr const char kOpenMpWaitPolicy[] = "PASSIVE";

// 0 → one thread per core the process may use.
int ResolveThreadCount(int requested);

// Sets `num_threads` for OpenMP and every registered backend. Cheap when unchanged.
void ApplyThreadPolicy(int num_threads, BackendRegistry& registry);

}  // namespace collage
