#include "util/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include "collage/sdk/errors.h"
#include "collage/cancellation.h"

extern char** environ;

namespace collage {
namespace {

// Short enough that Ctrl-C feels immediate, long enough to cost nothing.
constexpr auto kPollSlice = std::chrono::milliseconds(50);

std::string DescribeWaitStatus(int status) {
  if (WIFSIGNALED(status)) return "died of " + SignalName(WTERMSIG(status));
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return fmt::format("ended with wait status {}", status);
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Pipe ends with FD_CLOEXEC, so that no other child (ours or another thread's) inherits them
// and keeps a pipe open after the worker died.
Status MakePipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return IoError("cannot create a pipe: {}", std::strerror(errno));
  return Status();
}

}  // namespace

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string SignalName(int signal_number) {
  const char* abbreviation = ::sigabbrev_np(signal_number);
  if (abbreviation == nullptr) return fmt::format("signal {}", signal_number);
  return std::string("SIG") + abbreviation;
}

StatusOr<std::unique_ptr<Subprocess>> Subprocess::Spawn(const std::string& path,
                                                        const std::vector<std::string>& args) {
  int in[2], out[2], err[2];
  COLLAGE_RETURN_IF_ERROR(MakePipe(in));
  if (Status s = MakePipe(out); !s.ok()) {
    ::close(in[0]), ::close(in[1]);
    return s;
  }
  if (Status s = MakePipe(err); !s.ok()) {
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    return s;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // A group of its own: the terminal's SIGINT goes to our group only, and we end the child.
  // Default actions and an empty mask: our SIGINT handler, an ignored SIGPIPE or a blocked
  // signal must not carry over into the child.
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(path.c_str()));
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, path.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(in[1]), ::close(out[0]), ::close(err[0]);
    return IoError("cannot start '{}': {}", path, std::strerror(rc));
  }
  std::unique_ptr<Subprocess> child(new Subprocess());
  child->pid_ = pid;
  child->stdin_fd_ = in[1];
  child->stdout_fd_ = out[0];
  child->stderr_fd_ = err[0];
  for (int fd : {in[1], out[0], err[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return child;
}

Subprocess::~Subprocess() {
  CloseFd(stdin_fd_);
  CloseFd(stdout_fd_);
  Kill();
  CloseFd(stderr_fd_);
}

void Subprocess::DrainStderr() {
  char buffer[4096];
  while (stderr_fd_ >= 0) {
    const ssize_t n = ::read(stderr_fd_, buffer, sizeof(buffer));
    if (n > 0) {
      stderr_tail_.append(buffer, static_cast<size_t>(n));
      if (stderr_tail_.size() > kStderrTail)
        stderr_tail_.erase(0, stderr_tail_.size() - kStderrTail);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) CloseFd(stderr_fd_);  // end of file: the child (and its children) are gone
    return;
  }
}

Subprocess::Wait Subprocess::PollFor(int fd, short events, Clock::time_point deadline) {
  while (true) {
    if (cancel_.cancelled()) return Wait::kInterrupted;
    const auto now = Clock::now();
    if (now >= deadline) return Wait::kTimedOut;
    const auto slice = std::min<Clock::duration>(kPollSlice, deadline - now);
    pollfd fds[2] = {{fd, events, 0}, {stderr_fd_, POLLIN, 0}};
    const int n =
        ::poll(fds, stderr_fd_ >= 0 ? 2 : 1,
               static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(slice).count()));
    if (n < 0 && errno != EINTR) return Wait::kClosed;
    if (n <= 0) continue;
    if (fds[1].revents != 0) DrainStderr();
    if (fds[0].revents & events) return Wait::kDone;
    if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) return Wait::kClosed;
  }
}

Subprocess::Wait Subprocess::Write(const std::string& bytes, Clock::time_point deadline) {
  // A write to a pipe whose reader died raises SIGPIPE, which would end this process: blocked
  // in this thread for the write, and a SIGPIPE it raised consumed before unblocking.
  sigset_t pipe_set, old_mask;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  Wait result = Wait::kDone;
  size_t written = 0;
  while (written < bytes.size()) {
    result = PollFor(stdin_fd_, POLLOUT, deadline);
    if (result != Wait::kDone) break;
    const ssize_t n = ::write(stdin_fd_, bytes.data() + written, bytes.size() - written);
    if (n > 0) {
      written += static_cast<size_t>(n);
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      result = Wait::kClosed;
      break;
    }
  }
  if (result == Wait::kClosed) {
    const timespec zero{0, 0};
    while (::sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  return result;
}

void Subprocess::CloseStdin() { CloseFd(stdin_fd_); }

Subprocess::Wait Subprocess::Read(size_t size, std::string* out, Clock::time_point deadline) {
  out->clear();
  char buffer[65536];
  while (out->size() < size) {
    const Wait ready = PollFor(stdout_fd_, POLLIN, deadline);
    if (ready != Wait::kDone) return ready;
    const ssize_t n = ::read(stdout_fd_, buffer, std::min(sizeof(buffer), size - out->size()));
    if (n == 0) return Wait::kClosed;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return Wait::kClosed;
    }
    out->append(buffer, static_cast<size_t>(n));
  }
  return Wait::kDone;
}

void Subprocess::Kill() {
  if (pid_ <= 0 || reaped_) return;
  // The group (anything the child started) and the child itself, in case it left the group.
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  if (exit_description_.empty()) exit_description_ = DescribeWaitStatus(status);
}

std::string Subprocess::WaitForExit(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return "never started";
  const auto deadline = Clock::now() + timeout;
  while (!reaped_) {
    int status = 0;
    const pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      reaped_ = true;
      exit_description_ = DescribeWaitStatus(status);
      break;
    }
    if (Clock::now() >= deadline) {
      Kill();
      break;
    }
    DrainStderr();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  DrainStderr();  // what it wrote just before the end
  return exit_description_;
}

}  // namespace collage
