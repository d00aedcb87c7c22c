#include "runtime/memory_planner.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace collage {

namespace {
size_t AlignUp(size_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }
}  // namespace

bool LifetimesOverlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}

MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests) {
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return requests[a].bytes > requests[b].bytes;
  });

  std::vector<size_t> placed;  // indices of requests already given an offset
  for (size_t r : order) {
    const size_t size = AlignUp(std::max<size_t>(requests[r].bytes, 1));
    // Occupied ranges of conflicting buffers, sorted by offset; take the first gap that fits.
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t p : placed) {
      if (LifetimesOverlap(requests[r], requests[p])) {
        busy.emplace_back(plan.offsets[p], plan.offsets[p] + AlignUp(std::max<size_t>(requests[p].bytes, 1)));
      }
    }
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + size <= begin) break;
      offset = std::max(offset, end);
    }
    plan.offsets[r] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    placed.push_back(r);
  }
  return plan;
}

}  // namespace collage
