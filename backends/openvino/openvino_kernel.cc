#include "openvino_kernel.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <mutex>
#include <openvino/core/version.hpp>
#include <openvino/op/parameter.hpp>
#include <openvino/runtime/core.hpp>
#include <openvino/runtime/intel_cpu/properties.hpp>
#include <sstream>
#include <vector>

#include "collage/sdk/group_model.h"
#include "collage/sdk/errors.h"

namespace collage::openvino {

namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// OpenVINO's exception texts are a stack of "Exception from src/...cpp:N:" and "Check '...'
// failed at ...:" lines around the one line that says what went wrong; keep the first two
// lines that say something (the framework adds backend, rule and node).
std::string OpenvinoMessage(const std::exception& e) {
  std::istringstream in(e.what());
  std::vector<std::string> kept;
  for (std::string line; kept.size() < 2 && std::getline(in, line);) {
    line.erase(0, line.find_first_not_of(" \t-"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty() || line.back() == ':' || StartsWith(line, "Exception from ") ||
        StartsWith(line, "Check '") || StartsWith(line, "FrontEnd API failed") ||
        StartsWith(line, "Model wasn't fully converted") || StartsWith(line, "To facilitate")) {
      continue;
    }
    kept.push_back(line);
  }
  if (kept.empty()) {
    std::string all = e.what();
    std::replace(all.begin(), all.end(), '\n', ' ');
    return all.substr(0, 300);
  }
  return kept.size() == 1 ? kept[0] : kept[0] + "; " + kept[1];
}

// Runs `f`, turning any exception OpenVINO throws into a Status of `code`.
template <typename F>
Status Guarded(StatusCode code, const char* what, F&& f) {
  try {
    f();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Status(code, fmt::format("OpenVINO, {}: {}", what, OpenvinoMessage(e)));
  } catch (...) {
    return Status(code, fmt::format("OpenVINO, {}: an exception that is not std::exception", what));
  }
}

// One process-wide Core: it loads the CPU plug-in once and is thread-safe. Never destroyed:
// kernels held by static caches may outlive it, and tearing OpenVINO's TBB down in exit()
// races with their destructors.
StatusOr<ov::Core*> TheCore() {
  static ov::Core* core = nullptr;
  static Status status =
      Guarded(StatusCode::kInternal, "creating ov::Core", [] { core = new ov::Core(); });
  if (!status.ok()) return status;
  return core;
}

ov::element::Type ElementType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return ov::element::f32;
    case DType::kFloat64: return ov::element::f64;
    case DType::kFloat16: return ov::element::f16;
    case DType::kBFloat16: return ov::element::bf16;
    case DType::kInt64: return ov::element::i64;
    case DType::kInt32: return ov::element::i32;
    case DType::kInt16: return ov::element::i16;
    case DType::kInt8: return ov::element::i8;
    case DType::kUInt64: return ov::element::u64;
    case DType::kUInt32: return ov::element::u32;
    case DType::kUInt16: return ov::element::u16;
    case DType::kUInt8: return ov::element::u8;
    case DType::kBool: return ov::element::boolean;
    default: return ov::element::dynamic;
  }
}

// One kernel input or output: the compiled model's port it is bound to and the tensor last
// set on it (re-created only when the caller's buffer moves).
struct Binding {
  std::string name;
  bool bound_port = false;  // false: an input the compiled model does not read
  size_t port_index = 0;    // in the compiled model's inputs() or outputs()
  ov::Output<const ov::Node> port;
  ov::element::Type type;
  ov::Shape shape;
  size_t bytes = 0;
  void* bound = nullptr;
  int pass_through_of = -1;  // outputs only: the input binding it is, see FindPassThroughs
};

