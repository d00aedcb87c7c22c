#include "cost/extra_time.h"

#include <algorithm>
#include <cmath>

namespace collage {
namespace {

// Standard error of a sample's median, from its median absolute deviation (normal noise:
// sigma = 1.4826 * MAD, and the median's error is sqrt(pi / 2) = 1.2533 times the mean's).
double MedianStandardError(const std::vector<double>& values) {
  const double median = MedianOf(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::abs(v - median));
  const double sigma = 1.4826 * MedianOf(std::move(deviations));
  return 1.2533 * sigma / std::sqrt(static_cast<double>(values.size()));
}

}  // namespace

double MedianOf(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

double SignificantExtraMs(const std::vector<double>& situation,
                          const std::vector<double>& baseline) {
  if (situation.empty() || baseline.empty()) return 0;
  const double extra = MedianOf(situation) - MedianOf(baseline);
  const double se_situation = MedianStandardError(situation);
  const double se_baseline = MedianStandardError(baseline);
  const double noise = 2.0 * std::sqrt(se_situation * se_situation + se_baseline * se_baseline);
  return extra > noise ? extra : 0.0;
}

}  // namespace collage
