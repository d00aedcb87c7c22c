// The backends this build registered from its backend folders, as opposed to plug-ins loaded
// later into the same registry: what tests and tools enumerate as "every built-in backend".
#pragma once

#include <string>
#include <vector>

namespace collage {

// In registration order ("native" first), as BackendRegistry::Global() registered them.
const std::vector<std::string>& BuiltinBackendNames();

}  // namespace collage
