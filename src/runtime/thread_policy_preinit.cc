// Puts the threading policy's OpenMP wait setting (kOpenMpSpinCount) into effect: libgomp
// must find it in the environment the process started with.
//
// libgomp parses OMP_WAIT_POLICY / GOMP_SPINCOUNT once, in its ELF constructor, before
// main(). Without the setting its workers spin 300k iterations (~3 ms, an estimate) after every
// parallel region, holding a core that an engine's own pool needs when a plan hands work to it; too
// short a spin puts the team to sleep between small kernels (threading.h has the figures).
// Setting the variable from inside the process cannot work: a setenv in
// main() comes after the constructor, and at .preinit_array time (before every library's
// constructor) libc has not set up `environ` yet and resets it afterwards. So when the user
// chose no wait setting, the process re-executes itself, once, with the policy's setting
// added to the environment the kernel passed (10–20 ms measured, before any library has
// started). The new process finds the variable and runs on.
//
// Linked into every collage executable (the CLI, the tests, the benches), never into the
// library: .preinit_array is only honoured in executables. A program embedding the library
// sets GOMP_SPINCOUNT (kOpenMpSpinCount) in its environment itself (docs/architecture.md,
// "Threads").
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "runtime/threading.h"

namespace {

void ApplyThreadPolicyBeforeLibrariesStart(int /*argc*/, char** argv, char** envp) {
  size_t count = 0;
  for (; envp[count] != nullptr; ++count) {
    // Present at all, even empty, is the user's choice (or ours, after the re-execution).
    if (collage::IsOpenMpWaitSetting(envp[count])) return;
  }
  static char setting[64] = "GOMP_SPINCOUNT=";
  std::strncat(setting, collage::kOpenMpSpinCount, sizeof(setting) - std::strlen(setting) - 1);
  char** env = static_cast<char**>(std::malloc((count + 2) * sizeof(char*)));
  if (env == nullptr) return;
  std::memcpy(env, envp, count * sizeof(char*));
  env[count] = setting;
  env[count + 1] = nullptr;
  execve("/proc/self/exe", argv, env);
  // Only reached if the re-execution failed: run on under libgomp's defaults.
  std::free(env);
}

}  // namespace

__attribute__((used, section(".preinit_array"))) static void (*const kThreadPolicyPreinit)(
    int, char**, char**) = &ApplyThreadPolicyBeforeLibrariesStart;
