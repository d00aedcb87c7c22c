#include "runtime/kernel_runner.h"

#include <cstdlib>
#include <cstring>
#include <memory>

#include "collage/sdk/op_registry.h"
#include "runtime/compile_group.h"
#include "runtime/executable.h"
#include "runtime/layout_conversion.h"
#include "collage/sdk/errors.h"

namespace collage {
namespace {

// A 64-byte aligned heap buffer with the executable's slack after it (kernels may use aligned
// vector loads, and some read a little past their last element).
using Buffer = BoundKernel::Buffer;
Buffer AllocateBuffer(size_t bytes) {
  size_t rounded = (bytes + kBufferSlack + 63) / 64 * 64;
  return Buffer(std::aligned_alloc(64, rounded), std::free);
}

Status RunWithWorkspace(const Kernel& kernel, const void* input, void* output) {
  Buffer workspace = AllocateBuffer(kernel.workspace_bytes());
  if (!workspace) return Internal("cannot allocate a workspace of {} bytes", kernel.workspace_bytes());
  const void* inputs[] = {input};
  void* outputs[] = {output};
  return kernel.Run({inputs, outputs, kernel.workspace_bytes() ? workspace.get() : nullptr});
}

}  // namespace

KernelRunner::~KernelRunner() = default;

StatusOr<std::unique_ptr<KernelRunner>> KernelRunner::Create(const Backend& backend,
                                                             const CompileRequest& request,
                                                             const BackendRegistry& registry) {
  auto fail = [&](const Status& status) {
    return Status(status.code(), DescribeGroup(backend.name(), request) + ": " + status.message());
  };
  std::unique_ptr<KernelRunner> runner(new KernelRunner());
  runner->request_ = request;
  COLLAGE_ASSIGN_OR_RETURN(runner->kernel_, CompileGroup(backend, request));
  const Kernel& k = *runner->kernel_;
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    const Layout& layout = k.input_layouts()[i];
    std::unique_ptr<Kernel> conversion;
    if (layout != Layout::Plain()) {
      auto compiled = CompileLayoutConversion(request.type(request.inputs[i]), Layout::Plain(),
                                              layout, registry);
      if (!compiled.ok()) return fail(compiled.status());
      conversion = std::move(*compiled);
    }
    runner->to_kernel_.push_back(std::move(conversion));
  }
  for (size_t i = 0; i < request.outputs.size(); ++i) {
    const Layout& layout = k.output_layouts()[i];
    std::unique_ptr<Kernel> conversion;
    if (layout != Layout::Plain()) {
      auto compiled = CompileLayoutConversion(request.type(request.outputs[i]), layout,
                                              Layout::Plain(), registry);
      if (!compiled.ok()) return fail(compiled.status());
      conversion = std::move(*compiled);
    }
    runner->from_kernel_.push_back(std::move(conversion));
  }
  return runner;
}

Status BoundKernel::Run() const {
  return kernel_->Run({input_ptrs_, output_ptrs_, workspace_.get()});
}

StatusOr<std::unique_ptr<BoundKernel>> KernelRunner::Bind(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != request_.inputs.size()) {
    return InvalidArgument("expected {} inputs, got {}", request_.inputs.size(), inputs.size());
  }
  auto bound = std::make_unique<BoundKernel>();
  bound->kernel_ = kernel_.get();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& type = request_.type(request_.inputs[i]);
    if (inputs[i].dtype() != type.dtype || inputs[i].shape() != type.shape) {
      return InvalidArgument("input {} must be {}", i, type.ToString());
    }
    // Copied even when no conversion is needed: the copy has the slack kernels may read.
    bound->owned_.push_back(AllocateBuffer(type.nbytes()));
    if (type.nbytes() > 0) std::memcpy(bound->owned_.back().get(), inputs[i].data(), type.nbytes());
    if (!to_kernel_[i]) {
      bound->input_ptrs_.push_back(bound->owned_.back().get());
      bound->input_bytes_.push_back(type.nbytes());
      continue;
    }
    const void* plain = bound->owned_.back().get();
    bound->owned_.push_back(AllocateBuffer(kernel_->input_layouts()[i].BufferBytes(type)));
    COLLAGE_RETURN_IF_ERROR(RunWithWorkspace(*to_kernel_[i], plain, bound->owned_.back().get()));
    bound->input_ptrs_.push_back(bound->owned_.back().get());
    bound->input_bytes_.push_back(kernel_->input_layouts()[i].BufferBytes(type));
  }
  for (size_t i = 0; i < request_.outputs.size(); ++i) {
    const TensorType& type = request_.type(request_.outputs[i]);
    bound->owned_.push_back(AllocateBuffer(kernel_->output_layouts()[i].BufferBytes(type)));
    bound->output_ptrs_.push_back(bound->owned_.back().get());
  }
  if (kernel_->workspace_bytes() > 0) {
    bound->workspace_ = AllocateBuffer(kernel_->workspace_bytes());
    if (!bound->workspace_) {
      return Internal("cannot allocate a workspace of {} bytes", kernel_->workspace_bytes());
    }
  }
  return bound;
}

StatusOr<std::vector<Tensor>> KernelRunner::Run(const std::vector<Tensor>& inputs) const {
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<BoundKernel> bound, Bind(inputs));
  COLLAGE_RETURN_IF_ERROR(bound->Run());
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < request_.outputs.size(); ++i) {
    const TensorType& type = request_.type(request_.outputs[i]);
    outputs.emplace_back(type.dtype, type.shape);
    if (from_kernel_[i]) {
      COLLAGE_RETURN_IF_ERROR(RunWithWorkspace(*from_kernel_[i], bound->output(i), outputs[i].data()));
    } else if (outputs[i].nbytes() > 0) {
      std::memcpy(outputs[i].data(), bound->output(i), outputs[i].nbytes());
    }
  }
  return outputs;
}

StatusOr<std::vector<Tensor>> RunReferenceGroup(const CompileRequest& request,
                                                const std::vector<Tensor>& inputs) {
  const Graph& graph = *request.graph;
  if (inputs.size() != request.inputs.size()) {
    return InvalidArgument("expected {} inputs, got {}", request.inputs.size(), inputs.size());
  }
  std::map<ValueId, Tensor> values;
  for (size_t i = 0; i < inputs.size(); ++i) values[request.inputs[i]] = inputs[i];
  for (NodeId id : request.node_ids()) {
    const Node& node = graph.node(id);
    std::vector<Tensor> node_inputs;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) {
        node_inputs.emplace_back();
      } else if (graph.value(in).is_constant()) {
        node_inputs.push_back(*graph.value(in).constant);
      } else if (auto it = values.find(in); it != values.end()) {
        node_inputs.push_back(it->second);
      } else {
        return InvalidArgument("value '{}' read by node '{}' is not an input of the group",
                               graph.value(in).name, node.name);
      }
    }
    COLLAGE_ASSIGN_OR_RETURN(std::vector<Tensor> node_outputs,
                             RunReferenceNode(node, graph.opset(), node_inputs));
    for (size_t o = 0; o < node.outputs.size() && o < node_outputs.size(); ++o) {
      if (node.outputs[o] != kNoValue) values[node.outputs[o]] = std::move(node_outputs[o]);
    }
  }
  std::vector<Tensor> outputs;
  for (ValueId out : request.outputs) outputs.push_back(values.at(out));
  return outputs;
}

}  // namespace collage
