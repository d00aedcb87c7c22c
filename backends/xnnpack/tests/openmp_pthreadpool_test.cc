// The pthreadpool API on the OpenMP team (openmp_pthreadpool.cc): every function of the API
// resolves to it in this process (so XNNPACK, which the dynamic linker binds the same way,
// calls it and never Debian's library), each parallelize form covers its range exactly once
// with tiles clipped at the end, work runs on the OpenMP team, and the denormal flag holds
// for the call only. XNNPACK's outputs through it are checked by the other tests of the
// backend and by the differential harness at 2 threads; a process where another
// pthreadpool library was loaded first by the Python package's tests.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <omp.h>
#include <pthreadpool.h>
#include <xmmintrin.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "../xnnpack_util.h"

namespace {

struct PoolDeleter {
  void operator()(pthreadpool_t pool) const { pthreadpool_destroy(pool); }
};
using Pool = std::unique_ptr<pthreadpool, PoolDeleter>;

TEST(OpenMpPthreadpoolTest, EveryFunctionOfTheApiResolvesToThisImplementation) {
  const char* const functions[] = {
      "pthreadpool_create",
      "pthreadpool_destroy",
      "pthreadpool_get_threads_count",
      "pthreadpool_parallelize_1d",
      "pthreadpool_parallelize_1d_with_uarch",
      "pthreadpool_parallelize_1d_tile_1d",
      "pthreadpool_parallelize_2d",
      "pthreadpool_parallelize_2d_tile_1d",
      "pthreadpool_parallelize_2d_tile_2d",
      "pthreadpool_parallelize_2d_tile_2d_with_uarch",
      "pthreadpool_parallelize_3d",
      "pthreadpool_parallelize_3d_tile_1d",
      "pthreadpool_parallelize_3d_tile_2d",
      "pthreadpool_parallelize_3d_tile_2d_with_uarch",
      "pthreadpool_parallelize_4d",
      "pthreadpool_parallelize_4d_tile_1d",
      "pthreadpool_parallelize_4d_tile_2d",
      "pthreadpool_parallelize_4d_tile_2d_with_uarch",
      "pthreadpool_parallelize_5d",
      "pthreadpool_parallelize_5d_tile_1d",
      "pthreadpool_parallelize_5d_tile_2d",
      "pthreadpool_parallelize_6d",
      "pthreadpool_parallelize_6d_tile_1d",
      "pthreadpool_parallelize_6d_tile_2d",
      "pthreadpool_compute_1d",
      "pthreadpool_compute_1d_tiled",
      "pthreadpool_compute_2d",
      "pthreadpool_compute_2d_tiled",
      "pthreadpool_compute_3d_tiled",
      "pthreadpool_compute_4d_tiled",
  };
  // Where this program's own definitions live (the executable, or the module embedding it).
  Dl_info self{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&pthreadpool_create), &self), 0);
  for (const char* name : functions) {
    // RTLD_DEFAULT searches the global scope in the order the dynamic linker binds
    // XNNPACK's references.
    void* found = dlsym(RTLD_DEFAULT, name);
    ASSERT_NE(found, nullptr) << name;
    Dl_info info{};
    ASSERT_NE(dladdr(found, &info), 0) << name;
    EXPECT_STREQ(info.dli_fname, self.dli_fname) << name;
    EXPECT_EQ(std::string(info.dli_fname).find("libpthreadpool"), std::string::npos) << name;
  }
}

TEST(OpenMpPthreadpoolTest, XnnpackCallsReachIt) {
  // What decides whether XNNPACK kernels get a pool at all: in a program linking collage
  // first, its calls come here.
  EXPECT_TRUE(collage::xnnpack::XnnpackUsesTheOpenMpPool());
  EXPECT_EQ(collage::xnnpack::LibraryVersion().find("one thread"), std::string::npos);
}

// Counts, per element of a small index space, how many task calls covered it.
class Coverage {
 public:
  explicit Coverage(std::vector<size_t> ranges) : ranges_(std::move(ranges)) {
    size_t total = 1;
    for (size_t r : ranges_) total *= r;
    counts_ = std::make_unique<std::atomic<int>[]>(total);
    total_ = total;
  }
  // A tile: per dimension its start and size.
  void Cover(const std::vector<size_t>& start, const std::vector<size_t>& size) {
    std::vector<size_t> index(start);
    while (true) {
      size_t flat = 0;
      for (size_t d = 0; d < ranges_.size(); ++d) {
        if (index[d] >= ranges_[d]) {
          out_of_range_ = true;
          return;
        }
        flat = flat * ranges_[d] + index[d];
      }
      counts_[flat].fetch_add(1);
      size_t d = ranges_.size();
      while (d > 0) {
        --d;
        if (++index[d] < start[d] + size[d]) break;
        index[d] = start[d];
        if (d == 0) return;
      }
    }
  }
  void ExpectEachOnce(const std::string& what) const {
    EXPECT_FALSE(out_of_range_) << what;
    for (size_t i = 0; i < total_; ++i) {
      ASSERT_EQ(counts_[i].load(), 1) << what << ": element " << i;
    }
  }

