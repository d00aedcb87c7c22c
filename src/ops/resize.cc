#include "ops/op_registry.h"

namespace collage {

void RegisterResizeOps(OpRegistry& registry) { (void)registry; }

}  // namespace collage
