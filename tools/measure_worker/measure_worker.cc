// collage_measure_worker: measures candidate groups and layout conversions for a parent
// collage process (cost/worker_measurer.h), one request at a time over stdin/stdout
// (cost/worker_protocol.h), so that a library that crashes or hangs takes only this process
// down. Not meant to be run by hand.
//
//   collage_measure_worker [--parent-pid PID] [--plugin PATH]...
//   collage_measure_worker --relay [--timeout S] [--parent-pid PID] [--plugin PATH]...
//
// With --relay it measures nothing itself: each request goes to a worker of its own, which
// a crash or a hang (past --timeout seconds) kills instead of the relay, and the reply is a
// full record (cost/worker_relay.h). Ray tasks run it on other nodes.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "cost/worker_protocol.h"
#include "cost/worker_relay.h"
#include "cost/worker_service.h"

namespace {

int Fail(const std::string& message) {
  fmt::print(stderr, "collage_measure_worker: {}\n", message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  long parent = -1;
  std::vector<std::string> plugins;
  bool relay = false;
  double timeout = collage::WorkerOptions().timeout_seconds;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--parent-pid" && i + 1 < argc) {
      parent = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--plugin" && i + 1 < argc) {
      plugins.push_back(argv[++i]);
    } else if (arg == "--relay") {
      relay = true;
    } else if (arg == "--timeout" && i + 1 < argc) {
      char* end = nullptr;
      timeout = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(timeout > 0) || timeout > collage::kMaxMeasureTimeoutSeconds)
        return Fail(std::string("--timeout takes seconds above 0, at most a day, not '") +
                    argv[i] + "'");
    } else {
      return Fail("unknown argument '" + arg +
                  "' (usage: collage_measure_worker [--relay [--timeout S]] [--parent-pid PID] "
                  "[--plugin PATH]...)");
    }
  }
  // A worker that outlives its parent (killed with SIGKILL) would measure a hang forever.
  if (parent > 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) return Fail("the parent is gone");
  }
  // A candidate crashing here is expected and recorded: no core file for each.
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  // The frames get private copies of stdin and stdout; a library writing to stdout then
  // writes to stderr instead of into a reply, and nothing reads the requests by accident.
  const int requests = ::dup(0);
  const int replies = ::dup(1);
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (requests < 0 || replies < 0 || null_fd < 0 || ::dup2(2, 1) < 0 || ::dup2(null_fd, 0) < 0) {
    return Fail(std::string("cannot set up its pipes: ") + std::strerror(errno));
  }
  ::close(null_fd);

  if (relay) {
    // Its own worker is this same program, found again by path (not argv[0]: a Ray task
    // may start it by any name).
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) return Fail("cannot find its own executable: " + error.message());
    collage::WorkerOptions options;
    options.executable = self.string();
    options.plugin_paths = plugins;
    options.timeout_seconds = timeout;
    if (collage::Status s = collage::RelayRequests(requests, replies, options); !s.ok())
      return Fail(s.message());
    return 0;
  }

  collage::BackendRegistry& registry = collage::GlobalBackendRegistry();
  for (const std::string& plugin : plugins) {
    // Said on stderr and left out: the handshake tells the parent what is missing.
    if (collage::Status s = registry.LoadPlugin(plugin); !s.ok()) Fail(s.message());
  }
  collage::MeasureWorkerService service(registry);
  if (collage::Status s = collage::WriteFrame(replies, collage::EncodeHello(service.Hello()));
      !s.ok()) {
    return Fail(s.message());
  }
  while (true) {
    collage::StatusOr<std::string> request = collage::ReadFrame(requests);
    if (!request.ok()) {
      if (request.status().code() == collage::StatusCode::kNotFound)
        return 0;  // the parent is done
      return Fail(request.status().message());
    }
    if (collage::Status s = collage::WriteFrame(replies, service.Answer(*request)); !s.ok()) {
      return Fail(s.message());
    }
  }
}
