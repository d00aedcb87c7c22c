// Inputs holding NaN, infinities and subnormals, for checking that a backend's kernels treat
// them as the reference kernels do (the NaN/Inf contract, nan_contract.h). The positions are
// a function of the tensor's shape and the input's index only, so a deviation seen once is
// seen again on every run and every machine.
#pragma once

#include <vector>

#include "collage/sdk/backend.h"
#include "collage/tensor.h"

namespace collage::backend_ops {

// What is written into the float inputs. Scattered values show how one special element
// spreads (Relu turning NaN into 0, a sum into NaN); a whole last-axis row shows what a
// window, row or reduction made only of it gives (pooling, Softmax, reductions); the
// subnormal variant shows whether a backend flushes them to zero.
enum class SpecialKind {
  kNan,       // three scattered NaNs
  kNanRow,    // one whole last-axis row of NaN
  kInf,       // two scattered +inf and two -inf
  kInfRow,    // one whole last-axis row of -inf (a fully masked Softmax row)
  kSubnormal  // every element scaled into the subnormal range
};
constexpr SpecialKind kSpecialKinds[] = {SpecialKind::kNan, SpecialKind::kNanRow, SpecialKind::kInf,
                                         SpecialKind::kInfRow, SpecialKind::kSubnormal};

// "nan", "nan-row", "inf", "inf-row", "subnormal".
const char* SpecialKindName(SpecialKind kind);

// Deep copies of `inputs` with `kind` written into every float input that carries data (not
// into inputs read as parameters, such as Resize's scales or Range's bounds, where a NaN
// is a malformed model rather than a value). Sets *poisoned to the number of inputs changed:
// 0 means the group has no float input, and there is nothing to check.
std::vector<Tensor> WithSpecialValues(const CompileRequest& request,
                                      const std::vector<Tensor>& inputs, SpecialKind kind,
                                      int* poisoned);

}  // namespace collage::backend_ops
