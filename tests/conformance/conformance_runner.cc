// collage_conformance: runs every case folder under DIR (ONNX backend-test layout, see
// conformance_case.h) through collage::Session and checks the outputs.
//
//   collage_conformance DIR [--filter SUBSTR] [--verbose] [--rtol R] [--atol A] [--rel-to-max]
//                           [--list-unsupported] [--timeout S] [--threads N] [--no-fork]
//                           [--backend NAME] [--exclude CASE]... [--quantization-tolerance]
//
// One line per case (PASS / FAIL / SKIP), then the closing line
//   conformance: N passed, N failed, N skipped
// Exit status 1 if any case failed, 2 on a usage error or when no case was found, else 0.
// There is no list of expected failures: every FAIL is a real one.
//
// Each case runs in a child process (unless --no-fork), so that a crash or a hang in one
// kernel is reported as that case's failure and the run goes on with the next.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "conformance_case.h"
#include "unsupported_reason.h"

namespace fs = std::filesystem;
using collage::conformance::CaseOptions;
using collage::conformance::CaseResult;
using collage::conformance::Outcome;

namespace {

struct Flags {
  std::string dir;
  std::string filter;
  std::vector<std::string> excluded;
  bool verbose = false;
  bool list_unsupported = false;
  bool no_fork = false;
  double timeout_s = 600;
  CaseOptions case_options;
};

// Case folders: DIR itself if it holds model.onnx, else its sub-folders that do, by name.
std::vector<fs::path> FindCases(const fs::path& dir, const std::string& filter,
                                const std::vector<std::string>& excluded) {
  std::vector<fs::path> cases;
  if (fs::exists(dir / "model.onnx")) {
    cases.push_back(dir);
  } else {
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      if (entry.is_directory() && fs::exists(entry.path() / "model.onnx")) {
        cases.push_back(entry.path());
      }
    }
  }
  std::erase_if(cases, [&](const fs::path& p) {
    const std::string name = p.filename().string();
    return name.find(filter) == std::string::npos ||
           std::any_of(excluded.begin(), excluded.end(),
                       [&](const std::string& e) { return name == e; });
  });
  std::sort(cases.begin(), cases.end());
  return cases;
}

// Serialises a result for the pipe from child to parent: outcome letter, then the message.
std::string Encode(const CaseResult& r) { return std::string(1, OutcomeName(r.outcome)[0]) + r.message; }

CaseResult Decode(const std::string& bytes) {
  if (bytes.empty()) return {Outcome::kFail, "the case process exited without a result"};
  const Outcome outcome = bytes[0] == 'P' ? Outcome::kPass
                          : bytes[0] == 'S' ? Outcome::kSkip
                                            : Outcome::kFail;
  return {outcome, bytes.substr(1)};
}

void WriteAll(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Runs the case in a child process with a time limit. The parent never runs a kernel, so
// forking is safe with respect to OpenMP's thread pool (the child starts its own).
CaseResult RunIsolated(const fs::path& case_dir, const Flags& flags) {
  int fds[2];
  if (pipe(fds) != 0) return {Outcome::kFail, std::string("pipe: ") + std::strerror(errno)};
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return {Outcome::kFail, std::string("fork: ") + std::strerror(errno)};
  if (pid == 0) {
    close(fds[0]);
    WriteAll(fds[1], Encode(collage::conformance::RunCase(case_dir, flags.case_options)));
    close(fds[1]);
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(0);
  }
  close(fds[1]);
  std::string bytes;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(flags.timeout_s * 1000));
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child closed its end
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return {Outcome::kFail, fmt::format("timed out after {:g} s (--timeout)", flags.timeout_s)};
  }
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return {Outcome::kFail, fmt::format("crashed: signal {} ({})", sig, strsignal(sig))};
  }
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) != 0) {
    return {Outcome::kFail, fmt::format("the case process exited with status {}",
                                        WEXITSTATUS(wait_status))};
  }
  return Decode(bytes);
}

