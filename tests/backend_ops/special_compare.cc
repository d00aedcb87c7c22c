#include "special_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>

namespace collage::backend_ops {
namespace {

// The class an element falls in, as the deviation names it. Zero is apart from the other
// finite values because it is what a clamp makes of NaN (Relu: NaN -> 0) and what a
// reference Relu makes of -inf, which a library may turn into NaN (-inf * 0).
std::string KindOf(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v == 0 ? "0" : "finite";
}

struct Mismatch {
  int64_t count = 0;
  double example = 0;  // the first backend value, shown when it is a finite non-zero
};

}  // namespace

PatternCheck ComparePattern(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                            double tolerance) {
  PatternCheck check;
  if (got.size() != want.size()) {
    check.meets = false;
    check.deviation = fmt::format("{} outputs, the reference has {}", got.size(), want.size());
    check.classes.push_back("output count");
    return check;
  }
  std::map<std::string, int64_t> reference_kinds;  // "NaN" -> elements of that kind
  std::map<std::pair<std::string, std::string>, Mismatch> mismatches;
  double max_diff = 0, max_ref = 0;
  for (size_t o = 0; o < got.size(); ++o) {
    if (got[o].dtype() != want[o].dtype() || got[o].shape() != want[o].shape()) {
      check.meets = false;
      check.deviation = fmt::format("output {} is {}[{}], expected {}[{}]", o,
                                    DTypeName(got[o].dtype()), ShapeToString(got[o].shape()),
                                    DTypeName(want[o].dtype()), ShapeToString(want[o].shape()));
      check.classes.push_back("output type");
      return check;
    }
    const double smallest_normal = want[o].dtype() == DType::kFloat32
                                       ? std::numeric_limits<float>::min()
                                       : std::numeric_limits<double>::min();
    const bool is_float = want[o].dtype() == DType::kFloat32 || want[o].dtype() == DType::kFloat64;
    const std::vector<double> a = got[o].ToVector<double>();
    const std::vector<double> b = want[o].ToVector<double>();
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string kind_b = KindOf(b[i]);
      ++reference_kinds[kind_b];
      if (is_float && b[i] != 0 && std::fabs(b[i]) < smallest_normal) {
        ++check.subnormal_reference;
        if (a[i] == 0) ++check.subnormal_flushed;
      }
      if (std::isfinite(a[i]) && std::isfinite(b[i])) {
        max_diff = std::max(max_diff, std::fabs(a[i] - b[i]));
        max_ref = std::max(max_ref, std::fabs(b[i]));
        continue;
      }
      // Equal NaNs or equal infinities agree; every other mix is a deviation.
      if ((std::isnan(a[i]) && std::isnan(b[i])) || a[i] == b[i]) continue;
      const std::string kind_a = KindOf(a[i]);
      Mismatch& m = mismatches[{kind_b, kind_a}];
      if (m.count++ == 0) m.example = a[i];
    }
  }
  std::vector<std::pair<std::pair<std::string, std::string>, Mismatch>> sorted(mismatches.begin(),
                                                                               mismatches.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& x, const auto& y) { return x.second.count > y.second.count; });
  std::vector<std::string> parts;
  for (const auto& [kinds, m] : sorted) {
    const auto& [from, to] = kinds;
    const std::string shown = to == "finite" ? fmt::format("finite (e.g. {:.3g})", m.example) : to;
    const std::string noun = from == "0" ? "zero" : from == "finite" ? "non-zero finite" : from;
    parts.push_back(fmt::format("{} -> {} in {} of {} {} elements", from, shown, m.count,
                                reference_kinds[from], noun));
    check.classes.push_back(from + " -> " + to);
  }
  const double error = max_diff / std::max(1.0, max_ref);
  if (error > tolerance) {
    parts.push_back(fmt::format("finite values off by {:.1e} > tol {:.0e}", error, tolerance));
    check.classes.push_back("finite values off");
  }
  check.meets = parts.empty();
  check.deviation = fmt::format("{}", fmt::join(parts, "; "));
  return check;
}

}  // namespace collage::backend_ops
