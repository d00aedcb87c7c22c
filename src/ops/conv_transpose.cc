#include "ops/op_registry.h"

namespace collage {

void RegisterConvTransposeOps(OpRegistry& registry) { (void)registry; }

}  // namespace collage
