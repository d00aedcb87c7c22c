// The public list of backends (collage/available_backends.h), read from the process-wide
// registry. SkippedBuiltinBackends is defined beside the registry (global_backend_registry.cc).
#include "collage/available_backends.h"

#include "collage/sdk/backend.h"

namespace collage {

namespace {

template <typename RuleOrFusion>
BackendRuleInfo RuleInfoOf(const RuleOrFusion& rule) {
  return {rule.name(), rule.Describe(), rule.meets_non_finite_contract()};
}

}  // namespace

std::vector<BackendInfo> AvailableBackends() {
  std::vector<BackendInfo> list;
  for (const Backend* backend : GlobalBackendRegistry().backends()) {
    BackendInfo info{backend->name(), backend->version(), backend->device(),
                     backend->graph_level(), {}};
    for (const Rule& rule : backend->rules().rules()) info.rules.push_back(RuleInfoOf(rule));
    for (const Fusion& fusion : backend->rules().fusions()) info.rules.push_back(RuleInfoOf(fusion));
    list.push_back(std::move(info));
  }
  return list;
}

Status LoadBackendPlugin(const std::string& path) {
  return GlobalBackendRegistry().LoadPlugin(path);
}

Status LoadBackendPlugins(const std::string& dir) {
  return GlobalBackendRegistry().LoadPluginsFrom(dir);
}

}  // namespace collage
