// The backends this build registered from its backend folders, as opposed to plug-ins loaded
// later into the same registry: what tests and tools enumerate as "every built-in backend".
#pragma once

#include <string>
#include <vector>

#include "collage/available_backends.h"
#include "collage/sdk/backend.h"

namespace collage {

// In registration order ("native" first, the engine plug-ins that loaded last), as
// GlobalBackendRegistry() registered them.
const std::vector<std::string>& BuiltinBackendNames();

// Defined in the generated builtin_backends.cc (cmake/CollageBackend.cmake):
// registers the backends linked into libcollage.so;
Status RegisterBuiltinBackends(BackendRegistry& registry);
// the backends built as engine plug-ins (collage_add_backend ... ENGINE_PLUGIN), which the
// registry loads from EnginePluginDir();
const std::vector<std::string>& EnginePluginNames();
// the backend folders whose library the build did not find.
const std::vector<SkippedBackend>& BackendsLeftOutOfBuild();

}  // namespace collage
