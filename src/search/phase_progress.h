// Progress of one phase of an optimize after the measurements (the calibration runs, the
// finalists' checks, the end-to-end decision's rounds), reported through
// OptimizeOptions::on_progress as the measuring phases are: these phases run for minutes on
// a large model, and a progress display that stopped at the measurements looked hung.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <utility>

#include "collage/optimize.h"

namespace collage {

class PhaseProgress {
 public:
  // `expected`: how many steps the phase takes at most, or is expected to; a phase that runs
  // past it raises the total with it, one that stops early is finished at what it did.
  PhaseProgress(std::function<void(const OptimizeProgress&)> on_progress, std::string phase,
                int expected)
      : on_progress_(std::move(on_progress)), phase_(std::move(phase)), total_(expected) {
    Report();
  }

  void Step() {
    ++done_;
    total_ = std::max(total_, done_);
    Report();
  }

  void Finish() {
    total_ = done_;
    Report();
  }

  int done() const { return done_; }

 private:
  void Report() const {
    if (!on_progress_) return;
    OptimizeProgress progress;
    progress.phase = phase_;
    progress.done = done_;
    progress.total = total_;
    progress.elapsed_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    on_progress_(progress);
  }

  std::function<void(const OptimizeProgress&)> on_progress_;
  std::string phase_;
  int done_ = 0;
  int total_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace collage
