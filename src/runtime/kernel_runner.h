// Runs one compiled group on plain tensors: its inputs are converted into the layouts the
// kernel declared and its outputs back to plain. The differential harness, the tests and the
// cost measurement use it to run a candidate in isolation.
#pragma once

#include <memory>
#include <vector>

#include "collage/sdk/backend.h"
#include "runtime/compile_group.h"  // DescribeGroup, for callers naming a group

namespace collage {

// A compiled group's inputs converted into the layouts its kernel declared, with its output
// and workspace buffers: the kernel can run on them again and again (cost measurement).
class BoundKernel {
 public:
  using Buffer = std::unique_ptr<void, void (*)(void*)>;
  Status Run() const;
  // Output `i` as it lies in the kernel's layout.
  const void* output(size_t i) const { return output_ptrs_[i]; }
  // Input `i` as the kernel reads it, and its size in bytes.
  size_t num_inputs() const { return input_ptrs_.size(); }
  const void* input(size_t i) const { return input_ptrs_[i]; }
  size_t input_bytes(size_t i) const { return input_bytes_[i]; }

 private:
  friend class KernelRunner;
  const Kernel* kernel_ = nullptr;
  std::vector<Buffer> owned_;
  std::vector<const void*> input_ptrs_;
  std::vector<size_t> input_bytes_;
  std::vector<void*> output_ptrs_;
  Buffer workspace_{nullptr, nullptr};
};

class KernelRunner {
 public:
  // Compiles `request` with `backend`, plus the conversions its layouts need. Errors name the
  // backend, the rule and the group's first node.
  static StatusOr<std::unique_ptr<KernelRunner>> Create(const Backend& backend,
                                                        const CompileRequest& request,
                                                        const BackendRegistry& registry);
  ~KernelRunner();

  // One plain tensor per request.inputs (types must match); returns one plain tensor per
  // request.outputs. Safe to call from several threads.
  StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& inputs) const;
  // The same inputs, converted and bound, for running the kernel alone.
  StatusOr<std::unique_ptr<BoundKernel>> Bind(const std::vector<Tensor>& inputs) const;

  const Kernel& kernel() const { return *kernel_; }
  const CompileRequest& request() const { return request_; }

 private:
  KernelRunner() = default;
  CompileRequest request_;
  std::unique_ptr<Kernel> kernel_;
  std::vector<std::unique_ptr<Kernel>> to_kernel_;    // per input; null when already plain
  std::vector<std::unique_ptr<Kernel>> from_kernel_;  // per output; null when already plain
};

// The same group run node by node on the reference kernels: the oracle a KernelRunner's
// outputs are compared with.
StatusOr<std::vector<Tensor>> RunReferenceGroup(const CompileRequest& request,
                                                const std::vector<Tensor>& inputs);

}  // namespace collage
