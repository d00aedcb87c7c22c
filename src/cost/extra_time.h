// The extra time a kernel takes in one situation (right after another library's kernel, after
// a different kernel of its own) over a baseline (right after itself), from the two samples
// of its times. Extras of microseconds on kernels of milliseconds are within the run-to-run
// noise; a difference of medians taken at face value then prices noise, and a probe on a slow
// kernel (a reference LSTM, 1.2 ms) once added 27 us to every step of its backend, 2 us
// transposes included. So a difference counts only where it stands out of both samples'
// noise.
#pragma once

#include <vector>

namespace collage {

// The median of `values` (the mean of the middle two for an even count); 0 when empty. The
// finalist decision (search/finalist_decision.cc) uses it too.
double MedianOf(std::vector<double> values);

// median(situation) - median(baseline) when it exceeds twice the standard error of that
// difference (each median's error estimated robustly: 1.2533 * 1.4826 * MAD / sqrt(n)), else
// 0; never negative. 0 when either sample is empty.
double SignificantExtraMs(const std::vector<double>& situation,
                          const std::vector<double>& baseline);

}  // namespace collage
