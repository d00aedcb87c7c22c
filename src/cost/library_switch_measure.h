// Measuring what switching libraries between two groups costs: the time a kernel of one
// backend loses when it runs right after a kernel of another backend, compared with running
// after another kernel of its own. At several threads one library's workers wind down while
// the next one's wake (OpenMP and an engine's own pool; XNNPACK shares the OpenMP team); at
// any count the next library's code, tables and buffers have been pushed out of the caches
// by the other's. The op-level search adds it to every edge between groups of different
// backends.
#pragma once

#include <string>
#include <vector>

#include "collage/sdk/backend.h"
#include "cost/cost_database.h"
#include "cost/measure.h"

namespace collage {

// One kernel of the probe: a group already measured valid.
struct ProbeKernel {
  const Backend* backend = nullptr;
  CompileRequest request;
};

struct LibrarySwitchRecords {
  CostRecord a_to_b;  // what a kernel of b loses after a kernel of a
  CostRecord b_to_a;
};

// `a` and `b`: two kernels of each backend (the same one twice where a backend offers one
// only). They run in turns of two a-kernels then two b-kernels, the order within each pair
// alternating from turn to turn, each run timed: the first of a pair follows the other
// library, the second another kernel of its own. Per direction, the mean over its two kernels
// of (median time after the other library - median time after its own) where that stands out
// of the noise (SignificantExtraMs), else 0. Warm caches:
// what the probe measures is what the other library disturbs. Invalid records when a kernel
// does not compile or run.
// The method part of the probe's cost keys: the measurement's, and that only differences
// beyond the noise count (records of the probe that counted every difference are not reused).
std::string SwitchProbeMethodKey(const MeasureSettings& settings);

LibrarySwitchRecords MeasureLibrarySwitch(const std::vector<ProbeKernel>& a, const std::vector<ProbeKernel>& b,
                                          const BackendRegistry& registry, const MeasureSettings& settings);

}  // namespace collage
