// The comparison of the NaN/Inf contract: per output element, NaN where the reference has
// NaN, the same infinity where it has one, and finite values within the usual tolerance
// elsewhere (util/normalized_error.h over the finite elements). Unlike NormalizedError, it
// counts every kind of mismatch, so that a verdict says how a backend deviates ("NaN -> 0 in
// 12 of 40 NaN elements") rather than where it first did.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/tensor.h"

namespace collage::backend_ops {

struct PatternCheck {
  bool meets = true;
  // Empty when it meets the contract; else the kinds of mismatch, most frequent first:
  // "NaN -> 0 in 12 of 40 NaN elements; finite -> NaN in 3 of 200 finite elements".
  std::string deviation;
  // The same kinds without counts, for summing up over groups: "NaN -> 0", "NaN -> finite",
  // "finite values off".
  std::vector<std::string> classes;
  // Subnormal elements of the reference's float outputs, and how many of them are exactly 0
  // in the backend's: a backend that flushes subnormals (FTZ/DAZ) stays within tolerance,
  // but the report says so.
  int64_t subnormal_reference = 0;
  int64_t subnormal_flushed = 0;
};

PatternCheck ComparePattern(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                            double tolerance);

}  // namespace collage::backend_ops
