#include "onnxruntime_kernel.h"

#include <onnxruntime_c_api.h>
#include <onnxruntime_session_options_config_keys.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "collage/sdk/group_model.h"
#include "collage/sdk/errors.h"
#include "onnxruntime_library.h"

namespace collage::onnxruntime {
namespace {

// The C API table of the loaded library, for the version these headers describe; null when
// the library is not there or is older than the headers.
const OrtApi* Api() {
  static const OrtApi* api = [] {
    const OrtApiBase* base = LoadedApiBase(nullptr);
    return base == nullptr ? nullptr : base->GetApi(ORT_API_VERSION);
  }();
  return api;
}

// Turns an OrtStatus into a Status (releasing it); OK for null.
Status Check(OrtStatus* status, const char* what) {
  if (status == nullptr) return Status();
  std::string message = Api()->GetErrorMessage(status);
  Api()->ReleaseStatus(status);
  // ONNX Runtime's messages can run over many lines (a whole node dump); keep the first.
  if (size_t end = message.find('\n'); end != std::string::npos) message.resize(end);
  return Unsupported("onnxruntime {}: {}", what, message);
}

// One environment per process, as ONNX Runtime requires; never released, so that no session
// outlives it at exit. It logs only fatal errors: every other failure comes back as a Status,
// which the caller reports (or records as an invalid candidate) once.
StatusOr<OrtEnv*> Environment() {
  static OrtEnv* env = nullptr;
  static Status created = [] {
    return Check(Api()->CreateEnv(ORT_LOGGING_LEVEL_FATAL, "collage", &env), "CreateEnv");
  }();
  COLLAGE_RETURN_IF_ERROR(created);
  return env;
}

StatusOr<ONNXTensorElementDataType> ElementType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    case DType::kUInt8: return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8;
    case DType::kInt8: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8;
    case DType::kUInt16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16;
    case DType::kInt16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16;
    case DType::kInt32: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
    case DType::kInt64: return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    case DType::kBool: return ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL;
    case DType::kFloat16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    case DType::kFloat64: return ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE;
    case DType::kUInt32: return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32;
    case DType::kUInt64: return ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64;
    case DType::kBFloat16: return ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16;
    default: return Unsupported("onnxruntime: no tensor type for dtype {}", DTypeName(dtype));
  }
}

struct SessionDeleter {
  void operator()(OrtSession* session) const { Api()->ReleaseSession(session); }
};
struct OptionsDeleter {
  void operator()(OrtSessionOptions* options) const { Api()->ReleaseSessionOptions(options); }
};
struct MemoryInfoDeleter {
  void operator()(OrtMemoryInfo* info) const { Api()->ReleaseMemoryInfo(info); }
};
struct ValueDeleter {
  void operator()(OrtValue* value) const { Api()->ReleaseValue(value); }
};
using ValuePtr = std::unique_ptr<OrtValue, ValueDeleter>;

// One bound tensor of the region: its name in the exported model and its type.
struct Binding {
  std::string name;
  ONNXTensorElementDataType element_type;
  std::vector<int64_t> shape;
  size_t bytes;
};

StatusOr<std::vector<Binding>> Bindings(const CompileRequest& request,
                                        const std::vector<ValueId>& values) {
  std::vector<Binding> bindings;
  for (ValueId id : values) {
    const Value& value = request.graph->value(id);
    COLLAGE_ASSIGN_OR_RETURN(ONNXTensorElementDataType element_type, ElementType(value.type.dtype));
    bindings.push_back({value.name, element_type, value.type.shape, value.type.nbytes()});
  }
  return bindings;
}

std::vector<const char*> Names(const std::vector<Binding>& bindings) {
  std::vector<const char*> names;
  for (const Binding& binding : bindings) names.push_back(binding.name.c_str());
  return names;
}

class RegionKernel final : public Kernel {
 public:
  RegionKernel(std::unique_ptr<OrtSession, SessionDeleter> session,
               std::unique_ptr<OrtMemoryInfo, MemoryInfoDeleter> memory,
               std::vector<Binding> inputs, std::vector<Binding> outputs)
      : session_(std::move(session)),
        memory_(std::move(memory)),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        input_names_(Names(inputs_)),
        output_names_(Names(outputs_)) {
    input_layouts_.assign(inputs_.size(), Layout::Plain());
    output_layouts_.assign(outputs_.size(), Layout::Plain());
  }

  // OrtApi::Run may be called from several threads on one session. The tensors wrap the
  // caller's buffers (no copy); ONNX Runtime writes the outputs into the buffers bound to
  // them, and the values are released (not the buffers) when the run ends.
  Status Run(const KernelBuffers& buffers) const override {
    std::vector<ValuePtr> owned;
    std::vector<const OrtValue*> in;
    std::vector<OrtValue*> out;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      COLLAGE_ASSIGN_OR_RETURN(OrtValue * value,
                               Wrap(inputs_[i], const_cast<void*>(buffers.inputs[i])));
      owned.emplace_back(value);
      in.push_back(value);
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      COLLAGE_ASSIGN_OR_RETURN(OrtValue * value, Wrap(outputs_[i], buffers.outputs[i]));
      owned.emplace_back(value);
      out.push_back(value);
    }
    return Check(Api()->Run(session_.get(), nullptr, input_names_.data(), in.data(), in.size(),
                            output_names_.data(), out.size(), out.data()),
                 "Run");
  }

 private:
  StatusOr<OrtValue*> Wrap(const Binding& binding, void* data) const {
    OrtValue* value = nullptr;
    COLLAGE_RETURN_IF_ERROR(Check(Api()->CreateTensorWithDataAsOrtValue(
                                      memory_.get(), data, binding.bytes, binding.shape.data(),
                                      binding.shape.size(), binding.element_type, &value),
                                  "CreateTensorWithDataAsOrtValue"));
    return value;
  }

  std::unique_ptr<OrtSession, SessionDeleter> session_;
  std::unique_ptr<OrtMemoryInfo, MemoryInfoDeleter> memory_;
  std::vector<Binding> inputs_;
  std::vector<Binding> outputs_;
  std::vector<const char*> input_names_;
  std::vector<const char*> output_names_;
};

