// pthreadpool's C API (the interface XNNPACK is written against) implemented on the OpenMP
// team that every other library collage places already shares: native kernels, oneDNN,
// OpenBLAS, Eigen and MKL. With one pool there is no hand-off between pools: XNNPACK's work
// runs on the same worker threads as the kernel before and after it, and an idle OpenMP
// worker that spins for the next region holds no core another pool's worker needs. That
// contention is what forced the short OpenMP spin of the threading policy
// (src/runtime/threading.h), which in turn made oneDNN's many-small-primitive models slow at
// 2 threads (workers asleep between primitives).
//
// These definitions take the place of Debian's libpthreadpool, which libXNNPACK.so still
// names as a dependency: the dynamic linker binds XNNPACK's pthreadpool_* references to the
// first definition in lookup order, and a program linking this object (an executable,
// libcollage.so, or the Python module, first in its own lookup scope) comes before the
// libraries it loads. Every
// function of the API is defined here, so that no call reaches Debian's library with a pool
// object it did not create; the unit test checks that each symbol resolves here.
//
// Semantics kept from pthreadpool: the caller takes part in the work; a task is called once
// per item or tile, tiles clipped at the range's end; PTHREADPOOL_FLAG_DISABLE_DENORMALS
// flushes denormals in every participating thread for the call and restores the caller's
// mode after. PTHREADPOOL_FLAG_YIELD_WORKERS has no counterpart: OpenMP's wait policy
// decides how long a worker spins. Concurrent calls on one pool each run their own team
// (pthreadpool serialises them; OpenMP needs no lock).
//
// Where another library exporting this API entered the global lookup scope first (PyTorch
// imported before collage in Python loads Debian's libpthreadpool that way), XNNPACK calls
// that library instead; it must then never be handed a pool of ours, which is why collage
// makes its pools through CreateOpenMpPool and checks where XNNPACK's calls go
// (XnnpackUsesTheOpenMpPool, xnnpack_util.cc).
#include "openmp_pthreadpool.h"

#include <omp.h>
#include <pthreadpool.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

// A pool of ours starts with kOpenMpPoolMark. A library that bound XNNPACK to this code after
// making pools with another implementation (PyTorch imported after collage in Python: its
// pools come from Debian's libpthreadpool, its XNNPACK calls here) hands us pools of that
// implementation: they are run on the caller, never read further (any real pool is larger
// than the mark, so reading it is safe).
struct pthreadpool {
  uint64_t mark;
  size_t threads;
};

