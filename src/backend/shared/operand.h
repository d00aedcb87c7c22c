// One float32 operand of a kernel: a constant copied into the kernel at Compile (weights are
// packed once and the kernel no longer needs the graph), or one of the kernel's inputs, read
// from the bound buffers at Run.
#pragma once

#include <vector>

#include "collage/sdk/backend.h"

namespace collage {

class Operand {
 public:
  Operand() = default;
  // `value` must be float32; it is a constant or one of request.inputs.
  static StatusOr<Operand> Resolve(const CompileRequest& request, ValueId value);

  bool is_constant() const { return input_ < 0; }
  const float* Data(const KernelBuffers& buffers) const {
    return is_constant() ? constant_.data()
                         : static_cast<const float*>(buffers.inputs[static_cast<size_t>(input_)]);
  }
  const std::vector<float>& constant() const { return constant_; }

 private:
  int input_ = -1;
  std::vector<float> constant_;
};

}  // namespace collage
