#include "runtime/threading.h"

#include <omp.h>
#include <sched.h>

namespace collage {

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
