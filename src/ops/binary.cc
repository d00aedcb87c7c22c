#include "ops/op_registry.h"

namespace collage {

void RegisterBinaryOps(OpRegistry& registry) { (void)registry; }

}  // namespace collage