 private:
  std::vector<size_t> ranges_;
  std::unique_ptr<std::atomic<int>[]> counts_;
  size_t total_ = 0;
  std::atomic<bool> out_of_range_{false};
};

TEST(OpenMpPthreadpoolTest, EachFormCoversItsRangeOnceWithClippedTiles) {
  for (size_t threads : {1, 2, 3}) {
    Pool pool(pthreadpool_create(threads));
    ASSERT_NE(pool, nullptr);
    ASSERT_EQ(pthreadpool_get_threads_count(pool.get()), threads);
    const std::string at = " at " + std::to_string(threads) + " threads";
    {
      Coverage c({13});
      pthreadpool_parallelize_1d(
          pool.get(), [](void* p, size_t i) { static_cast<Coverage*>(p)->Cover({i}, {1}); }, &c, 13,
          0);
      c.ExpectEachOnce("1d" + at);
    }
    {
      Coverage c({13});
      pthreadpool_parallelize_1d_tile_1d(
          pool.get(),
          [](void* p, size_t i, size_t ti) { static_cast<Coverage*>(p)->Cover({i}, {ti}); }, &c, 13,
          4, 0);
      c.ExpectEachOnce("1d_tile_1d" + at);
    }
    {
      Coverage c({5, 7});
      pthreadpool_parallelize_2d_tile_2d(
          pool.get(),
          [](void* p, size_t i, size_t j, size_t ti, size_t tj) {
            static_cast<Coverage*>(p)->Cover({i, j}, {ti, tj});
          },
          &c, 5, 7, 2, 3, 0);
      c.ExpectEachOnce("2d_tile_2d" + at);
    }
    {
      Coverage c({3, 7, 5});
      pthreadpool_parallelize_3d_tile_2d_with_uarch(
          pool.get(),
          [](void* p, uint32_t uarch, size_t i, size_t j, size_t k, size_t tj, size_t tk) {
            EXPECT_EQ(uarch, 4u);
            static_cast<Coverage*>(p)->Cover({i, j, k}, {1, tj, tk});
          },
          &c, 4, 9, 3, 7, 5, 3, 2, 0);
      c.ExpectEachOnce("3d_tile_2d_with_uarch" + at);
    }
    {
      Coverage c({2, 3, 5, 4});
      pthreadpool_parallelize_4d_tile_2d(
          pool.get(),
          [](void* p, size_t i, size_t j, size_t k, size_t l, size_t tk, size_t tl) {
            static_cast<Coverage*>(p)->Cover({i, j, k, l}, {1, 1, tk, tl});
          },
          &c, 2, 3, 5, 4, 2, 3, 0);
      c.ExpectEachOnce("4d_tile_2d" + at);
    }
    {
      Coverage c({2, 1, 3, 2, 5, 7});
      pthreadpool_parallelize_6d_tile_2d(
          pool.get(),
          [](void* p, size_t i, size_t j, size_t k, size_t l, size_t m, size_t n, size_t tm,
             size_t tn) {
            static_cast<Coverage*>(p)->Cover({i, j, k, l, m, n}, {1, 1, 1, 1, tm, tn});
          },
          &c, 2, 1, 3, 2, 5, 7, 4, 3, 0);
      c.ExpectEachOnce("6d_tile_2d" + at);
    }
    {
      // The legacy form (deprecated in the header, still part of the library): every
      // dimension tiled, starts and sizes.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      Coverage c({5, 3, 4});
      pthreadpool_compute_3d_tiled(
          pool.get(),
          [](void* p, size_t i, size_t j, size_t k, size_t ti, size_t tj, size_t tk) {
            static_cast<Coverage*>(p)->Cover({i, j, k}, {ti, tj, tk});
          },
          &c, 5, 3, 4, 2, 2, 3);
#pragma GCC diagnostic pop
      c.ExpectEachOnce("compute_3d_tiled" + at);
    }
  }
}

