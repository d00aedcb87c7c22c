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

  // Placed buffers filed under every block of kStepsPerBlock steps their lifetime touches, so
  // that a buffer's conflicts are looked for among the buffers of its own blocks, not among
  // every buffer placed (a model of 100,000 steps plans in well under a second).
  constexpr int kStepsPerBlock = 64;
  auto block_of = [](int step) { return static_cast<size_t>(std::max(step, 0) / kStepsPerBlock); };
  int last_step = 0;
  for (const BufferRequest& r : requests) last_step = std::max(last_step, r.last_step);
  std::vector<std::vector<size_t>> placed_in_block(block_of(last_step) + 1);
  // seen_by[p] == r + 1 once placed buffer p was looked at for request r: a buffer filed
  // under several blocks counts once.
  std::vector<size_t> seen_by(requests.size(), 0);
  auto footprint = [&](size_t r) { return AlignUp(std::max<size_t>(requests[r].bytes, 1)); };

  for (size_t r : order) {
    const size_t size = footprint(r);
    const size_t first_block = block_of(requests[r].first_step);
    const size_t last_block = std::max(first_block, block_of(requests[r].last_step));
    // Occupied ranges of conflicting buffers, sorted by offset; take the first gap that fits.
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t b = first_block; b <= last_block; ++b) {
      for (size_t p : placed_in_block[b]) {
        if (seen_by[p] == r + 1) continue;
        seen_by[p] = r + 1;
        if (LifetimesOverlap(requests[r], requests[p])) {
          busy.emplace_back(plan.offsets[p], plan.offsets[p] + footprint(p));
        }
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
    for (size_t b = first_block; b <= last_block; ++b) placed_in_block[b].push_back(r);
  }
  return plan;
}

}  // namespace collage
