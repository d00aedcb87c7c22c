#include "ops/op_registry.h"

namespace collage {

void RegisterPoolOps(OpRegistry& registry) { (void)registry; }

}  // namespace collage
