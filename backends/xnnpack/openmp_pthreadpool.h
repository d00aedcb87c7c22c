// collage's side of the pthreadpool API implemented on the OpenMP team
// (openmp_pthreadpool.cc): pools made and freed by this implementation whatever the dynamic
// linker bound the public pthreadpool_* names to, and a count of the parallelize calls it
// served on a thread, which tells whether XNNPACK's calls reach it (XnnpackUsesTheOpenMpPool,
// xnnpack_util.h).
#pragma once

#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>

namespace collage::xnnpack {

// A pool of `threads` (0: one per CPU the process may use); null when out of memory.
pthreadpool_t CreateOpenMpPool(size_t threads);
void DestroyOpenMpPool(pthreadpool_t pool);

// How many parallelize calls this implementation has served on the calling thread.
uint64_t OpenMpPoolCallsOnThisThread();

}  // namespace collage::xnnpack
