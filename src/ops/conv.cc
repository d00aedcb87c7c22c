#include "ops/op_registry.h"

namespace collage {

void RegisterConvOps(OpRegistry& registry) { (void)registry; }

}  // namespace collage
