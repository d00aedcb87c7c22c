#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "backend/plugin_file_checks.h"
#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"

namespace collage {

Status BackendRegistry::Register(std::unique_ptr<Backend> backend) {
  if (backend == nullptr) return InvalidArgument("cannot register a null backend");
  std::string name = backend->name();
  if (name.empty() || name.find_first_of(":, ") != std::string::npos) {
    return InvalidArgument("backend name '{}' must be non-empty without ':', ',' or spaces", name);
  }
  if (Find(name) != nullptr) return InvalidArgument("a backend named '{}' is already registered", name);
  if (Status complete = backend->rules().CheckComplete(); !complete.ok()) {
    return InvalidArgument("backend '{}': {}", name, complete.message());
  }
  backends_.push_back(std::move(backend));
  return Status();
}

const Backend* BackendRegistry::Find(const std::string& name) const {
  return const_cast<BackendRegistry*>(this)->FindMutable(name);
}

Backend* BackendRegistry::FindMutable(const std::string& name) {
  for (const auto& backend : backends_) {
    if (backend->name() == name) return backend.get();
  }
  return nullptr;
}

std::vector<const Backend*> BackendRegistry::backends() const {
  std::vector<const Backend*> list;
  for (const auto& backend : backends_) list.push_back(backend.get());
  return list;
}

namespace {

constexpr const char* kAbiEntry = "collage_plugin_abi_version";
constexpr const char* kRegisterEntry = "collage_plugin_register";

// The same file named twice (a folder in COLLAGE_BACKEND_PATH and --backend-path, or by a
// link) is the same plug-in: compared by what the paths lead to.
bool SameFile(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::equivalent(a, b, error) && !error;
}

// True when `address`, found by dlsym, is a function in the library's symbol table (the
// file was checked before dlopen; this checks what the loader actually bound).
bool IsFunctionSymbol(void* address) {
  Dl_info info{};
  void* entry = nullptr;
  if (dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return false;
  return IsElfFunction(static_cast<const ElfW(Sym)*>(entry)->st_info);
}

}  // namespace

Status BackendRegistry::LoadPlugin(const std::string& path) {
  for (const std::string& loaded : plugin_paths_) {
    if (SameFile(loaded, path)) return Status();
  }
  // Read as data first: dlopen would run a library's constructors (or wait on a FIFO)
  // before its entry points could be looked at.
  COLLAGE_RETURN_IF_ERROR(CheckPluginFile(path, {kAbiEntry, kRegisterEntry}));
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return NotFound("cannot load backend plug-in '{}': {}", path, why ? why : "unknown error");
  }
  using AbiFn = int (*)();
  using RegisterFn = void (*)(BackendRegistry*, Status*);
  void* abi_address = dlsym(handle, kAbiEntry);
  void* reg_address = dlsym(handle, kRegisterEntry);
  if (abi_address == nullptr || reg_address == nullptr || !IsFunctionSymbol(abi_address) ||
      !IsFunctionSymbol(reg_address)) {
    plugin_handles_.push_back(handle);  // its constructors ran: its code may be in use
    return InvalidArgument(
        "'{}' is not a collage backend plug-in: it does not export collage_plugin_abi_version "
        "and collage_plugin_register as functions (define them with COLLAGE_PLUGIN)",
        path);
  }
  auto abi = reinterpret_cast<AbiFn>(abi_address);
  auto reg = reinterpret_cast<RegisterFn>(reg_address);
  int version = abi();
  if (version != kBackendAbiVersion) {
    dlclose(handle);
    return InvalidArgument(
        "backend plug-in '{}' was built for backend ABI version {}, this collage has version {}: "
        "rebuild the plug-in against this collage's headers",
        path, version, kBackendAbiVersion);
  }
  size_t before = backends_.size();
  Status status;
  reg(this, &status);
  if (!status.ok()) {
    // Backends it registered may point into its code: keep the library loaded, drop them.
    backends_.resize(before);
    plugin_handles_.push_back(handle);
    return Status(status.code(), fmt::format("backend plug-in '{}': {}", path, status.message()));
  }
  if (backends_.size() == before) {
    plugin_handles_.push_back(handle);
    return InvalidArgument("backend plug-in '{}' registered no backend", path);
  }
  plugin_handles_.push_back(handle);
  plugin_paths_.push_back(path);
  return Status();
}

Status BackendRegistry::LoadPluginsFrom(const std::string& dir) {
  COLLAGE_RETURN_IF_ERROR(CheckPluginFolder(dir));
  std::error_code error;
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    std::string file = entry.path().filename().string();
    if (file.rfind("lib", 0) == 0 && entry.path().extension() == ".so") {
      paths.push_back(entry.path().string());
    }
  }
  if (error) return IoError("cannot list backend plug-in folder '{}': {}", dir, error.message());
  if (paths.empty()) return NotFound("no backend plug-in (lib*.so) in '{}'", dir);
  std::sort(paths.begin(), paths.end());
  for (const std::string& path : paths) COLLAGE_RETURN_IF_ERROR(LoadPlugin(path));
  return Status();
}

}  // namespace collage
