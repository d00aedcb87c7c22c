// Static memory planning: every intermediate tensor gets an offset in one arena, chosen
// once from liveness intervals, so running a model allocates nothing.
#pragma once

#include <cstddef>
#include <vector>

namespace collage {

struct BufferRequest {
  size_t bytes = 0;
  int first_step = 0;  // step that writes the buffer
  int last_step = 0;   // last step that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per request, aligned to kArenaAlignment
  size_t arena_bytes = 0;
};

inline constexpr size_t kArenaAlignment = 64;

// Greedy by size (largest first): each buffer takes the lowest aligned offset that does not
// overlap any already placed buffer whose lifetime intersects its own. Buffers whose
// lifetimes do not intersect may share memory.
MemoryPlan PlanMemory(const std::vector<BufferRequest>& requests);

// True when two requests are live at a common step.
bool LifetimesOverlap(const BufferRequest& a, const BufferRequest& b);

}  // namespace collage
