// Shared pieces of the oneDNN backend: the CPU engine, tensor types as memory descriptors,
// library errors as Status, and OnednnKernel, one oneDNN primitive run on bound buffers.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"

namespace collage::onednn {

// The process-wide CPU engine (oneDNN engines are thread-safe to share).
const dnnl::engine& Engine();

dnnl::memory::dims ToDims(const Shape& shape);
// Row-major descriptor of a float32 tensor of `shape` (rank 0 becomes {1}).
dnnl::memory::desc PlainDesc(const Shape& shape);
// The same for another element type.
dnnl::memory::desc PlainDesc(const Shape& shape, dnnl::memory::data_type type);
// oneDNN's element type for a dtype the backend computes in (float32, int8, uint8, int32).
std::optional<dnnl::memory::data_type> DataTypeOf(DType dtype);
// `shape` padded with leading ones to `rank` (numpy broadcasting for oneDNN, which needs
// equal ranks).
Shape PadShape(const Shape& shape, size_t rank);

// True for oneDNN's reference implementations ("ref:any", ...): correct but written for
// clarity, not speed (the 7x7 stem of a ResNet takes seconds in one where a JIT kernel takes
// milliseconds). Rules decline such shapes: another backend or native runs them better, and
// measuring them would take longer than the rest of the model.
inline bool IsReferenceImplementation(const std::string& impl_info) {
  return impl_info.rfind("ref", 0) == 0;
}

// True when `impl_info` (which builds the primitive descriptor a rule would compile and
// returns its impl_info_str()) succeeds with an implementation that is not a reference one:
// a rule's predicate. A descriptor oneDNN cannot create (any exception) counts as none.
bool HasOptimizedImplementation(const std::function<std::string()>& impl_info);

// Runs `f`, turning a dnnl::error into Status naming `what` (the primitive being built).
Status Guard(const std::string& what, const std::function<Status()>& f);

// `desc` with another element type, the same dims and element strides (or blocking).
dnnl::memory::desc WithDataType(const dnnl::memory::desc& desc, dnnl::memory::data_type type);

// Whether oneDNN computes bf16 natively on this CPU (AVX-512 BF16 or AMX), not by emulation:
// where it does, convolutions and matmuls are offered in bf16 too (collage/precision.h).
bool ComputesBfloat16();

// A constant of the graph as a dnnl::memory in `desc` (of the constant's element type, or
// bf16 for a float32 constant), reordered from its form `source`
// (default: row-major over desc's dims) when the primitive wants another format: weights are
// packed once, at Compile.
StatusOr<dnnl::memory> ConstantMemory(const Tensor& data, const dnnl::memory::desc& desc,
                                      const dnnl::memory::desc* source = nullptr);

// Where one argument of the primitive comes from at Run.
struct ArgBinding {
  enum class Source { kInput, kOutput, kConstant };
  int arg = 0;  // DNNL_ARG_*
  Source source = Source::kInput;
  size_t index = 0;  // kernel input / output index
  dnnl::memory::desc desc;
  // An input the primitive reads in another element type (bf16) than its buffer holds
  // (float32, in this form): converted into the kernel's workspace before every run.
  dnnl::memory::desc convert_from;
  dnnl::memory constant;  // kConstant
};

// The calling thread's stream on Engine(), made once per thread rather than per call: a
// stream per call was part of the per-step cost OnednnKernel (below) no longer pays.
dnnl::stream& ThreadStream();

// One primitive with its arguments; the scratchpad lives in the kernel workspace so that
// runs on different buffers share nothing mutable.
class OnednnKernel : public Kernel {
 public:
  OnednnKernel(std::string what, dnnl::primitive primitive, std::vector<ArgBinding> args,
               const dnnl::memory::desc& scratchpad, std::vector<Layout> input_layouts,
               std::vector<Layout> output_layouts);
  Status Run(const KernelBuffers& buffers) const override;

 private:
  // A memory object per argument (the constants' own, the others without a buffer) and the
  // argument list the C API executes with; for each converted input, the buffer it is read
  // from.
  struct ArgMemories {
    std::vector<dnnl::memory> memories;  // args_ order, then the scratchpad
    std::vector<dnnl_exec_arg_t> exec;
    std::vector<dnnl::memory> convert_sources;  // conversions_ order
  };
  // An input converted before the primitive runs (ArgBinding::convert_from).
  struct Conversion {
    size_t arg = 0;               // in args_
    size_t workspace_offset = 0;  // where the converted copy lives
    dnnl::primitive reorder;
  };
  ArgMemories MakeArgMemories() const;
  // Points `args`' memories at the run's buffers and executes the primitive.
  Status Execute(ArgMemories& args, const KernelBuffers& buffers) const;

  std::string what_;
  dnnl::primitive primitive_;
  std::vector<ArgBinding> args_;
  dnnl::memory::desc scratchpad_;
  std::vector<Conversion> conversions_;
  // Made once: a run takes them when no other run holds them (one stream of runs, the usual
  // case), else makes its own. Creating them, an argument map and a stream every step had a
  // 138 KB ReLU take 4.1–4.8 µs a call instead of 3.3 µs (docs/backends.md).
  mutable ArgMemories reused_;
  mutable std::atomic<bool> reused_busy_{false};
};

// Primitive attributes every kernel starts from: user scratchpad.
dnnl::primitive_attr BaseAttr();

// Strides, dilations and pads of a convolution or deconvolution in oneDNN's terms.
struct ConvGeometry {
  dnnl::memory::dims strides, dilates, pads_l, pads_r;
};

// A geometry read by ReadConvParams / ReadConvTransposeParams (collage/sdk/op_params.h) in
// oneDNN's terms: oneDNN counts the dilation holes (ONNX dilation d is d - 1). Unsupported
// for negative pads, which oneDNN has no form for.
StatusOr<ConvGeometry> OnednnConvGeometry(const std::vector<int64_t>& strides,
                                          const std::vector<int64_t>& dilations,
                                          const std::vector<int64_t>& pads_begin,
                                          const std::vector<int64_t>& pads_end);

}  // namespace collage::onednn