// `whole_model`: the region is the whole graph, so no other library's kernel runs between
// two of its runs.
StatusOr<std::unique_ptr<OrtSessionOptions, OptionsDeleter>> SessionOptionsFor(int num_threads,
                                                                                bool whole_model) {
  OrtSessionOptions* raw = nullptr;
  COLLAGE_RETURN_IF_ERROR(Check(Api()->CreateSessionOptions(&raw), "CreateSessionOptions"));
  std::unique_ptr<OrtSessionOptions, OptionsDeleter> options(raw);
  // The session's own pool runs the region on the thread count the kernel was compiled for
  // (the calling thread is one of them). Its workers spin while a run lasts (a region is many
  // small parallel loops: spinning off made NAS-RNN and MobileNetV2 slower).
  // A region inside a plan also stops them the moment its run returns, so that they do not
  // hold the cores the next library's threads need. The whole model does not (ONNX Runtime's
  // default): stopped, its workers were parked at every run's end and woken at the next, and
  // runs in bursts after idle were slower than the package's. The figures are in
  // docs/measurements.md, "Figures behind the code's choices".
  const char* stop_spinning = whole_model ? "0" : "1";
  COLLAGE_RETURN_IF_ERROR(
      Check(Api()->SetIntraOpNumThreads(options.get(), num_threads), "SetIntraOpNumThreads"));
  COLLAGE_RETURN_IF_ERROR(
      Check(Api()->SetInterOpNumThreads(options.get(), 1), "SetInterOpNumThreads"));
  COLLAGE_RETURN_IF_ERROR(
      Check(Api()->SetSessionExecutionMode(options.get(), ORT_SEQUENTIAL), "ExecutionMode"));
  for (const auto& [key, value] : {std::pair{kOrtSessionOptionsConfigAllowIntraOpSpinning, "1"},
                                   std::pair{kOrtSessionOptionsConfigAllowInterOpSpinning, "0"},
                                   std::pair{kOrtSessionOptionsConfigForceSpinningStop, stop_spinning}}) {
    COLLAGE_RETURN_IF_ERROR(
        Check(Api()->AddSessionConfigEntry(options.get(), key, value), "AddSessionConfigEntry"));
  }
  COLLAGE_RETURN_IF_ERROR(
      Check(Api()->SetSessionGraphOptimizationLevel(options.get(), ORT_ENABLE_ALL),
            "SetSessionGraphOptimizationLevel"));
  return options;
}

}  // namespace

std::string LibraryProblem() {
  std::string problem;
  const OrtApiBase* base = LoadedApiBase(&problem);
  if (base == nullptr) return problem;
  if (Api() == nullptr) {
    return fmt::format("the ONNX Runtime library ({}) does not serve C API version {}",
                       base->GetVersionString(), ORT_API_VERSION);
  }
  return "";
}

std::string LibraryVersion() {
  return fmt::format("onnxruntime {} (C API {})", LoadedApiBase(nullptr)->GetVersionString(),
                     ORT_API_VERSION);
}

StatusOr<std::unique_ptr<Kernel>> CompileRegion(const CompileRequest& request) {
  COLLAGE_ASSIGN_OR_RETURN(OrtEnv * env, Environment());
  COLLAGE_ASSIGN_OR_RETURN(std::string model, GroupModelBytes(*request.graph, request.nodes));
  const bool whole_model = request.nodes.size() == request.graph->num_nodes();
  COLLAGE_ASSIGN_OR_RETURN(auto options,
                           SessionOptionsFor(std::max(1, request.num_threads()), whole_model));
  OrtSession* raw_session = nullptr;
  COLLAGE_RETURN_IF_ERROR(Check(
      Api()->CreateSessionFromArray(env, model.data(), model.size(), options.get(), &raw_session),
      "CreateSessionFromArray"));
  std::unique_ptr<OrtSession, SessionDeleter> session(raw_session);
  size_t session_inputs = 0, session_outputs = 0;
  COLLAGE_RETURN_IF_ERROR(
      Check(Api()->SessionGetInputCount(session.get(), &session_inputs), "SessionGetInputCount"));
  COLLAGE_RETURN_IF_ERROR(Check(Api()->SessionGetOutputCount(session.get(), &session_outputs),
                                "SessionGetOutputCount"));
  if (session_inputs != request.inputs.size() || session_outputs != request.outputs.size()) {
    return Internal(
        "onnxruntime: the region's model has {} inputs and {} outputs, the group {} and {}",
        session_inputs, session_outputs, request.inputs.size(), request.outputs.size());
  }
  OrtMemoryInfo* raw_memory = nullptr;
  COLLAGE_RETURN_IF_ERROR(
      Check(Api()->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &raw_memory),
            "CreateCpuMemoryInfo"));
  std::unique_ptr<OrtMemoryInfo, MemoryInfoDeleter> memory(raw_memory);
  COLLAGE_ASSIGN_OR_RETURN(std::vector<Binding> inputs, Bindings(request, request.inputs));
  COLLAGE_ASSIGN_OR_RETURN(std::vector<Binding> outputs, Bindings(request, request.outputs));
  return std::unique_ptr<Kernel>(new RegionKernel(std::move(session), std::move(memory),
                                                  std::move(inputs), std::move(outputs)));
}

}  // namespace collage::onnxruntime
