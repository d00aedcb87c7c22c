// The threading policy: one thread count for every library in the process (our OpenMP
// kernels, oneDNN and OpenBLAS through the shared OpenMP runtime, Eigen, XNNPACK's
// pthreadpool), and wait settings that keep one library's idle workers from slowing the
// next library down when kernels of different libraries alternate. Measured by
// bench/thread_policy_bench.cc; the reasoning is in docs/architecture.md.
#pragma once

namespace collage {

class BackendRegistry;

// The OpenMP wait policy collage runs under (threading.cc says why).
inline constexpr const char kOpenMpWaitPolicy[] = "PASSIVE";

// Sets the OpenMP wait policy the policy chose unless the user set one. libgomp reads it in
// its constructor, before main(): executables run this from .preinit_array by linking
// collage_thread_policy_preinit (thread_policy_preinit.cc); calling it later changes the
// environment only.
void InitThreadPolicyEnvironment();

// 0 → one thread per core the process may use.
int ResolveThreadCount(int requested);

// Sets `num_threads` for OpenMP and every registered backend. Cheap when unchanged.
void ApplyThreadPolicy(int num_threads, BackendRegistry& registry);

}  // namespace collage
