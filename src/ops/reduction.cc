#include "ops/op_registry.h"

namespace collage {

void RegisterReductionOps(OpRegistry& registry) { (void)registry; }

}  // namespace collage
