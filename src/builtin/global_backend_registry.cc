// The process-wide registry, with every backend built into this collage registered on first
// use: the ones linked into libcollage.so, then the engine plug-ins that ship beside it. It
// lives in its own layer, above the backends' code: the registry class (src/backend) is what
// backends are written against, this is where the built ones are gathered.
#include <cstdio>
#include <cstdlib>

#include "builtin/builtin_backends.h"
#include "builtin/engine_plugins.h"
#include "collage/sdk/errors.h"

namespace collage {

namespace {

struct BuiltinState {
  std::vector<std::string> names;
  // Left out of the build, then engine plug-ins that did not load here.
  std::vector<SkippedBackend> skipped;
};

BuiltinState& MutableBuiltinState() {
  static BuiltinState state;
  return state;
}

}  // namespace

BackendRegistry& GlobalBackendRegistry() {
  static BackendRegistry* registry = [] {
    auto* r = new BackendRegistry();
    Status status = RegisterBuiltinBackends(*r);
    if (!status.ok()) {
      // A built-in backend failing to register is a build defect, not a user error.
      fmt::print(stderr, "collage: a built-in backend failed to register: {}\n", status.message());
      std::abort();
    }
    BuiltinState& state = MutableBuiltinState();
    state.skipped = BackendsLeftOutOfBuild();
    for (SkippedBackend& unavailable : LoadEnginePlugins(*r)) {
      state.skipped.push_back(std::move(unavailable));
    }
    for (const Backend* backend : r->backends()) state.names.push_back(backend->name());
    return r;
  }();
  return *registry;
}

const std::vector<std::string>& BuiltinBackendNames() {
  GlobalBackendRegistry();
  return MutableBuiltinState().names;
}

const std::vector<SkippedBackend>& SkippedBuiltinBackends() {
  GlobalBackendRegistry();
  return MutableBuiltinState().skipped;
}

}  // namespace collage
