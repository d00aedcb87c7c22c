// The process-wide registry, with every backend built into this collage registered on first
// use. It lives in its own layer, above the backends' code: the registry class (src/backend)
// is what backends are written against, this is where the built ones are gathered.
#include <cstdio>
#include <cstdlib>

#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"

namespace collage {

// Defined in the generated builtin_backends.cc (cmake/CollageBackend.cmake).
Status RegisterBuiltinBackends(BackendRegistry& registry);

namespace {

std::vector<std::string>& MutableBuiltinBackendNames() {
  static std::vector<std::string> names;
  return names;
}

}  // namespace

BackendRegistry& BackendRegistry::Global() {
  static BackendRegistry* registry = [] {
    auto* r = new BackendRegistry();
    Status status = RegisterBuiltinBackends(*r);
    if (!status.ok()) {
      // A built-in backend failing to register is a build defect, not a user error.
      fmt::print(stderr, "collage: a built-in backend failed to register: {}\n", status.message());
      std::abort();
    }
    for (const Backend* backend : r->backends()) {
      MutableBuiltinBackendNames().push_back(backend->name());
    }
    return r;
  }();
  return *registry;
}

const std::vector<std::string>& BuiltinBackendNames() {
  BackendRegistry::Global();
  return MutableBuiltinBackendNames();
}

}  // namespace collage
