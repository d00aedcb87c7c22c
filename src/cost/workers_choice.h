// Which measurer an optimize uses, by OptimizeOptions::workers (include/collage/optimize.h):
// the local worker process (ChooseMeasurer, with its fallback to this process), this process,
// or the nodes of a Ray cluster (RayMeasurer), which never falls back: a fleet asked for and
// not reached is an error.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collage/optimize.h"
#include "cost/measurer.h"

namespace collage {

struct WorkersChoice {
  MeasureWorkers workers;      // OptimizeOptions::workers
  std::string measure_worker;  // OptimizeOptions::measure_worker
  double timeout_seconds = 60;
  std::string ray_python;      // OptimizeOptions::ray_python
  CancellationToken cancel;    // OptimizeOptions::cancel: stops a measurement in flight
};

StatusOr<std::unique_ptr<Measurer>> ChooseWorkers(const WorkersChoice& choice,
                                                  const BackendRegistry& registry,
                                                  const std::vector<std::string>& backends,
                                                  std::vector<std::string>* warnings);

}  // namespace collage
