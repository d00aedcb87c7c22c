#include "onednn_util.h"

#include <algorithm>
#include <unordered_map>

namespace collage::onednn {

const dnnl::engine& Engine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::stream& ThreadStream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

dnnl::memory::dims ToDims(const Shape& shape) {
  if (shape.empty()) return {1};
  return dnnl::memory::dims(shape.begin(), shape.end());
}

dnnl::memory::desc PlainDesc(const Shape& shape) {
  return PlainDesc(shape, dnnl::memory::data_type::f32);
}

dnnl::memory::desc PlainDesc(const Shape& shape, dnnl::memory::data_type type) {
  dnnl::memory::dims dims = ToDims(shape);
  dnnl::memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return dnnl::memory::desc(dims, type, strides);
}

dnnl::memory::desc WithDataType(const dnnl::memory::desc& desc, dnnl::memory::data_type type) {
  dnnl_memory_desc_t changed = desc.data;
  changed.data_type = static_cast<dnnl_data_type_t>(type);
  return dnnl::memory::desc(changed);
}

bool ComputesBfloat16() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

std::optional<dnnl::memory::data_type> DataTypeOf(DType dtype) {
  using dt = dnnl::memory::data_type;
  switch (dtype) {
    case DType::kFloat32: return dt::f32;
    case DType::kInt8: return dt::s8;
    case DType::kUInt8: return dt::u8;
    case DType::kInt32: return dt::s32;
    default: return std::nullopt;
  }
}

Shape PadShape(const Shape& shape, size_t rank) {
  Shape out(rank > shape.size() ? rank - shape.size() : 0, 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

bool HasOptimizedImplementation(const std::function<std::string()>& impl_info) {
  try {
    return !IsReferenceImplementation(impl_info());
  } catch (const std::exception&) {  // dnnl::error included
    return false;
  }
}

Status Guard(const std::string& what, const std::function<Status()>& f) {
  try {
    return f();
  } catch (const dnnl::error& e) {
    return Internal("oneDNN {}: {} (status {})", what, e.what(), static_cast<int>(e.status));
  } catch (const std::exception& e) {
    return Internal("oneDNN {}: {}", what, e.what());
  }
}

StatusOr<dnnl::memory> ConstantMemory(const Tensor& data, const dnnl::memory::desc& desc,
                                      const dnnl::memory::desc* source) {
  const std::optional<dnnl::memory::data_type> type = DataTypeOf(data.dtype());
  const bool to_bf16 =
      type == dnnl::memory::data_type::f32 && desc.data_type() == dnnl::memory::data_type::bf16;
  if (!type.has_value() || (*type != desc.data_type() && !to_bf16)) {
    return Unsupported("constant of dtype {} for a {} operand", DTypeName(data.dtype()),
                       static_cast<int>(desc.data_type()));
  }
  dnnl::memory out;
  Status status = Guard("constant reorder", [&]() -> Status {
    if (NumElements(data.shape()) != NumElements(desc.dims())) {
      return Internal("constant of shape {} does not fill {} elements", ShapeToString(data.shape()),
                      NumElements(desc.dims()));
    }
    dnnl::memory::desc plain = source != nullptr ? *source : PlainDesc(desc.dims(), *type);
    out = dnnl::memory(desc, Engine());
    // The source is only read; oneDNN's handle type is non-const.
    dnnl::memory src(plain, Engine(), const_cast<void*>(data.data()));
    dnnl::stream stream(Engine());
    dnnl::reorder(src, out).execute(stream, src, out);
    stream.wait();
    return Status();
  });
  if (!status.ok()) return status;
  return out;
}

dnnl::primitive_attr BaseAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

OnednnKernel::OnednnKernel(std::string what, dnnl::primitive primitive,
                           std::vector<ArgBinding> args, const dnnl::memory::desc& scratchpad,
                           std::vector<Layout> input_layouts, std::vector<Layout> output_layouts)
    : what_(std::move(what)),
      primitive_(std::move(primitive)),
      args_(std::move(args)),
      scratchpad_(scratchpad) {
  input_layouts_ = std::move(input_layouts);
  output_layouts_ = std::move(output_layouts);
  // The workspace: the scratchpad, then each converted input, 64-byte aligned.
  auto aligned = [](size_t bytes) { return (bytes + 63) / 64 * 64; };
  workspace_bytes_ = aligned(scratchpad_.get_size());
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i].convert_from.is_zero()) continue;
    dnnl::reorder::primitive_desc pd(Engine(), args_[i].convert_from, Engine(), args_[i].desc);
    conversions_.push_back({i, workspace_bytes_, dnnl::reorder(pd)});
    workspace_bytes_ += aligned(args_[i].desc.get_size());
  }
  reused_ = MakeArgMemories();
}

