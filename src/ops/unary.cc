#include "ops/op_registry.h"

namespace collage {

void RegisterUnaryOps(OpRegistry& registry) { (void)registry; }

}  // namespace collage
