// `collage backends [-v]`: every registered backend (built in and plug-ins) with its
// version, device and rules; -v lists the rules themselves, marking those that meet the NaN/Inf
// contract (the ones --strict-nan uses).
#include <cstdio>

#include <fmt/format.h>

#include "collage/available_backends.h"
#include "collage/version.h"
#include "commands.h"

namespace collage::cli {

namespace {

struct BackendsFlags {
  bool verbose = false;
  std::vector<std::string> plugin_dirs;
};

constexpr size_t kLineWidth = 100;
constexpr size_t kRuleIndent = 4 + 22 + 1;          // "    " + the rule's name column + a space
constexpr size_t kVersionIndent = 15 + 7 + 7 + 12;  // the columns before the version
constexpr size_t kNameIndent = 15;                  // the backend's name column

// `text` cut at spaces into lines of at most kLineWidth - indent characters, every line
// after the first indented by `indent`; a word longer than a line is cut.
std::string Wrap(const std::string& text, size_t indent) {
  const size_t width = kLineWidth - indent;
  std::string out, line;
  auto flush = [&] {
    if (!out.empty()) out += "\n" + std::string(indent, ' ');
    out += line;
    line.clear();
  };
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    start = end + 1;
    while (word.size() > width) {  // a word that fits no line
      if (!line.empty()) flush();
      line = word.substr(0, width);
      word = word.substr(width);
      flush();
    }
    if (!line.empty() && line.size() + 1 + word.size() > width) flush();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty() || out.empty()) flush();
  return out;
}

void PrintRule(const std::string& name, const std::string& description, bool strict) {
  std::printf("    %-22s %s\n", name.c_str(),
              Wrap(description + (strict ? "  [strict-nan]" : ""), kRuleIndent).c_str());
}

// "not built: <reason>" for a backend left out of the build, "unavailable: <reason>" for an
// engine's plug-in that did not load here.
std::string SkippedText(const SkippedBackend& skipped) {
  return (skipped.built ? "unavailable: " : "not built: ") + skipped.reason;
}

int RunBackends(const BackendsFlags& flags) {
  if (Status s = LoadPlugins(flags.plugin_dirs); !s.ok()) return ReportError(s);
  std::printf("%-14s %-6s %-6s %-11s %s\n", "backend", "device", "rules", "level", "version");
  for (const BackendInfo& backend : AvailableBackends()) {
    std::printf("%-14s %-6s %-6zu %-11s %s\n", backend.name.c_str(), backend.device.c_str(),
                backend.rules.size(), backend.graph_level ? "graph-level" : "op-level",
                Wrap(backend.version, kVersionIndent).c_str());
    if (!flags.verbose) continue;
    for (const BackendRuleInfo& rule : backend.rules) {
      PrintRule(rule.name, rule.description, rule.meets_non_finite_contract);
    }
  }
  for (const SkippedBackend& skipped : SkippedBuiltinBackends()) {
    std::printf("%-14s %s\n", skipped.name.c_str(),
                Wrap(SkippedText(skipped), kNameIndent).c_str());
  }
  return 0;
}

}  // namespace

std::string VersionText() {
  std::string text = fmt::format("collage {}\n", Version());
  for (const BackendInfo& backend : AvailableBackends()) {
    text += fmt::format("  {:<14} {}\n", backend.name, backend.version);
  }
  for (const SkippedBackend& skipped : SkippedBuiltinBackends()) {
    text += fmt::format("  {:<14} {}\n", skipped.name, SkippedText(skipped));
  }
  text.pop_back();  // CLI11 ends the text with its own newline
  return text;
}

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
