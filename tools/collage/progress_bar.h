// A progress bar on stderr for `collage optimize`, through every phase (measurements,
// calibration runs, the finalists' checks, the decision's rounds): redrawn in place on a
// terminal (at most ten times a second), one line per tenth of the work otherwise (logs, CI).
#pragma once

#include <string>

#include "collage/optimize.h"

namespace collage::cli {

class ProgressBar {
 public:
  ProgressBar();
  void Update(const OptimizeProgress& progress);
  // The two-level search's generations: best latency, evaluations, cache hits.
  void Update(const GenerationProgress& progress);
  // Ends the line of a bar drawn in place.
  void Finish();

 private:
  void Draw(const OptimizeProgress& progress);
  bool terminal_;
  bool drawn_ = false;
  std::string phase_;
  int last_tenth_ = -1;
  double last_draw_ = -1;
  double last_best_ = 0;
};

}  // namespace collage::cli