// Indents the continuation lines of a multi-line message under the case line.
std::string Indented(const std::string& message) {
  std::string out;
  for (char c : message) {
    out += c;
    if (c == '\n') out += "      ";
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  CLI::App app{"Runs ONNX conformance cases (model.onnx + test_data_set_*/{input,output}_N.pb) "
               "through collage and compares the outputs."};
  app.add_option("dir", flags.dir, "Folder of case folders (or one case folder)")->required();
  app.add_option("--filter", flags.filter, "Run only cases whose folder name contains this");
  app.add_option("--exclude", flags.excluded,
                 "Leave out the case of this folder name (repeatable)");
  app.add_flag("--verbose,-v", flags.verbose, "Print skip reasons and per-case times");
  app.add_option("--rtol", flags.case_options.tolerance.rtol, "Relative tolerance (floats)")
      ->capture_default_str();
  app.add_option("--atol", flags.case_options.tolerance.atol, "Absolute tolerance (floats)")
      ->capture_default_str();
  app.add_flag("--rel-to-max", flags.case_options.tolerance.rel_to_max,
               "rtol is relative to the largest |expected| of each output, not to each element");
  app.add_flag("--list-unsupported", flags.list_unsupported,
               "At the end, print how often each reason for skipping occurred");
  app.add_option("--timeout", flags.timeout_s, "Seconds one case may take")->capture_default_str();
  app.add_option("--threads", flags.case_options.num_threads, "Kernel threads (0 = one per core)");
  app.add_option("--backend", flags.case_options.backend,
                 "Run every node this backend has a rule for on it, the rest on native")
      ->capture_default_str();
  app.add_flag("--quantization-tolerance", flags.case_options.quantization_tolerance,
               "Let each quantized output differ by the model's own bound on how far two correct "
               "runs may round it apart");
  app.add_flag("--no-fork", flags.no_fork, "Run cases in this process (for a debugger)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help exits 0; every usage error exits 2 (1 means "a case failed").
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (!fs::is_directory(flags.dir)) {
    std::fprintf(stderr, "collage_conformance: %s is not a folder\n", flags.dir.c_str());
    return 2;
  }
  const std::vector<fs::path> cases = FindCases(flags.dir, flags.filter, flags.excluded);
  if (cases.empty()) {
    std::fprintf(stderr, "collage_conformance: no case folder (with model.onnx) in %s%s\n",
                 flags.dir.c_str(),
                 flags.filter.empty() ? "" : (" matching '" + flags.filter + "'").c_str());
    return 2;
  }

  int passed = 0, failed = 0, skipped = 0;
  std::map<std::string, std::vector<std::string>> skip_reasons;  // reason → cases
  for (const fs::path& case_dir : cases) {
    const std::string name = case_dir.filename().string();
    const auto start = std::chrono::steady_clock::now();
    const CaseResult result = flags.no_fork
                                  ? collage::conformance::RunCase(case_dir, flags.case_options)
                                  : RunIsolated(case_dir, flags);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string line = std::string(OutcomeName(result.outcome)) + " " + name;
    if (flags.verbose) line += fmt::format(" ({:.2f} s)", seconds);
    switch (result.outcome) {
      case Outcome::kPass:
        ++passed;
        break;
      case Outcome::kFail:
        ++failed;
        line += ": " + Indented(result.message);
        break;
      case Outcome::kSkip:
        ++skipped;
        if (flags.verbose) line += ": " + Indented(result.message);
        for (const std::string& reason :
             collage::conformance::UnsupportedReasonKeys(result.message)) {
          skip_reasons[reason].push_back(name);
        }
        break;
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  if (flags.list_unsupported && !skip_reasons.empty()) {
    std::vector<std::pair<std::string, std::vector<std::string>>> sorted(skip_reasons.begin(),
                                                                         skip_reasons.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second.size() > b.second.size();
    });
    std::printf("\nunsupported (cases, reason, e.g.):\n");
    for (const auto& [reason, names] : sorted) {
      std::printf("%5zu  %s  (e.g. %s)\n", names.size(), reason.c_str(), names.front().c_str());
    }
    std::printf("\n");
  }
  std::printf("conformance: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed > 0 ? 1 : 0;
}