namespace {

// A grid of up to six dimensions, some of them tiled (tile 1 otherwise); items are tiles,
// numbered row-major, the last dimension fastest, as pthreadpool orders them.
constexpr size_t kMaxRank = 6;
struct TileGrid {
  size_t rank = 0;
  std::array<size_t, kMaxRank> range{};
  std::array<size_t, kMaxRank> tile{};
  std::array<size_t, kMaxRank> tiles{};  // tiles per dimension
  size_t items = 1;
};

// The grid of `ranges`, the last Tiled dimensions cut into `tiles` (a tile of 0 counts as 1).
template <size_t Rank, size_t Tiled>
TileGrid MakeGrid(const std::array<size_t, Rank>& ranges, const std::array<size_t, Tiled>& tiles) {
  static_assert(Rank <= kMaxRank && Tiled <= Rank);
  TileGrid grid;
  grid.rank = Rank;
  for (size_t d = 0; d < Rank; ++d) {
    const size_t step = d < Rank - Tiled ? 1 : std::max<size_t>(tiles[d - (Rank - Tiled)], 1);
    grid.range[d] = ranges[d];
    grid.tile[d] = step;
    grid.tiles[d] = (ranges[d] + step - 1) / step;
    grid.items *= grid.tiles[d];
  }
  return grid;
}

// Where one tile starts and how large it is, per dimension.
struct TilePosition {
  std::array<size_t, kMaxRank> index{};
  std::array<size_t, kMaxRank> start{};
  std::array<size_t, kMaxRank> size{};
};

void Place(const TileGrid& grid, size_t item, TilePosition& at) {
  for (size_t d = grid.rank; d-- > 0;) {
    at.index[d] = item % grid.tiles[d];
    item /= grid.tiles[d];
  }
  for (size_t d = 0; d < grid.rank; ++d) {
    at.start[d] = at.index[d] * grid.tile[d];
    at.size[d] = std::min(grid.tile[d], grid.range[d] - at.start[d]);
  }
}

// Steps to the next tile without dividing (the common case: only the last dimension moves).
void Advance(const TileGrid& grid, TilePosition& at) {
  for (size_t d = grid.rank; d-- > 0;) {
    if (++at.index[d] < grid.tiles[d]) {
      at.start[d] = at.index[d] * grid.tile[d];
      at.size[d] = std::min(grid.tile[d], grid.range[d] - at.start[d]);
      return;
    }
    at.index[d] = 0;
    at.start[d] = 0;
    at.size[d] = std::min(grid.tile[d], grid.range[d]);
  }
}

// FTZ and DAZ for the scope when asked, the thread's previous mode restored after.
class DenormalsFlushed {
 public:
  explicit DenormalsFlushed(uint32_t flags) {
#if defined(__x86_64__) || defined(__i386__)
    if ((flags & PTHREADPOOL_FLAG_DISABLE_DENORMALS) != 0) {
      saved_ = _mm_getcsr();
      _mm_setcsr(saved_ | kFlushZero | kDenormalsAreZero);
      active_ = true;
    }
#else
    (void)flags;
#endif
  }
  ~DenormalsFlushed() {
#if defined(__x86_64__) || defined(__i386__)
    if (active_) _mm_setcsr(saved_);
#endif
  }
  DenormalsFlushed(const DenormalsFlushed&) = delete;
  DenormalsFlushed& operator=(const DenormalsFlushed&) = delete;

 private:
  static constexpr unsigned kFlushZero = 0x8000;
  static constexpr unsigned kDenormalsAreZero = 0x0040;
  unsigned saved_ = 0;
  bool active_ = false;
};

constexpr uint64_t kOpenMpPoolMark = 0x636f6c6c61676531;  // "collage1"

bool IsOurs(pthreadpool_t pool) { return pool != nullptr && pool->mark == kOpenMpPoolMark; }

size_t ThreadsOf(pthreadpool_t pool) { return IsOurs(pool) ? pool->threads : 1; }

// Counted per thread: the probe that reads it runs XNNPACK on the calling thread, and a
// shared counter would be a contended write on every call.
thread_local uint64_t calls_on_this_thread = 0;

// Calls `task(position)` once per tile. The tiles are cut into a few chunks per thread,
// handed out dynamically: a worker the scheduler delays (2 vCPUs shared with other
// processes) costs one chunk, not its whole share; within a chunk consecutive tiles stay on
// one thread, as pthreadpool's contiguous ranges do.
template <typename Task>
void RunGrid(pthreadpool_t pool, uint32_t flags, const TileGrid& grid, const Task& task) {
  ++calls_on_this_thread;
  if (grid.items == 0) return;
  const size_t threads = std::min(ThreadsOf(pool), grid.items);
  const auto run_items = [&](size_t begin, size_t end) {
    TilePosition at;
    Place(grid, begin, at);
    for (size_t item = begin; item < end; ++item) {
      task(at);
      if (item + 1 < end) Advance(grid, at);
    }
  };
  if (threads <= 1) {
    DenormalsFlushed flushed(flags);
    run_items(0, grid.items);
    return;
  }
  constexpr size_t kChunksPerThread = 4;
  const size_t chunks = std::min(grid.items, threads * kChunksPerThread);
#pragma omp parallel num_threads(static_cast <int>(threads))
  {
    DenormalsFlushed flushed(flags);
#pragma omp for schedule(dynamic, 1)
    for (size_t chunk = 0; chunk < chunks; ++chunk) {
      run_items(grid.items * chunk / chunks, grid.items * (chunk + 1) / chunks);
    }
  }
}

// pthreadpool's calling convention for every parallelize form: `function(lead...,` the start
// of each dimension, then the size of each tiled one`)`, once per tile of `ranges`.
template <size_t Rank, size_t Tiled, typename Function, typename... Lead>
void Parallelize(pthreadpool_t pool, uint32_t flags, const std::array<size_t, Rank>& ranges,
                 const std::array<size_t, Tiled>& tiles, Function function, Lead... lead) {
  RunGrid(pool, flags, MakeGrid(ranges, tiles), [&](const TilePosition& at) {
    [&]<size_t... S, size_t... T>(std::index_sequence<S...>, std::index_sequence<T...>) {
      function(lead..., at.start[S]..., at.size[Rank - Tiled + T]...);
    }
    (std::make_index_sequence<Rank>{}, std::make_index_sequence<Tiled>{});
  });
}

}  // namespace

