#include "ops/op_registry.h"

namespace collage {

void RegisterNormalizationOps(OpRegistry& registry) { (void)registry; }

}  // namespace collage