// The compiled model's port for each value of `values`, by tensor name. The ONNX frontend
// moves a name when a node folds into its input (Dropout, Identity: the graph input's tensor
// then carries only the output's name), and two outputs of one tensor share names; the port at
// the same position is taken then, as Parameters and Results keep the ONNX graph's order.
// With `optional`, a value no port is left for is not bound (OpenVINO drops the inputs nothing
// reads, e.g. Dropout's ratio); every port must be bound.
Status BindPorts(const Graph& graph, const std::vector<ValueId>& values,
                 const std::vector<ov::Output<const ov::Node>>& ports, const char* what,
                 bool optional, std::vector<Binding>& out) {
  // First every value whose name a port carries, then the rest by position.
  std::vector<size_t> port_of(values.size(), ports.size());
  std::vector<bool> taken(ports.size(), false);
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& name = graph.value(values[i]).name;
    for (size_t p = 0; p < ports.size() && port_of[i] == ports.size(); ++p) {
      if (!taken[p] && ports[p].get_names().count(name) != 0) taken[port_of[i] = p] = true;
    }
  }
  for (size_t i = 0; i < values.size() && i < ports.size(); ++i) {
    if (port_of[i] == ports.size() && !taken[i]) taken[port_of[i] = i] = true;
  }
  for (size_t p = 0; p < ports.size(); ++p) {
    if (!taken[p]) {
      const auto& names = ports[p].get_names();
      return Internal("OpenVINO's compiled model has an {} '{}' that is none of the region's", what,
                      names.empty() ? std::string("?") : *names.begin());
    }
  }
  out.assign(values.size(), Binding{});
  for (size_t i = 0; i < values.size(); ++i) {
    const Value& value = graph.value(values[i]);
    const size_t found = port_of[i];
    Binding& b = out[i];
    b.name = value.name;
    if (found == ports.size()) {
      if (optional) continue;
      return Internal("no port of OpenVINO's compiled model is the region's {} '{}'", what,
                      value.name);
    }
    b.bound_port = true;
    b.port_index = found;
    b.port = ports[found];
    b.type = ElementType(value.type.dtype);
    b.shape.assign(value.type.shape.begin(), value.type.shape.end());
    b.bytes = value.type.nbytes();
    // OpenVINO infers its own shapes and types: one that differs from collage's (an input it
    // did not fold to a constant, an op it reads otherwise) cannot share the caller's buffer.
    const ov::PartialShape& shape = b.port.get_partial_shape();
    if (b.port.get_element_type() != b.type || shape.is_dynamic() || shape.to_shape() != b.shape) {
      return Unsupported("OpenVINO infers {} '{}' as {}{}, collage as {}", what, value.name,
                         b.port.get_element_type().get_type_name(), shape.to_string(),
                         value.type.ToString());
    }
  }
  return Status::Ok();
}

class RegionKernel final : public Kernel {
 public:
  // May throw (OpenVINO's calls): CompileRegion guards it.
  Status Build(const CompileRequest& request, ov::CompiledModel compiled) {
    compiled_ = std::move(compiled);
    COLLAGE_RETURN_IF_ERROR(
        BindPorts(*request.graph, request.inputs, compiled_.inputs(), "input", true, inputs_));
    COLLAGE_RETURN_IF_ERROR(
        BindPorts(*request.graph, request.outputs, compiled_.outputs(), "output", false, outputs_));
    input_layouts_.assign(inputs_.size(), Layout::Plain());
    output_layouts_.assign(outputs_.size(), Layout::Plain());
    FindPassThroughs();
    request_ = compiled_.create_infer_request();
    return Status::Ok();
  }

  // One InferRequest: binding the buffers and infer() are one critical section.
  Status Run(const KernelBuffers& buffers) const override {
    if (buffers.inputs.size() != inputs_.size() || buffers.outputs.size() != outputs_.size()) {
      return InvalidArgument("openvino kernel: {} inputs and {} outputs given, {} and {} expected",
                             buffers.inputs.size(), buffers.outputs.size(), inputs_.size(),
                             outputs_.size());
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return Guarded(StatusCode::kInternal, "running the compiled model", [&] {
      for (size_t i = 0; i < inputs_.size(); ++i) {
        // OpenVINO only reads inputs; its Tensor has one non-const pointer type.
        if (inputs_[i].bound_port) Bind(inputs_[i], const_cast<void*>(buffers.inputs[i]));
      }
      for (size_t i = 0; i < outputs_.size(); ++i) {
        if (outputs_[i].pass_through_of < 0) Bind(outputs_[i], buffers.outputs[i]);
      }
      request_.infer();
      for (size_t i = 0; i < outputs_.size(); ++i) {
        Binding& b = outputs_[i];
        if (b.pass_through_of >= 0) {
          const void* in = buffers.inputs[static_cast<size_t>(b.pass_through_of)];
          if (buffers.outputs[i] != in) std::memcpy(buffers.outputs[i], in, b.bytes);
          continue;
        }
        // The plug-in may have replaced the output tensor with its own memory: copy then.
        ov::Tensor got = request_.get_tensor(b.port);
        if (got.data() != b.bound) {
          OPENVINO_ASSERT(got.get_byte_size() == b.bytes, "output '", b.name, "' has ",
                          got.get_byte_size(), " bytes, ", b.bytes, " expected");
          std::memcpy(b.bound, got.data(), b.bytes);
          b.bound = nullptr;  // set the caller's buffer again next time
        }
      }
    });
  }

 private:
  // Outputs that the compiled graph takes straight from an input (the frontend folds a
  // Dropout or Identity away). The plug-in gives such a Result and its Parameter one memory:
  // binding the caller's output buffer there would redirect the input to it. Run leaves those
  // outputs unbound and copies the input. Found in the runtime model, after the plug-in's own
  // passes; its Parameters and Results are in the order of the compiled model's ports.
  void FindPassThroughs() {
    std::shared_ptr<const ov::Model> runtime = compiled_.get_runtime_model();
    const auto& results = runtime->get_results();
    OPENVINO_ASSERT(results.size() == compiled_.outputs().size() &&
                        runtime->get_parameters().size() == compiled_.inputs().size(),
                    "the runtime model's inputs and outputs are not the compiled model's");
    for (Binding& out : outputs_) {
      auto parameter = std::dynamic_pointer_cast<ov::op::v0::Parameter>(
          results[out.port_index]->input_value(0).get_node_shared_ptr());
      if (parameter == nullptr) continue;
      const int64_t index = runtime->get_parameter_index(parameter);
      for (size_t in = 0; in < inputs_.size(); ++in) {
        if (index >= 0 && inputs_[in].bound_port &&
            inputs_[in].port_index == static_cast<size_t>(index)) {
          out.pass_through_of = static_cast<int>(in);
        }
      }
      OPENVINO_ASSERT(out.pass_through_of >= 0, "output '", out.name,
                      "' is an input of the compiled model that the kernel does not bind");
    }
  }

  // Zero-copy: the caller's buffer becomes the port's tensor, set only when it changes.
  void Bind(Binding& b, void* data) const {
    if (b.bound == data) return;
    request_.set_tensor(b.port, ov::Tensor(b.type, b.shape, data));
    b.bound = data;
  }

  ov::CompiledModel compiled_;
  mutable ov::InferRequest request_;
  mutable std::vector<Binding> inputs_;
  mutable std::vector<Binding> outputs_;
  mutable std::mutex mutex_;
};

}  // namespace

