#include "builtin/engine_plugins.h"

#include <dlfcn.h>

#include <filesystem>

#include "builtin/builtin_backends.h"

namespace collage {

std::string EnginePluginDir() {
  // The file this function's code was loaded from is libcollage.so (every program links it).
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&EnginePluginDir), &info) == 0 || info.dli_fname == nullptr) {
    return "";
  }
  std::error_code error;
  std::filesystem::path library = std::filesystem::canonical(info.dli_fname, error);
  if (error) return "";
  return (library.parent_path() / "collage_backends").string();
}

std::vector<SkippedBackend> LoadEnginePlugins(BackendRegistry& registry) {
  std::vector<SkippedBackend> unavailable;
  const std::string dir = EnginePluginDir();
  for (const std::string& name : EnginePluginNames()) {
    const std::string path = dir + "/libcollage_backend_" + name + ".so";
    std::error_code error;
    if (dir.empty() || !std::filesystem::exists(path, error)) {
      unavailable.push_back({name, "its plug-in is not installed (no " + path + ")", true});
      continue;
    }
    if (Status loaded = registry.LoadPlugin(path); !loaded.ok()) {
      unavailable.push_back({name, loaded.message(), true});
    }
  }
  return unavailable;
}

}  // namespace collage
