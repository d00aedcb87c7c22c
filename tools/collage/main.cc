// collage: the command line. Subcommands live in cmd_*.cc, one file each.
#include <csignal>
#include <cstdio>
#include <new>

#include "commands.h"

int main(int argc, char** argv) {
  // The OpenMP wait policy is already in effect: thread_policy_preinit.cc sets it before
  // the libraries start.
  // A file-size limit (ulimit -f) then fails the write with EFBIG, which is reported and
  // cleaned up like a full disk, instead of killing the process mid-file.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"collage: run ONNX models on the best mix of backend libraries"};
  app.require_subcommand(1);
  int exit_code = 0;
  collage::cli::AddDemoCommand(app, exit_code);
  collage::cli::AddInfoCommand(app, exit_code);
  collage::cli::AddRunCommand(app, exit_code);
  collage::cli::AddBenchCommand(app, exit_code);
  collage::cli::AddZooCommand(app, exit_code);
  collage::cli::AddBackendsCommand(app, exit_code);
  collage::cli::AddOptimizeCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and friends print what was asked for; a command line that does not parse gets
    // the same "error:" line as every other error, and exit code 2.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "error: %s\nRun with --help for more information.\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {  // e.g. std::filesystem errors: never an abort
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
