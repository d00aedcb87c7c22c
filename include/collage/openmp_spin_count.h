// The OpenMP wait setting collage runs with. Public because every process that loads the
// library must set it before libgomp loads: executables link collage_thread_policy_preinit
// (src/runtime/thread_policy_preinit.cc), the Python package sets GOMP_SPINCOUNT itself.
#pragma once

namespace collage {

// How long an idle OpenMP worker spins before it blocks (GOMP_SPINCOUNT, in iterations of
// libgomp's wait loop: one pause instruction took ~11 ns on a 2-vCPU Xeon, so 100000 is
// ~1.1 ms, an estimate), unless the user set GOMP_SPINCOUNT or OMP_WAIT_POLICY. Every library
// collage places runs on the one OpenMP team — XNNPACK too, through the pthreadpool API
// implemented on it (backends/xnnpack/openmp_pthreadpool.cc) — so a spinning worker holds no
// core that another pool's worker needs, and the spin only decides whether the team is still
// awake for the next parallel region. Too short a spin and a worker blocks between many
// small primitives and must be woken for the next; what decides the length is a serial
// stretch between two parallel kernels (a recurrence run on one thread, then a small kernel
// on the team). 100000 covers serial stretches of about a millisecond while bounding what a
// spinning worker costs the engines, whose pools are their own (ONNX Runtime's, OpenVINO's
// TBB arena): at most ~1 ms of one core per hand-off, which the library-switch probe
// measures and the search prices. The measurements behind the value are in
// docs/architecture.md, "Threads".
inline constexpr const char kOpenMpSpinCount[] = "100000";

}  // namespace collage
