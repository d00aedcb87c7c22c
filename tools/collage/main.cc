// collage: the command line. Subcommands live in cmd_*.cc, one file each.
#include <csignal>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "commands.h"
#include "flag_suggestion.h"

namespace {

// The word given where a command was expected that names none ("collage frobnicate",
// "collage zoo frob"), with the commands that exist there; empty when that is not the error.
std::string UnknownCommand(CLI::App& app, int argc, char** argv) {
  CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') return "";
    const std::vector<CLI::App*> commands = current->get_subcommands(nullptr);
    if (commands.empty()) return "";
    CLI::App* next = nullptr;
    std::string names;
    for (CLI::App* command : commands) {
      if (command->get_name() == word) next = command;
      names += (names.empty() ? "" : ", ") + command->get_name();
    }
    if (next == nullptr) return "unknown command '" + word + "' (commands: " + names + ")";
    current = next;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  // The OpenMP wait policy is already in effect: thread_policy_preinit.cc sets it before
  // the libraries start.
  // A file-size limit (ulimit -f) then fails the write with EFBIG, which is reported and
  // cleaned up like a full disk, instead of killing the process mid-file.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"collage: run ONNX models on the best mix of backend libraries"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] { return collage::cli::VersionText(); },
                       "Print collage's version and every backend's library version");
  int exit_code = 0;
  collage::cli::AddDemoCommand(app, exit_code);
  collage::cli::AddInfoCommand(app, exit_code);
  collage::cli::AddRunCommand(app, exit_code);
  collage::cli::AddBenchCommand(app, exit_code);
  collage::cli::AddZooCommand(app, exit_code);
  collage::cli::AddBackendsCommand(app, exit_code);
  collage::cli::AddOptimizeCommand(app, exit_code);
  collage::cli::AddCostsCommand(app, exit_code);
  collage::cli::AddRayCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and friends print what was asked for; a command line that does not parse gets
    // the same "error:" line as every other error, and exit code 2.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::string unknown = UnknownCommand(app, argc, argv);
    if (unknown.empty()) unknown = collage::cli::UnknownFlag(app, argc, argv);
    std::fprintf(stderr, "error: %s\nRun with --help for more information.\n",
                 unknown.empty() ? e.what() : unknown.c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "error: out of memory: loading or running the model needed more than this "
                 "machine could give (weights and node count set what loading needs; input "
                 "shapes set what intermediate values and outputs need)\n");
    return 1;
  } catch (const std::exception& e) {  // e.g. std::filesystem errors: never an abort
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
