// Registration of the `openvino` backend: OpenVINO's ONNX frontend and CPU plug-in as an
// engine backend (backend/region_engine_rules.h), a graph-level backend whose regions are
// compiled whole (openvino_kernel.h).
//
// What it takes: ONNX nodes over float32, int64, int32, int8, uint8 and bool, less the ones
// below that the frontend converts wrongly or the plug-in computes otherwise than ONNX, found
// by running the ONNX node conformance cases and probes of integer arithmetic. float64,
// float16 and bfloat16 are left out: the plug-in computes them in f32 (or bf16), not in the
// precision the reference kernels use.
//
// Known and accepted: the CPU plug-in holds int64 tensors as int32, so int64 values outside
// [-2^31, 2^31) are truncated even by Reshape or Gather; int64 here means indices, shapes and
// token ids, which fit.
#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "collage/sdk/errors.h"
#include "collage/sdk/index_bounds.h"
#include "collage/sdk/op_params.h"
#include "collage/sdk/region_engine_backend.h"
#include "openvino_kernel.h"

namespace collage {

namespace openvino {

namespace {

bool IsInteger(DType dtype) {
  return dtype == DType::kInt64 || dtype == DType::kInt32 || dtype == DType::kInt8 ||
         dtype == DType::kUInt8;
}
bool IsEightBit(DType dtype) { return dtype == DType::kInt8 || dtype == DType::kUInt8; }

bool HasInput(const Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != kNoValue;
}

// Pooling with ceil_mode=1, where the last window hangs over the end padding. ONNX (as
// PyTorch) drops a last window that would start in the end padding, OpenVINO keeps it (and
// infers a larger output than collage); and an AveragePool with count_include_pad divides a
// window hanging over the padded end by all of its size (ONNX: by the part inside).
struct CeilWindows {
  bool overhang = false;           // some dim's last window reaches past the end padding
  bool starts_in_padding = false;  // OpenVINO's output is larger than collage's
};
CeilWindows CeilModeWindows(const Graph& graph, const Node& node) {
  const StatusOr<PoolParams> p = ReadPoolParams(graph, node);
  if (!p.ok()) return {true, true};  // not a form checked here
  CeilWindows w;
  if (!p->ceil_mode) return w;
  for (size_t d = 0; d < p->spatial_rank; ++d) {
    const int64_t span =
        p->in_spatial[d] + p->pads_begin[d] + p->pads_end[d] - p->dilated_kernel(d);
    const int64_t s = p->strides[d];
    w.overhang |= span % s != 0;
    // OpenVINO's ceil_mode output keeps every window that starts inside the padded input.
    w.starts_in_padding |= (span + s - 1) / s + 1 != p->out_spatial[d];
  }
  return w;
}

// Why OpenVINO cannot be trusted with `node`, or nullptr when it can. Each entry was seen to
// fail with OpenVINO 2026.4 (a wrong result, unless it says otherwise).
const char* WhyRefused(const Graph& graph, const Node& node) {
  const std::string& op = node.op_type;
  const Attributes& a = node.attributes;
  const DType out = node.outputs.empty() || node.outputs[0] == kNoValue
                        ? DType::kUndefined
                        : graph.value(node.outputs[0]).type.dtype;

  // Opsets 13-17 keep the axes of these three in an attribute, which the frontend ignores:
  // it reduces over every axis (ReduceSum, ReduceMean, ... are right).
  static const std::set<std::string> kAxesIgnored = {"ReduceL1", "ReduceLogSum", "ReduceLogSumExp"};
  if (kAxesIgnored.count(op) != 0 && graph.opset() >= 13 && graph.opset() < 18) {
    return "the ONNX frontend ignores the axes attribute at opsets 13-17";
  }
  if (op == "Resize") {
    const std::string transform = a.GetString("coordinate_transformation_mode", "half_pixel");
    if (a.GetInt("exclude_outside", 0) != 0) return "Resize: exclude_outside is computed wrongly";
    if (transform == "align_corners" && a.GetString("mode", "nearest") != "nearest") {
      return "Resize: linear and cubic align_corners downsample wrongly";
    }
    if (transform == "tf_crop_and_resize") return "Resize: tf_crop_and_resize is not converted";
    // Opset 18-19 additions, which the conformance cases (opsets <= 17) do not check.
    if (a.GetInt("antialias", 0) != 0 || a.Has("axes") ||
        a.GetString("keep_aspect_ratio_policy", "stretch") != "stretch") {
      return "Resize: antialias, axes and keep_aspect_ratio_policy are not verified";
    }
  }
  if (op == "MaxPool" || op == "AveragePool") {
    const CeilWindows w = CeilModeWindows(graph, node);
    if (w.starts_in_padding) return "ceil_mode: OpenVINO keeps a last window in the end padding";
    const StatusOr<PoolParams> p = ReadPoolParams(graph, node);
    if (w.overhang && p.ok() && p->count_include_pad) {
      return "ceil_mode with count_include_pad: the divisor of the last window is wrong";
    }
  }
  // An index out of range reads as zeros where the spec (and the reference kernels) refuse
  // it: taken only with indices known good, constants checked here or graph inputs the
  // session checks on every run.
  size_t index_slot = 0;
  const std::vector<IndexAxis> indexed = IndexedAxes(graph, node, &index_slot);
  if (!indexed.empty()) {
    const Value& indices = graph.value(node.inputs[index_slot]);
    if (indices.is_constant()) {
      if (!CheckIndexValues(*indices.constant, indexed).ok()) return "indices out of range";
    } else if (indices.producer >= 0) {  // not a graph input: computed by a node
      return "indices computed in the graph: an out-of-range one reads as zeros, not an error";
    }
  }
  // Computed as log(1 + e^x) in f32: 0, even negative (Softplus(-29) = -1.9e-6) below
  // x = -15, where a Log after them then sees -inf or NaN.
  if (op == "Softplus" || op == "Mish") return "inaccurate for x < -15";
  if (op == "MaxPool" && node.outputs.size() > 1 && node.outputs[1] != kNoValue) {
    const StatusOr<PoolParams> p = ReadPoolParams(graph, node);
    if (p.ok() && p->column_major_indices) {
      return "MaxPool: storage_order=1 (column-major Indices) is ignored";
    }
  }
  // Trilu with a k the graph computes and a single row: the plug-in infers that dim as
  // dynamic (and Compile refuses the shape).
  if (op == "Trilu" && HasInput(node, 1) && !graph.value(node.inputs[1]).is_constant()) {
    const Shape& shape = graph.value(node.inputs[0]).type.shape;
    if (shape.size() >= 2 && shape[shape.size() - 2] == 1) return "Trilu: one row, k an input";
  }
  if (op == "LSTM" || op == "GRU" || op == "RNN") {
    if (a.GetInt("layout", 0) != 0) return "batch-major recurrent layout (layout=1) is wrong";
    if (op == "LSTM" && HasInput(node, 7)) return "LSTM peepholes are computed wrongly";
    if (op == "LSTM" && a.GetInt("input_forget", 0) != 0) return "LSTM input_forget not verified";
  }
  // The plug-in runs int32 MatMul and ReduceSum through f32 (exact only below 2^24); the
  // other reductions and products are taken to do the same.
  static const std::set<std::string> kIntegerViaFloat = {
      "MatMul",     "Gemm",     "Conv",     "ConvTranspose",   "ReduceSum",    "ReduceProd",
      "ReduceMean", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp",
      "Pow",        "Mean"};
  if (IsInteger(out) && kIntegerViaFloat.count(op) != 0) {
    return "integer arithmetic computed in f32";
  }
  // int8/uint8 arithmetic saturates where ONNX wraps around (int32 wraps, as it should).
  static const std::set<std::string> kSaturating = {"Add", "Sub", "Mul",     "Neg",
                                                    "Abs", "Sum", "BitShift"};
  if (IsEightBit(out) && kSaturating.count(op) != 0) return "8-bit arithmetic saturates";
  return nullptr;
}

bool Supports(const Graph& graph, const Node& node) {
  static const std::vector<DType> kDTypes = {DType::kFloat32, DType::kInt64, DType::kInt32,
                                             DType::kInt8,    DType::kUInt8, DType::kBool};
  return IsOnnxNodeOverDTypes(graph, node, kDTypes) && WhyRefused(graph, node) == nullptr;
}

}  // namespace

}  // namespace openvino

Status RegisterOpenvinoBackend(BackendRegistry& registry) {
  return registry.Register(std::make_unique<RegionEngineBackend>(
      "openvino", openvino::LibraryVersion(), openvino::Supports, openvino::CompileRegion,
      openvino::ReducedPrecisions()));
}

}  // namespace collage