std::vector<Precision> ReducedPrecisions() {
  StatusOr<ov::Core*> core = TheCore();
  if (!core.ok()) return {};
  bool bf16 = false;
  const Status asked = Guarded(StatusCode::kInternal, "reading the CPU's capabilities", [&] {
    const std::vector<std::string> capabilities =
        (*core)->get_property("CPU", ov::device::capabilities);
    bf16 = std::find(capabilities.begin(), capabilities.end(), ov::device::capability::BF16) !=
           capabilities.end();
  });
  if (!asked.ok() || !bf16) return {};
  return {Precision::kBfloat16};
}

std::string LibraryVersion() {
  return fmt::format("OpenVINO {} CPU f32", ov::get_openvino_version().buildNumber);
}

StatusOr<std::unique_ptr<Kernel>> CompileRegion(const CompileRequest& request) {
  if (request.graph == nullptr) return InvalidArgument("openvino: the request has no graph");
  if (request.precision != Precision::kFloat32 && request.precision != Precision::kBfloat16) {
    return Unsupported("openvino: no {} here", PrecisionName(request.precision));
  }
  for (const std::vector<ValueId>* values : {&request.inputs, &request.outputs}) {
    for (ValueId v : *values) {
      if (ElementType(request.type(v).dtype) == ov::element::dynamic) {
        return Unsupported("openvino: no OpenVINO element type for {} '{}'",
                           request.type(v).ToString(), request.graph->value(v).name);
      }
    }
  }
  COLLAGE_ASSIGN_OR_RETURN(std::string onnx, GroupModelBytes(*request.graph, request.nodes));
  COLLAGE_ASSIGN_OR_RETURN(ov::Core * core, TheCore());
  std::shared_ptr<ov::Model> model;
  COLLAGE_RETURN_IF_ERROR(Guarded(StatusCode::kUnsupported, "reading the region as ONNX",
                                  [&] { model = core->read_model(onnx, ov::Tensor()); }));
  const int threads = std::max(1, request.num_threads());
  // f32 throughout unless bf16 is asked for: on a CPU with AVX-512 BF16 or AMX the plug-in
  // would otherwise run matmuls and convolutions in bf16, far outside float32's 1e-3
  // tolerance. In bf16 it runs as its own default does on such a CPU.
  const bool bf16 = request.precision == Precision::kBfloat16;
  ov::CompiledModel compiled;
  COLLAGE_RETURN_IF_ERROR(Guarded(StatusCode::kUnsupported, "compiling for CPU", [&] {
    compiled = core->compile_model(
        model, "CPU", ov::inference_num_threads(threads), ov::num_streams(1),
        ov::hint::num_requests(1), ov::hint::performance_mode(ov::hint::PerformanceMode::LATENCY),
        ov::hint::execution_mode(bf16 ? ov::hint::ExecutionMode::PERFORMANCE
                                      : ov::hint::ExecutionMode::ACCURACY),
        ov::hint::inference_precision(bf16 ? ov::element::bf16 : ov::element::f32),
        // Sessions of other libraries share the cores: no pinning, no reserved cores.
        ov::hint::enable_cpu_pinning(false), ov::hint::enable_cpu_reservation(false),
        ov::hint::allow_auto_batching(false),
        // Flushing subnormals to zero (FTZ/DAZ) would differ from the reference kernels.
        ov::intel_cpu::denormals_optimization(false));
  }));
  auto kernel = std::make_unique<RegionKernel>();
  Status built;
  COLLAGE_RETURN_IF_ERROR(Guarded(StatusCode::kInternal, "binding the compiled model",
                                  [&] { built = kernel->Build(request, std::move(compiled)); }));
  COLLAGE_RETURN_IF_ERROR(built);
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace collage::openvino
