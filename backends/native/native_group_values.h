// Where each value of a compiled group lives while the kernel runs: a kernel input buffer, a
// kernel output buffer, a constant held by the kernel, or a region of the workspace. Both
// native kernels (node by node and the tiled elementwise chain) build on it.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "collage/sdk/backend.h"

namespace collage::native {

inline constexpr size_t kWorkspaceAlignment = 64;

inline size_t AlignUp(size_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

class GroupValues {
 public:
  enum class Place { kInput, kOutput, kConstant, kWorkspace };
  struct Home {
    Place place = Place::kWorkspace;
    size_t index = 0;  // kInput / kOutput: buffer index; kWorkspace: byte offset
    Tensor constant;   // kConstant: shares the graph's buffer, so it outlives the graph
  };

  // Homes for the request's inputs, outputs and every constant its nodes read.
  explicit GroupValues(const CompileRequest& request);

  bool Has(ValueId value) const { return homes_.count(value) != 0; }
  const Home& home(ValueId value) const { return homes_.at(value); }
  const TensorType& type(ValueId value) const { return graph_->value(value).type; }

  // Gives `value` a full-size region of the workspace (no-op when it already has a home).
  void PlaceInWorkspace(ValueId value);
  // Reserves `bytes` (64-byte aligned) of workspace for the kernel's own use; returns the
  // offset.
  size_t Reserve(size_t bytes);
  size_t workspace_bytes() const { return workspace_bytes_; }

  // Address of `value` in one run's buffers.
  void* Data(ValueId value, const KernelBuffers& buffers) const;
  // A view of the whole value in one run's buffers (constants: the held tensor).
  Tensor View(ValueId value, const KernelBuffers& buffers) const;

 private:
  const Graph* graph_;
  std::map<ValueId, Home> homes_;
  size_t workspace_bytes_ = 0;
};

}  // namespace collage::native
