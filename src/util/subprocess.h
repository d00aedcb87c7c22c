// A child process driven through pipes: spawned with posix_spawn (never fork: libgomp's
// thread pool does not survive a fork, and a forked copy of a big process costs page-table
// copies), in a process group of its own so that a terminal's Ctrl-C reaches only us, and we
// decide what happens to the child. Its stdin and stdout are pipes for our requests and its
// replies; its stderr is captured and its last few KiB kept for error messages.
//
// Every wait polls in short slices and gives up at a deadline or when the token set by
// set_cancellation is cancelled (collage/cancellation.h), so that a hung child never blocks
// the caller.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "collage/cancellation.h"
#include "collage/status.h"

namespace collage {

class Subprocess {
 public:
  using Clock = std::chrono::steady_clock;

  // How a wait ended.
  enum class Wait { kDone, kTimedOut, kInterrupted, kClosed };

  // Starts `path` with `args` (argv[1...]) and this process's environment. Signals that we
  // ignore or block are reset for the child.
  static StatusOr<std::unique_ptr<Subprocess>> Spawn(const std::string& path,
                                                     const std::vector<std::string>& args);
  // Kills (SIGKILL to its group) and reaps the child if it still runs.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  // Waits end with kInterrupted once `cancel` is cancelled (by default, never).
  void set_cancellation(CancellationToken cancel) { cancel_ = std::move(cancel); }

  // Writes all of `bytes` to the child's stdin. kClosed: the child closed it (or died).
  Wait Write(const std::string& bytes, Clock::time_point deadline);
  // Closes the child's stdin: a child that reads to the end of its input (a filter such as
  // Graphviz's dot) sees end of file and finishes.
  void CloseStdin();
  // Reads exactly `size` bytes of the child's stdout into `out`. kClosed: end of file first
  // (`out` then holds what came before it).
  Wait Read(size_t size, std::string* out, Clock::time_point deadline);

  // SIGKILL to the child's process group, then reaps it. Idempotent.
  void Kill();
  // Waits (up to `timeout`) for the child to end, reaps it and says how it ended: "died of
  // SIGSEGV", "exited with status 3"; after the time-out it is killed first.
  std::string WaitForExit(std::chrono::milliseconds timeout);

  // The last kStderrTail bytes the child wrote to stderr (read while we wait on it).
  const std::string& stderr_tail() const { return stderr_tail_; }
  void ClearStderrTail() { stderr_tail_.clear(); }
  static constexpr size_t kStderrTail = 4096;

 private:
  Subprocess() = default;
  // Waits for `fd` to be ready for `events` in short slices, draining stderr meanwhile.
  Wait PollFor(int fd, short events, Clock::time_point deadline);
  void DrainStderr();

  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string exit_description_;
  int stdin_fd_ = -1;   // our end of the child's stdin
  int stdout_fd_ = -1;  // our end of the child's stdout
  int stderr_fd_ = -1;  // our end of the child's stderr
  std::string stderr_tail_;
  CancellationToken cancel_;
};

// The path of the executable `name` in a folder of $PATH; empty when there is none.
std::string FindOnPath(const std::string& name);

// "SIGSEGV" for SIGSEGV, "signal 77" for a number without a name.
std::string SignalName(int signal_number);

}  // namespace collage
