#include "cost/claim_owner.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

namespace collage {

bool ProcessAlive(int64_t pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string ProcessIdentity(int64_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // The command name, field 2, is in parentheses and may hold spaces: count from its end.
  const size_t name_end = text.rfind(')');
  if (name_end == std::string::npos) return "";
  std::istringstream fields(text.substr(name_end + 1));
  std::string field;
  for (int index = 3; index <= 22 && (fields >> field); ++index) {
    if (index == 22) return std::to_string(pid) + ":" + field;
  }
  return "";
}

const std::string& OwnProcessIdentity() {
  // Computed once per process: a child forked after the first call (a test's claimers, a
  // library that forks) must not claim under its parent's identity, which its own pid would
  // contradict — its claims would look lapsed to everyone.
  static std::mutex mutex;
  static std::string identity;
  static pid_t computed_for = 0;
  std::lock_guard<std::mutex> lock(mutex);
  if (computed_for != ::getpid()) {
    computed_for = ::getpid();
    identity = ProcessIdentity(computed_for);
  }
  return identity;
}

bool ClaimOwnerAlive(int64_t pid, const std::string& identity) {
  if (!ProcessAlive(pid)) return false;
  return identity.empty() || ProcessIdentity(pid) == identity;
}

const std::string& ThisMachineIdentity() {
  static const std::string identity = [] {
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
    std::ifstream boot("/proc/sys/kernel/random/boot_id");
    std::string boot_id;
    std::getline(boot, boot_id);
    return std::string(host) + "/" + boot_id;
  }();
  return identity;
}

}  // namespace collage
