#include "ops/op_registry.h"

namespace collage {

void RegisterShapeOps(OpRegistry& registry) { (void)registry; }

}  // namespace collage
