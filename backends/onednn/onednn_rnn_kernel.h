// The kernel of the recurrent rules (onednn_rnn.cc): one oneDNN RNN primitive with its packed
// weights, and its ports, the tensors it reads and writes with where each lives at Run.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onednn_util.h"

namespace collage::onednn {

// Swaps the middle axes of [outer, rows, cols, inner]: the copy between an ONNX tensor and the
// primitive's form where no strides express one as the other.
struct Swap {
  int64_t outer = 0, rows = 0, cols = 0, inner = 0;
  void Run(const float* src, float* dst) const;
};

// The calling thread's OpenMP team size narrowed to one for a scope, then put back (a no-op
// when `narrow` is false). oneDNN sizes an RNN primitive's work split when it is created and
// its products' teams when it runs, both from this setting: a serial kernel holds one for
// both.
class SerialScope {
 public:
  explicit SerialScope(bool narrow);
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int team_ = 0;  // 0: nothing narrowed
};

// One tensor the primitive reads or writes, and where it lives in collage's buffers.
struct Port {
  enum class Source { kInput, kOutput, kConstant, kZeros, kDiscarded };
  int arg = 0;  // DNNL_ARG_*
  dnnl::memory::desc desc;
  Source source = Source::kDiscarded;
  size_t index = 0;             // kernel input / output
  std::vector<float> constant;  // kConstant: an initial state given as a constant
  // The ONNX tensor and the primitive's form differ (inputs: ONNX to primitive; outputs:
  // primitive to ONNX): the primitive's side lives in the workspace.
  std::optional<Swap> swap;
  size_t temp_offset = 0;  // workspace offset of the primitive's side, when not the buffer
  bool in_workspace() const {
    return swap.has_value() || source == Source::kZeros || source == Source::kDiscarded ||
           source == Source::kConstant;
  }
};

// The primitive with its packed weights and ports. Like every oneDNN kernel it runs on the
// OpenMP team the runtime sized to the execution context's thread count (ApplyThreadPolicy).
// The primitive's side of a port that is not a collage buffer (zeros for an absent state, a
// discarded output, a constant initial state, a swapped copy) lives in the workspace after the
// scratchpad, so that concurrent runs share nothing mutable. Inputs and outputs are plain.
//
// `serial`: the primitive runs on the calling thread alone, whatever the team size. A
// recurrence is a chain of small matrix products with a barrier per time step; at batch sizes
// of a few, waking the team for each costs more than the second core gives (a 2-layer LSTM at
// batch 2, 2 threads: 3.2 ms per layer on the team, 0.25 ms serial; docs/backends.md), so the
// `_serial` rules offer that form and measurement picks.
class RnnKernel : public Kernel {
 public:
  RnnKernel(std::string what, dnnl::primitive primitive, dnnl::memory::desc scratchpad,
            std::vector<std::pair<int, dnnl::memory>> weights, std::vector<Port> ports,
            size_t num_inputs, size_t num_outputs, bool serial);
  Status Run(const KernelBuffers& buffers) const override;

 private:
  bool serial_;
  std::string what_;
  dnnl::primitive primitive_;
  dnnl::memory::desc scratchpad_;
  std::vector<std::pair<int, dnnl::memory>> weights_;  // packed at Compile
  std::vector<Port> ports_;
};

}  // namespace collage::onednn
