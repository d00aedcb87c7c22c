// The fewest timed runs a measurement takes: for tests that check what is recorded, not
// how fast anything is.
#pragma once

#include "cost/measure.h"

namespace collage::testing {

inline MeasureSettings QuickMeasureSettings() {
  MeasureSettings s;
  s.warmup_runs = 1;
  s.min_runs = 2;
  s.max_runs = 3;
  s.max_seconds = 0.02;
  return s;
}

}  // namespace collage::testing
