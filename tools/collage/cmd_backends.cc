// `collage backends [-v]`: every registered backend (built in and plug-ins) with its
// version, device and rules; -v lists the rules themselves, marking those that meet the NaN/Inf
// contract (the ones --strict-nan uses).
#include <cstdio>

#include "backend/skipped_backends.h"
#include "collage/backend.h"
#include "commands.h"

namespace collage::cli {

namespace {

struct BackendsFlags {
  bool verbose = false;
  std::vector<std::string> plugin_dirs;
};

int RunBackends(const BackendsFlags& flags) {
  if (Status s = LoadPlugins(flags.plugin_dirs); !s.ok()) return ReportError(s);
  std::printf("%-14s %-6s %-6s %-11s %s\n", "backend", "device", "rules", "level", "version");
  for (const Backend* backend : BackendRegistry::Global().backends()) {
    const RuleSet& rules = backend->rules();
    std::printf("%-14s %-6s %-6zu %-11s %s\n", backend->name().c_str(), backend->device().c_str(),
                rules.size(), backend->graph_level() ? "graph-level" : "op-level",
                backend->version().c_str());
    if (!flags.verbose) continue;
    auto strict = [](bool meets) { return meets ? "  [strict-nan]" : ""; };
    for (const Rule& rule : rules.rules()) {
      std::printf("    %-22s %s%s\n", rule.name().c_str(), rule.Describe().c_str(),
                  strict(rule.meets_non_finite_contract()));
    }
    for (const Fusion& fusion : rules.fusions()) {
      std::printf("    %-22s %s%s\n", fusion.name().c_str(), fusion.Describe().c_str(),
                  strict(fusion.meets_non_finite_contract()));
    }
  }
  for (const SkippedBackend& skipped : SkippedBuiltinBackends()) {
    std::printf("%-14s not built: %s\n", skipped.name.c_str(), skipped.reason.c_str());
  }
  return 0;
}

}  // namespace

void AddBackendsCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BackendsFlags>();
  CLI::App* cmd = app.add_subcommand("backends", "List the backends, their versions and rules");
  cmd->add_flag(
      "-v,--verbose", flags->verbose,
      "Also list every rule ([strict-nan]: meets the NaN/Inf contract, used by --strict-nan)");
  AddPluginOption(cmd, flags->plugin_dirs);
  cmd->callback([flags, &exit_code] { exit_code = RunBackends(*flags); });
}

}  // namespace collage::cli
