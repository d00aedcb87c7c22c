#include "ops/op_registry.h"

namespace collage {

void RegisterRecurrentOps(OpRegistry& registry) { (void)registry; }

}  // namespace collage
