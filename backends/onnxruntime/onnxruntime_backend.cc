// The `onnxruntime` backend (graph-level): ONNX Runtime's CPU execution provider (its MLAS
// kernels and graph optimizer) runs any node, or any region, that collage hands it. The
// library is the PyPI wheel's, loaded through its versioned C API (onnxruntime_kernel.cc).
#include "collage/sdk/region_engine_backend.h"
#include "onnxruntime_kernel.h"
#include "collage/sdk/errors.h"

namespace collage {
namespace onnxruntime {
namespace {

// The recurrent ops in batch-major form (`layout` 1, opset 14): the CPU execution provider's
// LSTM, GRU and RNN kernels refuse it at session creation.
bool IsBatchMajorRecurrence(const Node& node) {
  const bool recurrent = node.op_type == "LSTM" || node.op_type == "GRU" || node.op_type == "RNN";
  return recurrent && node.attributes.GetInt("layout", 0) != 0;
}

// Every numeric ONNX tensor type the CPU execution provider has kernels for; which op takes
// which type is its business: a node it has no kernel for fails to compile, and the
// measurement records that candidate invalid with ONNX Runtime's message. What it is known to
// refuse is not offered at all. Its own com.microsoft ops (the quantizer's QLinearAdd, QGemm,
// ...) are its to run too.
bool Supported(const Graph& graph, const Node& node) {
  static const std::vector<DType> kDTypes = {
      DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
      DType::kUInt8,   DType::kInt16,   DType::kUInt16,  DType::kInt32,    DType::kUInt32,
      DType::kInt64,   DType::kUInt64,  DType::kBool};
  const bool onnx_or_microsoft =
      IsOnnxNodeOverDTypes(graph, node, kDTypes) ||
      (node.domain == "com.microsoft" && IsNodeOverDTypes(graph, node, kDTypes));
  return onnx_or_microsoft && !IsBatchMajorRecurrence(node);
}

}  // namespace
}  // namespace onnxruntime

Status RegisterOnnxruntimeBackend(BackendRegistry& registry) {
  // Without a usable library the plug-in does not register: `collage backends` lists the
  // backend as unavailable with this reason.
  if (std::string problem = onnxruntime::LibraryProblem(); !problem.empty()) {
    return NotFound("{}", problem);
  }
  return registry.Register(std::make_unique<RegionEngineBackend>(
      "onnxruntime", onnxruntime::LibraryVersion(), onnxruntime::Supported,
      onnxruntime::CompileRegion));
}

}  // namespace collage
