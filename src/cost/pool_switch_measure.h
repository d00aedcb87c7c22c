// Measuring what a switch between two thread pools costs: the time a kernel of one library
// loses when it runs right after a kernel of another (its workers must wake while the other
// library's workers still spin or go to sleep), compared with running after a kernel of its
// own. The op-level search adds it to every edge between groups on different pools.
#pragma once

#include "collage/backend.h"
#include "cost/cost_database.h"
#include "cost/measure.h"

namespace collage {

struct PoolSwitchRecords {
  CostRecord a_to_b;  // the cost of b running after a, beyond b running after b
  CostRecord b_to_a;
};

// Compiles `a` and `b` (two groups already measured valid, on backends with different
// thread pools) and runs them in turns a, a, b, b, timing each run: the second a and the
// second b follow their own pool, the first ones follow the other. Per direction, the median
// over the turns of (time after the other pool - time after the own pool), never negative.
// Warm caches throughout: the switch is a wake-up latency, and a cache flush in between
// would give the workers time to settle. Invalid records when either does not compile or run.
PoolSwitchRecords MeasurePoolSwitch(const Backend& backend_a, const CompileRequest& a,
                                    const Backend& backend_b, const CompileRequest& b,
                                    const BackendRegistry& registry,
                                    const MeasureSettings& settings);

}  // namespace collage
