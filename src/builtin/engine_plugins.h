// The backends on engines from the package index (ONNX Runtime, OpenVINO, MKL) are plug-ins
// that ship with collage (cmake/CollageBackend.cmake, ENGINE_PLUGIN): loaded at run time from
// the folder beside libcollage.so, so that an engine missing on this machine disables its
// backend instead of stopping every program that links collage.
#pragma once

#include <string>
#include <vector>

#include "collage/available_backends.h"
#include "collage/sdk/backend.h"

namespace collage {

// <folder of libcollage.so>/collage_backends: the build's, an install's lib/collage_backends
// or the Python package's collage/collage_backends.
std::string EnginePluginDir();

// Loads libcollage_backend_<name>.so for every name of EnginePluginNames(); each one that does
// not load is returned with the loader's reason (the engine library it could not find).
std::vector<SkippedBackend> LoadEnginePlugins(BackendRegistry& registry);

}  // namespace collage
