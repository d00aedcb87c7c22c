// The interface for backend authors (DESIGN.md 1.3). A backend declares what it can run as
// rules and fusions (collage/sdk/rule.h), each with the function that compiles the groups it
// offers into Kernels (collage/sdk/kernel.h); the framework measures, places and runs them.
//
// A built-in backend is one folder under backends/ whose CMakeLists.txt calls
// collage_add_backend(...) naming its registration function. A plug-in is a shared library
// loaded at run time (--backend-path DIR): either written against the C interface
// (collage/plugin_c_api.h: any compiler, any language that exports a C function) or built
// against these headers, defining COLLAGE_PLUGIN(registration function), by the same
// compiler with the same kBackendAbiVersion.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/sdk/kernel.h"
#include "collage/sdk/layout.h"
#include "collage/sdk/rule.h"
#include "collage/status.h"

namespace collage {

// Bumped whenever Backend, Kernel, CompileRequest, the pattern language or the IR change
// shape; a plug-in built against another version is refused. 2: Rule and Fusion carry the
// NaN/Inf contract declaration (PropagatesNonFinite). 3: the headers moved to collage/sdk/,
// Backend::SetNumThreads is gone (a kernel runs on CompileRequest's thread count). 4: each rule
// and fusion carries its compile function (Rule::Compiles, with the rule's Match);
// Backend::Compile dispatches to it and is no longer virtual; CompileRequest carries the
// execution context (collage/sdk/execution_context.h) instead of a thread count. 5: rules,
// fusions, candidates and compile requests carry a precision (collage/precision.h). 6:
// Backend::has_own_thread_pool. 7: ExecutionContext::Resource takes a typed ResourceKey.
inline constexpr int kBackendAbiVersion = 7;

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;
  // Library version and the instruction set it dispatches to, e.g. "oneDNN 2.6.3 avx512_core":
  // part of every cost key, so an upgrade invalidates old measurements.
  virtual std::string version() const = 0;
  virtual std::string device() const { return "cpu"; }
  // True when the backend's cost is not additive over groups (it keeps its own layout across
  // a region or compiles a region as a whole): the graph-level search gives it larger regions.
  virtual bool graph_level() const { return false; }
  // True when the backend's kernels run on a thread pool of the library's own (an engine's
  // intra-op pool, a TBB arena) rather than on the calling thread's OpenMP team, which every
  // kernel library here shares. Measuring such a kernel, collage scrubs the caches on the
  // calling thread alone: after a scrub on the team its workers spin on for about a
  // millisecond (collage's OpenMP wait policy) on the cores the kernel's own pool is about
  // to use — a hand-off the library-switch probe prices where it happens in a plan.
  virtual bool has_own_thread_pool() const { return false; }

  virtual const RuleSet& rules() const = 0;

  // Compiles one candidate group by the rule or fusion that request.rule names: a rule's
  // compile function is handed the rule's match of exactly these nodes (the one its pattern
  // found when it offered them), a fusion's is called once the fusion admits the group. A
  // group the named rule does not offer (a plan edited by hand, another model) is refused,
  // never compiled by guesswork. Errors say why (the framework adds backend, rule, node).
  StatusOr<std::unique_ptr<Kernel>> Compile(const CompileRequest& request) const;

  // A kernel converting a tensor of `type` from layout `from` to `to`, where one of them is
  // an opaque layout this backend named. Plain ↔ channels-last is the framework's own.
  virtual StatusOr<std::unique_ptr<Kernel>> CompileConversion(const TensorType& type,
                                                              const Layout& from,
                                                              const Layout& to) const;
};

// A set of backends by name. The process-wide one, with the built-in backends, is
// GlobalBackendRegistry() (collage/available_backends.h), defined where they are gathered.
class BackendRegistry {
 public:
  // Fails when a backend of the same name exists, or when two of its rules and fusions share
  // a name or one has no compile function (each is named).
  Status Register(std::unique_ptr<Backend> backend);
  // nullptr when there is none.
  const Backend* Find(const std::string& name) const;
  Backend* FindMutable(const std::string& name);
  // In registration order (built-ins first, "native" first of all).
  std::vector<const Backend*> backends() const;
  size_t size() const { return backends_.size(); }

  // Loads one plug-in (.so) / every lib*.so in a folder: one written against the C interface
  // (collage/plugin_c_api.h, any compiler) or this C++ SDK (COLLAGE_PLUGIN, the same
  // compiler), refusing libraries without the entry points or of another version, naming
  // the file.
  Status LoadPlugin(const std::string& path);
  Status LoadPluginsFrom(const std::string& dir);
  // The plug-ins LoadPlugin loaded, in order: a measurement worker loads the same ones.
  const std::vector<std::string>& plugin_paths() const { return plugin_paths_; }

 private:
  // The two kinds of plug-in: registers the backends a loaded library declares.
  Status RegisterCppPlugin(void* handle, const std::string& path);
  Status RegisterCPlugin(void* handle, const std::string& path);

  std::vector<std::unique_ptr<Backend>> backends_;
  std::vector<void*> plugin_handles_;  // kept open for the life of the process
  std::vector<std::string> plugin_paths_;
};

// The plug-in entry points, C linkage so that dlsym finds them by name:
//   Status RegisterMyBackends(BackendRegistry& registry) { return registry.Register(...); }
//   COLLAGE_PLUGIN(RegisterMyBackends)
#define COLLAGE_PLUGIN(register_function)                                              \
  extern "C" __attribute__((visibility("default"))) int collage_plugin_abi_version() { \
    return ::collage::kBackendAbiVersion;                                             \
  }                                                                                    \
  extern "C" __attribute__((visibility("default"))) void collage_plugin_register(      \
      ::collage::BackendRegistry* registry, ::collage::Status* status) {               \
    *status = register_function(*registry);                                            \
  }

}  // namespace collage