namespace collage::xnnpack {

pthreadpool_t CreateOpenMpPool(size_t threads) {
  // 0: one thread per CPU the process may use (libgomp's count follows the affinity mask).
  const size_t count = threads == 0 ? static_cast<size_t>(omp_get_num_procs()) : threads;
  return new (std::nothrow) pthreadpool{kOpenMpPoolMark, count};
}

void DestroyOpenMpPool(pthreadpool_t pool) {
  // Another implementation's pool is its owner's to free.
  if (IsOurs(pool)) delete pool;
}

uint64_t OpenMpPoolCallsOnThisThread() { return calls_on_this_thread; }

}  // namespace collage::xnnpack

#define COLLAGE_PTHREADPOOL_API extern "C" __attribute__((visibility("default")))

COLLAGE_PTHREADPOOL_API pthreadpool_t pthreadpool_create(size_t threads_count) {
  return collage::xnnpack::CreateOpenMpPool(threads_count);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_destroy(pthreadpool_t threadpool) {
  collage::xnnpack::DestroyOpenMpPool(threadpool);
}

COLLAGE_PTHREADPOOL_API size_t pthreadpool_get_threads_count(pthreadpool_t threadpool) {
  return ThreadsOf(threadpool);
}

// One microarchitecture on these machines: the _with_uarch forms pass every task the default.

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_1d(pthreadpool_t pool,
                                                        pthreadpool_task_1d_t function,
                                                        void* context, size_t range,
                                                        uint32_t flags) {
  Parallelize<1, 0>(pool, flags, {range}, {}, function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_1d_with_uarch(
    pthreadpool_t pool, pthreadpool_task_1d_with_id_t function, void* context,
    uint32_t default_uarch_index, uint32_t /*max_uarch_index*/, size_t range, uint32_t flags) {
  Parallelize<1, 0>(pool, flags, {range}, {}, function, context, default_uarch_index);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_1d_tile_1d(
    pthreadpool_t pool, pthreadpool_task_1d_tile_1d_t function, void* context, size_t range,
    size_t tile, uint32_t flags) {
  Parallelize<1, 1>(pool, flags, {range}, {tile}, function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_2d(pthreadpool_t pool,
                                                        pthreadpool_task_2d_t function,
                                                        void* context, size_t range_i,
                                                        size_t range_j, uint32_t flags) {
  Parallelize<2, 0>(pool, flags, {range_i, range_j}, {}, function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_2d_tile_1d(
    pthreadpool_t pool, pthreadpool_task_2d_tile_1d_t function, void* context, size_t range_i,
    size_t range_j, size_t tile_j, uint32_t flags) {
  Parallelize<2, 1>(pool, flags, {range_i, range_j}, {tile_j}, function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_2d_tile_2d(
    pthreadpool_t pool, pthreadpool_task_2d_tile_2d_t function, void* context, size_t range_i,
    size_t range_j, size_t tile_i, size_t tile_j, uint32_t flags) {
  Parallelize<2, 2>(pool, flags, {range_i, range_j}, {tile_i, tile_j}, function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_2d_tile_2d_with_uarch(
    pthreadpool_t pool, pthreadpool_task_2d_tile_2d_with_id_t function, void* context,
    uint32_t default_uarch_index, uint32_t /*max_uarch_index*/, size_t range_i, size_t range_j,
    size_t tile_i, size_t tile_j, uint32_t flags) {
  Parallelize<2, 2>(pool, flags, {range_i, range_j}, {tile_i, tile_j}, function, context,
                    default_uarch_index);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_3d(pthreadpool_t pool,
                                                        pthreadpool_task_3d_t function,
                                                        void* context, size_t range_i,
                                                        size_t range_j, size_t range_k,
                                                        uint32_t flags) {
  Parallelize<3, 0>(pool, flags, {range_i, range_j, range_k}, {}, function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_3d_tile_1d(
    pthreadpool_t pool, pthreadpool_task_3d_tile_1d_t function, void* context, size_t range_i,
    size_t range_j, size_t range_k, size_t tile_k, uint32_t flags) {
  Parallelize<3, 1>(pool, flags, {range_i, range_j, range_k}, {tile_k}, function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_3d_tile_2d(
    pthreadpool_t pool, pthreadpool_task_3d_tile_2d_t function, void* context, size_t range_i,
    size_t range_j, size_t range_k, size_t tile_j, size_t tile_k, uint32_t flags) {
  Parallelize<3, 2>(pool, flags, {range_i, range_j, range_k}, {tile_j, tile_k}, function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_3d_tile_2d_with_uarch(
    pthreadpool_t pool, pthreadpool_task_3d_tile_2d_with_id_t function, void* context,
    uint32_t default_uarch_index, uint32_t /*max_uarch_index*/, size_t range_i, size_t range_j,
    size_t range_k, size_t tile_j, size_t tile_k, uint32_t flags) {
  Parallelize<3, 2>(pool, flags, {range_i, range_j, range_k}, {tile_j, tile_k}, function, context,
                    default_uarch_index);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_4d(pthreadpool_t pool,
                                                        pthreadpool_task_4d_t function,
                                                        void* context, size_t range_i,
                                                        size_t range_j, size_t range_k,
                                                        size_t range_l, uint32_t flags) {
  Parallelize<4, 0>(pool, flags, {range_i, range_j, range_k, range_l}, {}, function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_4d_tile_1d(
    pthreadpool_t pool, pthreadpool_task_4d_tile_1d_t function, void* context, size_t range_i,
    size_t range_j, size_t range_k, size_t range_l, size_t tile_l, uint32_t flags) {
  Parallelize<4, 1>(pool, flags, {range_i, range_j, range_k, range_l}, {tile_l}, function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_4d_tile_2d(
    pthreadpool_t pool, pthreadpool_task_4d_tile_2d_t function, void* context, size_t range_i,
    size_t range_j, size_t range_k, size_t range_l, size_t tile_k, size_t tile_l, uint32_t flags) {
  Parallelize<4, 2>(pool, flags, {range_i, range_j, range_k, range_l}, {tile_k, tile_l}, function,
                    context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_4d_tile_2d_with_uarch(
    pthreadpool_t pool, pthreadpool_task_4d_tile_2d_with_id_t function, void* context,
    uint32_t default_uarch_index, uint32_t /*max_uarch_index*/, size_t range_i, size_t range_j,
    size_t range_k, size_t range_l, size_t tile_k, size_t tile_l, uint32_t flags) {
  Parallelize<4, 2>(pool, flags, {range_i, range_j, range_k, range_l}, {tile_k, tile_l}, function,
                    context, default_uarch_index);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_5d(
    pthreadpool_t pool, pthreadpool_task_5d_t function, void* context, size_t range_i,
    size_t range_j, size_t range_k, size_t range_l, size_t range_m, uint32_t flags) {
  Parallelize<5, 0>(pool, flags, {range_i, range_j, range_k, range_l, range_m}, {}, function,
                    context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_5d_tile_1d(
    pthreadpool_t pool, pthreadpool_task_5d_tile_1d_t function, void* context, size_t range_i,
    size_t range_j, size_t range_k, size_t range_l, size_t range_m, size_t tile_m, uint32_t flags) {
  Parallelize<5, 1>(pool, flags, {range_i, range_j, range_k, range_l, range_m}, {tile_m}, function,
                    context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_5d_tile_2d(
    pthreadpool_t pool, pthreadpool_task_5d_tile_2d_t function, void* context, size_t range_i,
    size_t range_j, size_t range_k, size_t range_l, size_t range_m, size_t tile_l, size_t tile_m,
    uint32_t flags) {
  Parallelize<5, 2>(pool, flags, {range_i, range_j, range_k, range_l, range_m}, {tile_l, tile_m},
                    function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_6d(pthreadpool_t pool,
                                                        pthreadpool_task_6d_t function,
                                                        void* context, size_t range_i,
                                                        size_t range_j, size_t range_k,
                                                        size_t range_l, size_t range_m,
                                                        size_t range_n, uint32_t flags) {
  Parallelize<6, 0>(pool, flags, {range_i, range_j, range_k, range_l, range_m, range_n}, {},
                    function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_6d_tile_1d(
    pthreadpool_t pool, pthreadpool_task_6d_tile_1d_t function, void* context, size_t range_i,
    size_t range_j, size_t range_k, size_t range_l, size_t range_m, size_t range_n, size_t tile_n,
    uint32_t flags) {
  Parallelize<6, 1>(pool, flags, {range_i, range_j, range_k, range_l, range_m, range_n}, {tile_n},
                    function, context);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_parallelize_6d_tile_2d(
    pthreadpool_t pool, pthreadpool_task_6d_tile_2d_t function, void* context, size_t range_i,
    size_t range_j, size_t range_k, size_t range_l, size_t range_m, size_t range_n, size_t tile_m,
    size_t tile_n, uint32_t flags) {
  Parallelize<6, 2>(pool, flags, {range_i, range_j, range_k, range_l, range_m, range_n},
                    {tile_m, tile_n}, function, context);
}

// The legacy API (NNPACK's): no flags; the tiled forms tile every dimension.
COLLAGE_PTHREADPOOL_API void pthreadpool_compute_1d(pthreadpool_t pool,
                                                    pthreadpool_function_1d_t function,
                                                    void* argument, size_t range) {
  Parallelize<1, 0>(pool, 0, {range}, {}, function, argument);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_compute_1d_tiled(pthreadpool_t pool,
                                                          pthreadpool_function_1d_tiled_t function,
                                                          void* argument, size_t range,
                                                          size_t tile) {
  Parallelize<1, 1>(pool, 0, {range}, {tile}, function, argument);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_compute_2d(pthreadpool_t pool,
                                                    pthreadpool_function_2d_t function,
                                                    void* argument, size_t range_i,
                                                    size_t range_j) {
  Parallelize<2, 0>(pool, 0, {range_i, range_j}, {}, function, argument);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_compute_2d_tiled(pthreadpool_t pool,
                                                          pthreadpool_function_2d_tiled_t function,
                                                          void* argument, size_t range_i,
                                                          size_t range_j, size_t tile_i,
                                                          size_t tile_j) {
  Parallelize<2, 2>(pool, 0, {range_i, range_j}, {tile_i, tile_j}, function, argument);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_compute_3d_tiled(
    pthreadpool_t pool, pthreadpool_function_3d_tiled_t function, void* argument, size_t range_i,
    size_t range_j, size_t range_k, size_t tile_i, size_t tile_j, size_t tile_k) {
  Parallelize<3, 3>(pool, 0, {range_i, range_j, range_k}, {tile_i, tile_j, tile_k}, function,
                    argument);
}

COLLAGE_PTHREADPOOL_API void pthreadpool_compute_4d_tiled(
    pthreadpool_t pool, pthreadpool_function_4d_tiled_t function, void* argument, size_t range_i,
    size_t range_j, size_t range_k, size_t range_l, size_t tile_i, size_t tile_j, size_t tile_k,
    size_t tile_l) {
  Parallelize<4, 4>(pool, 0, {range_i, range_j, range_k, range_l}, {tile_i, tile_j, tile_k, tile_l},
                    function, argument);
}
