// OptimizeReport's one function (collage/optimize.h).
#include "collage/optimize.h"

namespace collage {

bool OptimizeReport::TakeInRunProfile(RunProfile profile) {
  in_run = std::move(profile);
  // Each group's step carries its index in the kept placement, whose groups the report lists
  // in the same order.
  std::vector<const NodeTiming*> steps(groups.size(), nullptr);
  for (const NodeTiming& step : in_run.nodes) {
    if (IsConversion(step)) continue;
    if (step.group < 0 || static_cast<size_t>(step.group) >= steps.size() ||
        steps[static_cast<size_t>(step.group)] != nullptr) {
      return false;
    }
    steps[static_cast<size_t>(step.group)] = &step;
  }
  for (const NodeTiming* step : steps) {
    if (step == nullptr) return false;
  }
  for (size_t g = 0; g < steps.size(); ++g) groups[g].in_run_ms = steps[g]->milliseconds;
  return true;
}

}  // namespace collage