TEST(OpenMpPthreadpoolTest, AnEmptyRangeCallsNothing) {
  Pool pool(pthreadpool_create(2));
  std::atomic<int> calls{0};
  pthreadpool_parallelize_2d(
      pool.get(), [](void* p, size_t, size_t) { static_cast<std::atomic<int>*>(p)->fetch_add(1); },
      &calls, 4, 0, 0);
  pthreadpool_parallelize_1d_tile_1d(
      pool.get(), [](void* p, size_t, size_t) { static_cast<std::atomic<int>*>(p)->fetch_add(1); },
      &calls, 0, 8, 0);
  EXPECT_EQ(calls.load(), 0);
}

TEST(OpenMpPthreadpoolTest, WorkRunsOnTheOpenMpTeamOfThePoolsSize) {
  struct Seen {
    std::mutex mutex;
    std::set<int> team_threads;
    std::set<int> team_sizes;
  } seen;
  Pool pool(pthreadpool_create(2));
  pthreadpool_parallelize_1d(
      pool.get(),
      [](void* p, size_t) {
        auto* s = static_cast<Seen*>(p);
        {
          std::lock_guard<std::mutex> lock(s->mutex);
          s->team_threads.insert(omp_get_thread_num());
          s->team_sizes.insert(omp_in_parallel() ? omp_get_num_threads() : 1);
        }
        // Long enough per item that both threads take some (items are handed out by chunk).
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(300);
        while (std::chrono::steady_clock::now() < until) {
        }
      },
      &seen, 64, 0);
  EXPECT_EQ(seen.team_sizes, (std::set<int>{2}));
  EXPECT_EQ(seen.team_threads, (std::set<int>{0, 1}));
  // A pool of one runs on the caller, outside any parallel region.
  Pool serial(pthreadpool_create(1));
  bool in_parallel = true;
  pthreadpool_parallelize_1d(
      serial.get(), [](void* p, size_t) { *static_cast<bool*>(p) = omp_in_parallel(); },
      &in_parallel, 1, 0);
  EXPECT_FALSE(in_parallel);
}

TEST(OpenMpPthreadpoolTest, AnotherImplementationsPoolRunsOnTheCaller) {
  // What a library holding pools of Debian's libpthreadpool hands over once XNNPACK is bound
  // here: an object of another layout (here: zeroed bytes, as large as such a pool).
  alignas(64) unsigned char foreign[512] = {};
  auto* pool = reinterpret_cast<pthreadpool_t>(foreign);
  EXPECT_EQ(pthreadpool_get_threads_count(pool), 1u);
  struct Seen {
    std::atomic<int> calls{0};
    std::atomic<int> in_parallel{0};
  } seen;
  pthreadpool_parallelize_1d(
      pool,
      [](void* p, size_t) {
        auto* s = static_cast<Seen*>(p);
        s->calls.fetch_add(1);
        if (omp_in_parallel()) s->in_parallel.fetch_add(1);
      },
      &seen, 10, 0);
  EXPECT_EQ(seen.calls.load(), 10);
  EXPECT_EQ(seen.in_parallel.load(), 0);
  pthreadpool_destroy(pool);  // not ours to free: a no-op (ASan would report a bad free)
}

TEST(OpenMpPthreadpoolTest, TheDenormalFlagHoldsForTheCallOnly) {
  constexpr unsigned kFlushBits = 0x8040;  // FTZ | DAZ
  const unsigned before = _mm_getcsr();
  _mm_setcsr(before & ~kFlushBits);
  for (size_t threads : {1, 2}) {
    Pool pool(pthreadpool_create(threads));
    std::atomic<int> flushed{0};
    std::atomic<int> calls{0};
    struct Counts {
      std::atomic<int>* flushed;
      std::atomic<int>* calls;
    } counts{&flushed, &calls};
    pthreadpool_parallelize_1d(
        pool.get(),
        [](void* p, size_t) {
          auto* c = static_cast<Counts*>(p);
          c->calls->fetch_add(1);
          if ((_mm_getcsr() & kFlushBits) == kFlushBits) c->flushed->fetch_add(1);
        },
        &counts, 16, PTHREADPOOL_FLAG_DISABLE_DENORMALS);
    EXPECT_EQ(flushed.load(), calls.load()) << threads << " threads";
    EXPECT_EQ(calls.load(), 16);
    EXPECT_EQ(_mm_getcsr() & kFlushBits, 0u) << "the caller's mode after the call";
  }
  _mm_setcsr(before);
}

}  // namespace
