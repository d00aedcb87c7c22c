// The interface for backend authors (DESIGN.md 1.3). A backend declares what it can run as
// rules (collage/sdk/rule.h) and compiles the groups it is given into Kernels; the framework
// measures, places and runs them. Lifecycle, after XNNPACK: Compile packs the weights once,
// Run binds buffers and runs, many times.
//
// A built-in backend is one folder under backends/ whose CMakeLists.txt calls
// collage_add_backend(...) naming its registration function. A plug-in is a shared library
// built against these headers that defines COLLAGE_PLUGIN(registration function); it is
// loaded at run time (--backend-path DIR) and must be built by the same compiler with the
// same kBackendAbiVersion.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collage/sdk/layout.h"
#include "collage/status.h"
#include "collage/tensor.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/subgraph.h"
#include "collage/sdk/rule.h"

namespace collage {

// Bumped whenever Backend, Kernel, CompileRequest, the pattern language or the IR change
// shape; a plug-in built against another version is refused. 2: Rule and Fusion carry the
// NaN/Inf contract declaration (PropagatesNonFinite). 3: the headers moved to collage/sdk/,
// Backend::SetNumThreads is gone (a kernel runs on CompileRequest::num_threads).
inline constexpr int kBackendAbiVersion = 3;

// The buffers of one kernel run, each in the layout the kernel declared.
struct KernelBuffers {
  std::span<const void* const> inputs;
  std::span<void* const> outputs;
  void* workspace = nullptr;  // workspace_bytes() bytes, 64-byte aligned; null when 0
};

class Kernel {
 public:
  virtual ~Kernel() = default;

  // Runs on the bound buffers. Must be safe to call from several threads at once with
  // different buffers (a kernel over a non-reentrant library object serialises itself).
  virtual Status Run(const KernelBuffers& buffers) const = 0;

  // One per kernel input (CompileRequest::inputs) and output (CompileRequest::outputs).
  const std::vector<Layout>& input_layouts() const { return input_layouts_; }
  const std::vector<Layout>& output_layouts() const { return output_layouts_; }
  size_t workspace_bytes() const { return workspace_bytes_; }

 protected:
  std::vector<Layout> input_layouts_;
  std::vector<Layout> output_layouts_;
  size_t workspace_bytes_ = 0;
};

// What Compile is asked to build: one group of nodes of a graph.
struct CompileRequest {
  const Graph* graph = nullptr;
  SubGraph nodes;
  std::string rule;              // the rule or fusion that offered the group
  std::vector<ValueId> inputs;   // non-constant values the group reads: the kernel inputs
  std::vector<ValueId> outputs;  // values the group produces for others: the kernel outputs
  int num_threads = 1;

  // Builds a request from a node set: inputs = SubGraph::Inputs minus constants,
  // outputs = SubGraph::Outputs.
  static CompileRequest For(const Graph& graph, const SubGraph& nodes, std::string rule,
                            int num_threads);
  std::vector<NodeId> node_ids() const { return nodes.Nodes(); }
  const TensorType& type(ValueId id) const { return graph->value(id).type; }
};

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

  virtual const RuleSet& rules() const = 0;

  // Compiles one candidate group. Errors say why (the framework adds backend, rule, node).
  virtual StatusOr<std::unique_ptr<Kernel>> Compile(const CompileRequest& request) const = 0;

  // A kernel converting a tensor of `type` from layout `from` to `to`, where one of them is
  // an opaque layout this backend named. Plain ↔ channels-last is the framework's own.
  virtual StatusOr<std::unique_ptr<Kernel>> CompileConversion(const TensorType& type,
                                                              const Layout& from,
                                                              const Layout& to) const;
};

class BackendRegistry {
 public:
  // The process-wide registry: built-in backends are registered on first use.
  static BackendRegistry& Global();

  // Fails when a backend of the same name exists.
  Status Register(std::unique_ptr<Backend> backend);
  // nullptr when there is none.
  const Backend* Find(const std::string& name) const;
  Backend* FindMutable(const std::string& name);
  // In registration order (built-ins first, "native" first of all).
  std::vector<const Backend*> backends() const;
  size_t size() const { return backends_.size(); }

  // Loads one plug-in (.so) / every lib*.so in a folder, refusing libraries without the
  // entry points or with another ABI version, naming the file.
  Status LoadPlugin(const std::string& path);
  Status LoadPluginsFrom(const std::string& dir);
  // The plug-ins LoadPlugin loaded, in order: a measurement worker loads the same ones.
  const std::vector<std::string>& plugin_paths() const { return plugin_paths_; }

 private:
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
