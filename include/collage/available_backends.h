// The backends this process can place work on: the built-in ones, the plug-ins loaded so far,
// and the built-in ones this build left out (their library was not found), with the reason.
// `collage backends` and `collage --version` print these lists.
#pragma once

#include <string>
#include <vector>

#include "collage/status.h"

namespace collage {

class BackendRegistry;  // collage/sdk/backend.h

// The process-wide registry: every backend built into this collage, registered on first use
// (the ones linked into the library, then the engine plug-ins that ship beside it), and the
// plug-ins loaded since. Sessions and optimizes place on it.
BackendRegistry& GlobalBackendRegistry();

// One rule or fusion of a backend: a pattern of ops it offers to run as one kernel.
struct BackendRuleInfo {
  std::string name;
  std::string description;  // the ops it matches and the conditions on them
  // It propagates NaN and infinities as the ONNX spec does (SessionOptions::strict_non_finite
  // uses only these).
  bool meets_non_finite_contract = false;
};

struct BackendInfo {
  std::string name;     // what SessionOptions::backend and OptimizeOptions::backends take
  std::string version;  // the library's version
  std::string device;   // "cpu"
  // True for a backend that compiles regions of ops as a whole (its cost is not a sum over
  // single groups), to which the graph-level search offers larger regions.
  bool graph_level = false;
  std::vector<BackendRuleInfo> rules;  // its rules, then its fusions
};

// Every registered backend, in registration order ("native" first, plug-ins last).
std::vector<BackendInfo> AvailableBackends();

// A backend of this collage that cannot run here: its folder was left out of the build (its
// library was not found when building), or it is an engine's plug-in that did not load (the
// engine's library is missing on this machine; the reason is the loader's).
struct SkippedBackend {
  std::string name;
  std::string reason;
  bool built = false;  // built, but did not load at run time
};
const std::vector<SkippedBackend>& SkippedBuiltinBackends();

// Loads one backend plug-in (a shared library built with collage_plugin_module), or every
// lib*.so in a folder; its backends are then available to every session made afterwards. A
// library that is not a collage plug-in, or one built for another plug-in ABI, is refused.
Status LoadBackendPlugin(const std::string& path);
Status LoadBackendPlugins(const std::string& dir);

}  // namespace collage
