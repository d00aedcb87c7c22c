// The timed part of `collage bench`: runs of one session from one or several concurrent
// streams (each a thread sending its next request when the last one returns), until a count
// of runs or a duration is reached, whichever comes first.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collage/report.h"
#include "collage/session.h"

namespace collage::cli {

struct BenchLimits {
  int streams = 1;
  int max_runs = 0;         // 0: no count
  double max_seconds = 0;   // 0: no duration
  bool profile = false;     // record every run's steps (one stream only)
};

struct BenchRuns {
  std::vector<double> latencies_ms;  // one per run, every stream's
  double wall_seconds = 0;           // from the first run's start to the last one's end
  std::vector<RunProfile> profiles;  // with BenchLimits::profile, in order
  std::vector<TracedRun> traced;     // the same, with each run's start
};

// The first error of any run stops every stream and is returned.
StatusOr<BenchRuns> RunBenchStreams(Session& session, const std::map<std::string, Tensor>& inputs,
                                    const BenchLimits& limits);

}  // namespace collage::cli