OnednnKernel::ArgMemories OnednnKernel::MakeArgMemories() const {
  void* const no_buffer = DNNL_MEMORY_NONE;  // each run points them at its buffers
  ArgMemories m;
  for (const ArgBinding& a : args_) {
    m.memories.push_back(a.source == ArgBinding::Source::kConstant
                             ? a.constant
                             : dnnl::memory(a.desc, Engine(), no_buffer));
    m.exec.push_back({a.arg, m.memories.back().get()});
  }
  if (scratchpad_.get_size() > 0) {
    m.memories.emplace_back(scratchpad_, Engine(), no_buffer);
    m.exec.push_back({DNNL_ARG_SCRATCHPAD, m.memories.back().get()});
  }
  for (const Conversion& c : conversions_) {
    m.convert_sources.emplace_back(args_[c.arg].convert_from, Engine(), no_buffer);
  }
  return m;
}

Status OnednnKernel::Execute(ArgMemories& args, const KernelBuffers& buffers) const {
  if (workspace_bytes_ > 0 && buffers.workspace == nullptr) {
    return Internal("{}: no workspace bound", what_);
  }
  for (size_t i = 0; i < args_.size(); ++i) {
    const ArgBinding& a = args_[i];
    if (a.source == ArgBinding::Source::kInput) {
      if (a.index >= buffers.inputs.size()) return Internal("{}: missing input {}", what_, a.index);
      args.memories[i].set_data_handle(const_cast<void*>(buffers.inputs[a.index]));
    } else if (a.source == ArgBinding::Source::kOutput) {
      if (a.index >= buffers.outputs.size())
        return Internal("{}: missing output {}", what_, a.index);
      args.memories[i].set_data_handle(buffers.outputs[a.index]);
    }
  }
  if (scratchpad_.get_size() > 0) {
    args.memories[args_.size()].set_data_handle(buffers.workspace);
  }
  dnnl::stream& stream = ThreadStream();
  // Converted inputs: read from the run's buffer, written into the workspace, where the
  // primitive reads them.
  for (size_t k = 0; k < conversions_.size(); ++k) {
    const Conversion& c = conversions_[k];
    dnnl::memory& from = args.convert_sources[k];
    dnnl::memory& to = args.memories[c.arg];
    from.set_data_handle(to.get_data_handle());
    to.set_data_handle(static_cast<char*>(buffers.workspace) + c.workspace_offset);
    dnnl_exec_arg_t reorder_args[] = {{DNNL_ARG_FROM, from.get()}, {DNNL_ARG_TO, to.get()}};
    dnnl::error::wrap_c_api(dnnl_primitive_execute(c.reorder.get(), stream.get(), 2, reorder_args),
                            "could not convert an input");
  }
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(primitive_.get(), stream.get(), static_cast<int>(args.exec.size()),
                             args.exec.data()),
      "could not execute a primitive");
  stream.wait();
  return Status();
}

Status OnednnKernel::Run(const KernelBuffers& buffers) const {
  return Guard(what_, [&]() -> Status {
    if (!reused_busy_.exchange(true, std::memory_order_acquire)) {
      struct Release {
        std::atomic<bool>& busy;
        ~Release() { busy.store(false, std::memory_order_release); }
      } release{reused_busy_};
      return Execute(reused_, buffers);
    }
    ArgMemories own = MakeArgMemories();  // another run holds reused_
    return Execute(own, buffers);
  });
}

StatusOr<ConvGeometry> OnednnConvGeometry(const std::vector<int64_t>& strides,
                                          const std::vector<int64_t>& dilations,
                                          const std::vector<int64_t>& pads_begin,
                                          const std::vector<int64_t>& pads_end) {
  ConvGeometry g;
  for (size_t d = 0; d < strides.size(); ++d) {
    if (pads_begin[d] < 0 || pads_end[d] < 0) return Unsupported("negative pads");
    g.strides.push_back(strides[d]);
    g.dilates.push_back(dilations[d] - 1);
    g.pads_l.push_back(pads_begin[d]);
    g.pads_r.push_back(pads_end[d]);
  }
  return g;
}

}  // namespace collage::onednn
