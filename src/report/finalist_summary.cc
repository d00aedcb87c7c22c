// The end-to-end decision told to a reader (declared in collage/report.h).
#include "collage/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace collage {

std::string CalibrationOriginName(const PlacementSource& origin) {
  return origin.is_search() ? "search" : PlacementSourceName(origin);
}

std::string PlacementInBrief(const OptimizeReport& report) {
  auto named = [](const GroupReport& group) {
    return group.precision == Precision::kFloat32
               ? group.backend
               : group.backend + " " + PrecisionName(group.precision);
  };
  if (report.groups.size() == 1) return named(report.groups.front()) + ", whole model";
  std::map<std::string, int> per;
  for (const GroupReport& group : report.groups) ++per[named(group)];
  std::vector<std::pair<std::string, int>> ordered(per.begin(), per.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (size_t i = 0; i < ordered.size(); ++i) {
    text += fmt::format("{}{} {}{}", i ? ", " : "", ordered[i].first, ordered[i].second,
                        i == 0 ? (ordered[i].second == 1 ? " group" : " groups") : "");
  }
  return text;
}

const FinalistReport* KeptFinalist(const OptimizeReport& report) {
  for (const FinalistReport& f : report.finalists) {
    if (f.kept) return &f;
  }
  return nullptr;
}

const FinalistReport* RunnerUp(const OptimizeReport& report) {
  const FinalistReport* best = nullptr;
  for (const FinalistReport& f : report.finalists) {
    if (f.kept || !f.skipped.empty()) continue;
    if (best == nullptr || f.ratio_to_kept < best->ratio_to_kept) best = &f;
  }
  return best;
}

EstimateAgainstRun CompareEstimateWithRun(const OptimizeReport& report) {
  const FinalistReport* judged = KeptFinalist(report);
  if (judged != nullptr && judged->estimated_ms <= 0) {
    judged = nullptr;
    for (const FinalistReport& f : report.finalists) {
      if (f.source.kind == PlacementSource::Kind::kOpLevel && f.skipped.empty() &&
          f.estimated_ms > 0)
        judged = &f;
    }
  }
  if (judged == nullptr || judged->median_ms <= 0) return {};
  return {judged, judged->estimated_ms, judged->median_ms};
}

std::string EstimateError(double estimated_ms, double measured_ms) {
  if (!(measured_ms > 0)) return "not comparable";
  const double error = (estimated_ms - measured_ms) / measured_ms;
  return fmt::format("{:.1f}% {}", 100 * std::fabs(error), error < 0 ? "low" : "high");
}

}  // namespace collage
