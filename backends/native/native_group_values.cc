#include "native_group_values.h"

namespace collage::native {

GroupValues::GroupValues(const CompileRequest& request) : graph_(request.graph) {
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    homes_[request.inputs[i]] = Home{Place::kInput, i, Tensor()};
  }
  for (size_t i = 0; i < request.outputs.size(); ++i) {
    homes_[request.outputs[i]] = Home{Place::kOutput, i, Tensor()};
  }
  for (NodeId id : request.node_ids()) {
    for (ValueId in : graph_->node(id).inputs) {
      if (in == kNoValue || !graph_->value(in).is_constant()) continue;
      homes_[in] = Home{Place::kConstant, 0, *graph_->value(in).constant};
    }
  }
}

void GroupValues::PlaceInWorkspace(ValueId value) {
  if (Has(value)) return;
  homes_[value] = Home{Place::kWorkspace, Reserve(type(value).nbytes()), Tensor()};
}

size_t GroupValues::Reserve(size_t bytes) {
  const size_t offset = workspace_bytes_;
  workspace_bytes_ += AlignUp(bytes);
  return offset;
}

void* GroupValues::Data(ValueId value, const KernelBuffers& buffers) const {
  const Home& h = homes_.at(value);
  switch (h.place) {
    // Kernels only read their inputs; the views are non-const because Tensor has no
    // read-only view.
    case Place::kInput: return const_cast<void*>(buffers.inputs[h.index]);
    case Place::kOutput: return buffers.outputs[h.index];
    case Place::kConstant: return const_cast<void*>(h.constant.data());
    case Place::kWorkspace: return static_cast<char*>(buffers.workspace) + h.index;
  }
  return nullptr;
}

Tensor GroupValues::View(ValueId value, const KernelBuffers& buffers) const {
  const Home& h = homes_.at(value);
  if (h.place == Place::kConstant) return h.constant;
  const TensorType& t = type(value);
  return Tensor::View(t.dtype, t.shape, Data(value, buffers));
}

}  // namespace collage::native
