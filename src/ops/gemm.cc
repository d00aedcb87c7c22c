#include "ops/op_registry.h"

namespace collage {

void RegisterGemmOps(OpRegistry& registry) { (void)registry; }

}  // namespace collage
