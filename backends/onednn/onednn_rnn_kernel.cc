#include "onednn_rnn_kernel.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace collage::onednn {

using dnnl::memory;

SerialScope::SerialScope(bool narrow) {
  if (!narrow) return;
  team_ = omp_get_max_threads();
  omp_set_num_threads(1);
}

SerialScope::~SerialScope() {
  if (team_ > 0) omp_set_num_threads(team_);
}

void Swap::Run(const float* src, float* dst) const {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        std::memcpy(dst + ((o * cols + c) * rows + r) * inner,
                    src + ((o * rows + r) * cols + c) * inner, sizeof(float) * inner);
      }
    }
  }
}

RnnKernel::RnnKernel(std::string what, dnnl::primitive primitive, memory::desc scratchpad,
                     std::vector<std::pair<int, memory>> weights, std::vector<Port> ports,
                     size_t num_inputs, size_t num_outputs, bool serial)
    : serial_(serial),
      what_(std::move(what)),
      primitive_(std::move(primitive)),
      scratchpad_(std::move(scratchpad)),
      weights_(std::move(weights)),
      ports_(std::move(ports)) {
  input_layouts_.assign(num_inputs, Layout::Plain());
  output_layouts_.assign(num_outputs, Layout::Plain());
  auto aligned = [](size_t n) { return (n + 63) / 64 * 64; };
  size_t offset = aligned(scratchpad_.get_size());
  for (Port& p : ports_) {
    if (!p.in_workspace()) continue;
    p.temp_offset = offset;
    offset += aligned(p.desc.get_size());
  }
  workspace_bytes_ = offset;
}

Status RnnKernel::Run(const KernelBuffers& buffers) const {
  return Guard(what_, [&]() -> Status {
    auto* workspace = static_cast<char*>(buffers.workspace);
    if (workspace_bytes_ > 0 && workspace == nullptr) {
      return Internal("{}: no workspace bound", what_);
    }
    std::unordered_map<int, memory> args;
    for (const auto& [arg, weights] : weights_) args.emplace(arg, weights);
    if (scratchpad_.get_size() > 0) {
      args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratchpad_, Engine(), workspace));
    }
    std::vector<std::pair<const Port*, float*>> to_copy_out;
    for (const Port& p : ports_) {
      float* onnx = nullptr;
      if (p.source == Port::Source::kInput) {
        if (p.index >= buffers.inputs.size())
          return Internal("{}: missing input {}", what_, p.index);
        onnx = static_cast<float*>(const_cast<void*>(buffers.inputs[p.index]));
      } else if (p.source == Port::Source::kOutput) {
        if (p.index >= buffers.outputs.size()) {
          return Internal("{}: missing output {}", what_, p.index);
        }
        onnx = static_cast<float*>(buffers.outputs[p.index]);
      }
      float* data = p.in_workspace() ? reinterpret_cast<float*>(workspace + p.temp_offset) : onnx;
      if (p.source == Port::Source::kZeros) std::memset(data, 0, p.desc.get_size());
      // A constant state is copied per run: oneDNN's handles are not const.
      if (p.source == Port::Source::kConstant && p.swap) p.swap->Run(p.constant.data(), data);
      if (p.source == Port::Source::kConstant && !p.swap) {
        std::copy(p.constant.begin(), p.constant.end(), data);
      }
      if (p.source == Port::Source::kInput && p.swap) p.swap->Run(onnx, data);
      if (p.source == Port::Source::kOutput && p.swap) to_copy_out.emplace_back(&p, onnx);
      args.emplace(p.arg, memory(p.desc, Engine(), data));
    }
    dnnl::stream& stream = ThreadStream();
    {
      // The team is the calling thread's OpenMP setting (the runtime's ApplyThreadPolicy).
      SerialScope serial(serial_);
      primitive_.execute(stream, args);
      stream.wait();
    }
    for (const auto& [p, onnx] : to_copy_out) {
      p->swap->Run(reinterpret_cast<const float*>(workspace + p->temp_offset), onnx);
    }
    return Status();
  });
}

}  // namespace collage::onednn
