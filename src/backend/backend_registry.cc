#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <mutex>

#include "backend/c_plugin_backend.h"
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

// The C interface's one entry point (collage/plugin_c_api.h) and the C++ SDK's two.
constexpr const char* kCEntry = COLLAGE_C_PLUGIN_ENTRY_NAME;
constexpr const char* kAbiEntry = "collage_plugin_abi_version";
constexpr const char* kRegisterEntry = "collage_plugin_register";
constexpr const char* kNotAPlugin =
    "'{}' is not a collage backend plug-in: it exports neither collage_c_plugin_v1 (define it "
    "with COLLAGE_C_PLUGIN, collage/plugin_c_api.h) nor collage_plugin_abi_version and "
    "collage_plugin_register (define them with COLLAGE_PLUGIN, collage/sdk/backend.h)";
// More tables than any library has backends: a count beyond it is a plug-in's mistake.
constexpr int32_t kMaxBackendsPerPlugin = 64;

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
  COLLAGE_ASSIGN_OR_RETURN(const std::set<std::string> entries,
                           CheckPluginFile(path, {kCEntry, kAbiEntry, kRegisterEntry}));
  const bool c_interface = entries.count(kCEntry) != 0;
  if (!c_interface && (entries.count(kAbiEntry) == 0 || entries.count(kRegisterEntry) == 0)) {
    return InvalidArgument(kNotAPlugin, path);
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return NotFound("cannot load backend plug-in '{}': {}", path, why ? why : "unknown error");
  }
  const size_t before = backends_.size();
  Status status = c_interface ? RegisterCPlugin(handle, path) : RegisterCppPlugin(handle, path);
  if (status.ok() && backends_.size() == before) {
    status = InvalidArgument("backend plug-in '{}' registered no backend", path);
  }
  if (!status.ok()) {
    // Backends it registered may point into its code, and its constructors ran: drop the
    // backends, keep the library loaded.
    backends_.resize(before);
    plugin_handles_.push_back(handle);
    return status;
  }
  plugin_handles_.push_back(handle);
  plugin_paths_.push_back(path);
  return Status();
}

Status BackendRegistry::RegisterCppPlugin(void* handle, const std::string& path) {
  using AbiFn = int (*)();
  using RegisterFn = void (*)(BackendRegistry*, Status*);
  void* abi_address = dlsym(handle, kAbiEntry);
  void* reg_address = dlsym(handle, kRegisterEntry);
  if (abi_address == nullptr || reg_address == nullptr || !IsFunctionSymbol(abi_address) ||
      !IsFunctionSymbol(reg_address)) {
    return InvalidArgument(kNotAPlugin, path);
  }
  int version = reinterpret_cast<AbiFn>(abi_address)();
  if (version != kBackendAbiVersion) {
    return InvalidArgument(
        "backend plug-in '{}' was built for backend ABI version {}, this collage has version {}: "
        "rebuild the plug-in against this collage's headers",
        path, version, kBackendAbiVersion);
  }
  Status status;
  reinterpret_cast<RegisterFn>(reg_address)(this, &status);
  if (!status.ok()) {
    return Status(status.code(), fmt::format("backend plug-in '{}': {}", path, status.message()));
  }
  return Status();
}

Status BackendRegistry::RegisterCPlugin(void* handle, const std::string& path) {
  void* address = dlsym(handle, kCEntry);
  if (address == nullptr || !IsFunctionSymbol(address)) return InvalidArgument(kNotAPlugin, path);
  const CollageBackendTable* tables = nullptr;
  int32_t count = 0;
  std::array<char, 1024> message{};
  if (reinterpret_cast<CollageCPluginEntry>(address)(&CPluginHostApi(), &tables, &count,
                                                      message.data(), message.size()) != 0) {
    message.back() = '\0';
    return InvalidArgument("backend plug-in '{}' failed to start: {}", path,
                           message[0] != '\0' ? message.data() : "no reason given");
  }
  if (count < 0 || count > kMaxBackendsPerPlugin || (count > 0 && tables == nullptr)) {
    return InvalidArgument("backend plug-in '{}' returned {} backend tables{}", path, count,
                           tables == nullptr ? " and no array of them" : "");
  }
  for (int32_t i = 0; i < count; ++i) {
    COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, MakeCPluginBackend(tables[i], path));
    if (Status registered = Register(std::move(backend)); !registered.ok()) {
      return Status(registered.code(),
                    fmt::format("backend plug-in '{}': {}", path, registered.message()));
    }
  }
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
