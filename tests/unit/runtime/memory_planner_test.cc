#include <gtest/gtest.h>

#include <random>

#include "runtime/memory_planner.h"

namespace collage {
namespace {

void ExpectNoLiveOverlap(const std::vector<BufferRequest>& requests, const MemoryPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0u);
    EXPECT_LE(plan.offsets[i] + requests[i].bytes, plan.arena_bytes);
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!LifetimesOverlap(requests[i], requests[j])) continue;
      bool disjoint = plan.offsets[i] + requests[i].bytes <= plan.offsets[j] ||
                      plan.offsets[j] + requests[j].bytes <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j << " are live together and overlap";
    }
  }
}

TEST(MemoryPlannerTest, ChainReusesMemory) {
  // a → b → c → d: each buffer only lives with its neighbour, so two slots suffice.
  std::vector<BufferRequest> requests = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  MemoryPlan plan = PlanMemory(requests);
  ExpectNoLiveOverlap(requests, plan);
  EXPECT_EQ(plan.arena_bytes, 2 * 1024u);
}

TEST(MemoryPlannerTest, RandomLifetimesNeverOverlapWhileLive) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferRequest> requests;
    size_t total = 0;
    for (int i = 0; i < 60; ++i) {
      int first = static_cast<int>(rng() % 40);
      int last = first + static_cast<int>(rng() % 10);
      size_t bytes = rng() % 5000;
      requests.push_back({bytes, first, last});
      total += bytes;
    }
    MemoryPlan plan = PlanMemory(requests);
    ExpectNoLiveOverlap(requests, plan);
    EXPECT_LT(plan.arena_bytes, total + 60 * kArenaAlignment);
  }
}

TEST(MemoryPlannerTest, EmptyAndZeroSized) {
  EXPECT_EQ(PlanMemory({}).arena_bytes, 0u);
  std::vector<BufferRequest> requests = {{0, 0, 0}, {0, 0, 0}};
  MemoryPlan plan = PlanMemory(requests);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);  // distinct pointers even when empty
}

}  // namespace
}  // namespace collage
