#include "onnxruntime_library.h"

#include <dlfcn.h>

#include <filesystem>
#include <vector>

#include <fmt/format.h>

namespace collage::onnxruntime {
namespace {

// This plug-in's own folder (dladdr on a function of it).
std::filesystem::path PluginDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&LoadedApiBase), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  std::error_code error;
  std::filesystem::path path = std::filesystem::canonical(info.dli_fname, error);
  return error ? std::filesystem::path() : path.parent_path();
}

// Where to look, first found wins: an install's lib/collage_engines (beside
// lib/collage_backends), the onnxruntime wheel beside the collage Python package
// (site-packages/collage/collage_backends → site-packages/onnxruntime/capi), then the
// library this plug-in was built against.
std::vector<std::filesystem::path> Candidates() {
  const std::filesystem::path dir = PluginDir();
  std::vector<std::filesystem::path> candidates;
  if (!dir.empty()) {
    candidates.push_back(dir.parent_path() / "collage_engines" / COLLAGE_ORT_LIBRARY_NAME);
    candidates.push_back(dir.parent_path().parent_path() / "onnxruntime" / "capi" /
                         COLLAGE_ORT_LIBRARY_NAME);
  }
  candidates.push_back(COLLAGE_ORT_BUILD_LIBRARY);
  return candidates;
}

struct Loaded {
  const OrtApiBase* base = nullptr;
  std::string problem;
};

Loaded Load() {
  std::string tried;
  for (const std::filesystem::path& candidate : Candidates()) {
    std::error_code error;
    if (!std::filesystem::exists(candidate, error)) {
      tried += fmt::format("{}{} (absent)", tried.empty() ? "" : ", ", candidate.string());
      continue;
    }
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += fmt::format("{}{} ({})", tried.empty() ? "" : ", ", candidate.string(),
                           why ? why : "not loadable");
      continue;
    }
    // Kept open for the life of the process: sessions and the environment live in it.
    using GetApiBase = const OrtApiBase* (*)();
    auto get = reinterpret_cast<GetApiBase>(dlsym(handle, "OrtGetApiBase"));
    if (get == nullptr) {
      tried += fmt::format("{}{} (no OrtGetApiBase)", tried.empty() ? "" : ", ", candidate.string());
      continue;
    }
    return {get(), ""};
  }
  return {nullptr, fmt::format("ONNX Runtime's library {} was not found: tried {}",
                               COLLAGE_ORT_LIBRARY_NAME, tried)};
}

}  // namespace

const OrtApiBase* LoadedApiBase(std::string* problem) {
  static const Loaded loaded = Load();
  if (problem != nullptr) *problem = loaded.problem;
  return loaded.base;
}

}  // namespace collage::onnxruntime
