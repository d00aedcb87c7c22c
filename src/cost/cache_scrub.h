// Caches as a run leaves them. A kernel timed alone in a tight loop finds its weights and
// inputs in the caches every time; inside a run, everything else the run touches streams
// through the caches between two calls of the same kernel: a model whose weights and
// activations exceed the last-level cache meets its weights cold, a small one finds them in
// the last-level cache but not in L1/L2. Scrubbing that many bytes before each timed run
// reproduces it (as benchdnn's cold-cache mode and TVM's cache flush do, sized by the run
// instead of always flushing everything); the kernel's inputs are then read once, as their
// producer just wrote them.
#pragma once

#include <cstddef>

#include "collage/sdk/graph.h"

namespace collage {

// The size of the largest cache (sysfs), or 32 MiB when the system does not say.
size_t LastLevelCacheBytes();

// What one run of `graph` touches: every constant's bytes and the most bytes of computed
// values live at once (they share the executable's arena), capped at twice the last-level
// cache (beyond that, everything is cold anyway).
size_t RunFootprintBytes(const Graph& graph);

// Reads and writes `bytes` of a buffer of its own, one cache line at a time: with
// `on_openmp_team`, on every thread of the calling thread's OpenMP team, so that each core's
// private caches are scrubbed too (for kernels that run on that team); else on the calling
// thread alone, leaving the team asleep (for kernels that run on a pool of their own, whose
// cores a team spinning after the scrub would hold).
void ScrubCaches(size_t bytes, bool on_openmp_team = true);

// Reads `bytes` at `data` (brings a kernel's input into the caches).
void TouchBytes(const void* data, size_t bytes);

}  // namespace collage
