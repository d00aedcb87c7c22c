#include "runtime/threading.h"

#include <omp.h>
#include <sched.h>

#include <cstdlib>

namespace collage {

std::string OpenMpWaitSetting() {
  // The spin count overrides the policy when both are set (libgomp's rule).
  for (const char* name : {"GOMP_SPINCOUNT", "OMP_WAIT_POLICY"}) {
    if (const char* value = std::getenv(name); value != nullptr) {
      // A key, not a dump of the environment: libgomp reads a number or a word.
      constexpr size_t kLongestKept = 64;
      return std::string(name) + "=" + std::string(value).substr(0, kLongestKept);
    }
  }
  return "libgomp default";
}

int ResolveThreadCount(int requested) {
  if (requested > 0) return requested;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  return omp_get_num_procs();
}

void ApplyThreadPolicy(int num_threads) { omp_set_num_threads(ResolveThreadCount(num_threads)); }

}  // namespace collage
