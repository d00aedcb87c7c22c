#include "onednn_util.h"

#include <algorithm>
#include <unordered_map>

namespace collage::onednn {

const dnnl::engine& Engine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

dnnl::memory::dims ToDims(const Shape& shape) {
  if (shape.empty()) return {1};
  return dnnl::memory::dims(shape.begin(), shape.end());
}

dnnl::memory::desc PlainDesc(const Shape& shape) {
  dnnl::memory::dims dims = ToDims(shape);
  dnnl::memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

Shape PadShape(const Shape& shape, size_t rank) {
  Shape out(rank > shape.size() ? rank - shape.size() : 0, 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
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
  if (data.dtype() != DType::kFloat32) {
    return Unsupported("constant of dtype {} (float32 only)", DTypeName(data.dtype()));
  }
  dnnl::memory out;
  Status status = Guard("constant reorder", [&]() -> Status {
    if (NumElements(data.shape()) != NumElements(desc.dims())) {
      return Internal("constant of shape {} does not fill {} elements", ShapeToString(data.shape()),
                      NumElements(desc.dims()));
    }
    dnnl::memory::desc plain = source != nullptr ? *source : PlainDesc(desc.dims());
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
  workspace_bytes_ = scratchpad_.get_size();
}

Status OnednnKernel::Run(const KernelBuffers& buffers) const {
  return Guard(what_, [&]() -> Status {
    // Memory objects are thin handles around the bound pointers: made per run, so that
    // concurrent runs never share one.
    std::unordered_map<int, dnnl::memory> args;
    for (const ArgBinding& a : args_) {
      switch (a.source) {
        case ArgBinding::Source::kInput:
          if (a.index >= buffers.inputs.size()) return Internal("{}: missing input {}", what_, a.index);
          args.emplace(a.arg, dnnl::memory(a.desc, Engine(),
                                           const_cast<void*>(buffers.inputs[a.index])));
          break;
        case ArgBinding::Source::kOutput:
          if (a.index >= buffers.outputs.size()) return Internal("{}: missing output {}", what_, a.index);
          args.emplace(a.arg, dnnl::memory(a.desc, Engine(), buffers.outputs[a.index]));
          break;
        case ArgBinding::Source::kConstant:
          args.emplace(a.arg, a.constant);
          break;
      }
    }
    if (scratchpad_.get_size() > 0) {
      if (buffers.workspace == nullptr) return Internal("{}: no workspace bound", what_);
      args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad_, Engine(), buffers.workspace));
    }
    dnnl::stream stream(Engine());
    primitive_.execute(stream, args);
    stream.wait();
    return Status();
  });
}

StatusOr<ConvGeometry> ConvGeometryOf(const Node& node, const Shape& x, const Shape& w,
                                      const Shape& y, bool transposed) {
  const size_t spatial = x.size() - 2;
  const Attributes& a = node.attributes;
  std::vector<int64_t> strides = a.GetInts("strides", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> dilations = a.GetInts("dilations", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = a.GetInts("pads", std::vector<int64_t>(2 * spatial, 0));
  const std::string auto_pad = a.GetString("auto_pad", "NOTSET");
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial) {
    return Unsupported("{} attribute sizes do not match the rank", node.op_type);
  }
  std::vector<int64_t> kernel = a.GetInts("kernel_shape", Shape(w.begin() + 2, w.end()));
  if (kernel != Shape(w.begin() + 2, w.end())) return Unsupported("kernel_shape differs from W");
  ConvGeometry g;
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t s = strides[d], dil = dilations[d];
    const int64_t in = x[d + 2], out = y[d + 2];
    if (s < 1 || dil < 1) return Unsupported("strides/dilations must be positive");
    const int64_t dk = (kernel[d] - 1) * dil + 1;
    int64_t pl = 0, pr = 0;
    if (auto_pad == "NOTSET") {
      pl = pads[d];
      pr = pads[d + spatial];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // The padding that gives the output size (Conv: ceil(in / stride), ConvTranspose:
      // in * stride); none when the output needs less (ConvTranspose then fails below).
      const int64_t total =
          std::max<int64_t>(0, transposed ? (in - 1) * s + dk - out : (out - 1) * s + dk - in);
      pl = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pr = total - pl;
    } else if (auto_pad != "VALID") {
      return Unsupported("auto_pad '{}'", auto_pad);
    }
    if (pl < 0 || pr < 0) return Unsupported("negative pads");
    const int64_t expected = transposed ? (in - 1) * s + dk - pl - pr : (in + pl + pr - dk) / s + 1;
    if (expected != out) return Unsupported("output size mismatch");
    g.strides.push_back(s);
    g.dilates.push_back(dil - 1);  // oneDNN counts the holes: ONNX dilation d is d - 1
    g.pads_l.push_back(pl);
    g.pads_r.push_back(pr);
  }
  return g;
}

}  // namespace collage::onednn
