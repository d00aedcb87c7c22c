// The shared checks and the clamp, shape and constant helpers of xnnpack_analysis.h; the
// per-op analyses live with their kernels (xnnpack_conv.cc, xnnpack_fc.cc, ...).
#include "xnnpack_analysis.h"

#include <xnnpack.h>

#include <string>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_params.h"
#include "xnnpack_checks.h"

namespace collage::xnnpack {

Status RequireFloat(const Graph& graph, const Node& node, ValueId v, const char* what) {
  if (v == kNoValue) return InvalidArgument("{} '{}': {} is absent", node.op_type, node.name, what);
  const TensorType& t = TypeOf(graph, v);
  if (t.dtype != DType::kFloat32) {
    return Unsupported("{} '{}': {} is {} (XNNPACK backends run float32 only)", node.op_type,
                       node.name, what, DTypeName(t.dtype));
  }
  if (!t.is_static() || t.num_elements() <= 0) {
    return Unsupported("{} '{}': {} has shape {} (static, non-empty shapes only)", node.op_type,
                       node.name, what, ShapeToString(t.shape));
  }
  return Status();
}

// A data input: float32, non-empty, not a constant (constants would leave the kernel
// without that input).
Status RequireData(const Graph& graph, const Node& node, ValueId v, const char* what) {
  COLLAGE_RETURN_IF_ERROR(RequireFloat(graph, node, v, what));
  if (graph.value(v).is_constant()) {
    return Unsupported("{} '{}': {} is a constant", node.op_type, node.name, what);
  }
  return Status();
}

Status RequireConst(const Graph& graph, const Node& node, ValueId v, const char* what) {
  COLLAGE_RETURN_IF_ERROR(RequireFloat(graph, node, v, what));
  if (!graph.value(v).is_constant()) {
    return Unsupported("{} '{}': {} must be a constant", node.op_type, node.name, what);
  }
  return Status();
}

// The node has exactly one used output, float32.
Status RequireSingleOutput(const Graph& graph, const Node& node) {
  if (node.outputs.empty() || node.outputs[0] == kNoValue) {
    return InvalidArgument("{} '{}': no output", node.op_type, node.name);
  }
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i] != kNoValue) {
      return Unsupported("{} '{}': output {} is not supported", node.op_type, node.name, i);
    }
  }
  return RequireFloat(graph, node, node.outputs[0], "the output");
}

Status CheckOutputShape(const Graph& graph, const Node& node, const Shape& expected) {
  const Shape& actual = TypeOf(graph, node.outputs[0]).shape;
  if (actual != expected) {
    return Internal("{} '{}': computed output {} differs from the inferred {}", node.op_type,
                    node.name, ShapeToString(expected), ShapeToString(actual));
  }
  return Status();
}


// ---- Clamp ------------------------------------------------------------------------------

StatusOr<ClampRange> AnalyzeClamp(const Graph& graph, const Node& node) {
  ClampRange range;
  if (node.op_type == "Relu") {
    range.min = 0.0f;
  } else if (node.op_type == "Clip") {
    COLLAGE_ASSIGN_OR_RETURN(const ClipBounds<float> bounds, ReadClipBounds(graph, node));
    range.min = bounds.lo;
    range.max = bounds.hi;
  } else {
    return Unsupported("{} '{}' is not a clamp", node.op_type, node.name);
  }
  // XNNPACK needs min < max; NaN bounds compare false and are refused too.
  if (!(range.min < range.max)) {
    return Unsupported("{} '{}': clamp [{}, {}] needs min < max", node.op_type, node.name,
                       range.min, range.max);
  }
  COLLAGE_RETURN_IF_ERROR(RequireFloat(graph, node, Input(node, 0), "the input"));
  COLLAGE_RETURN_IF_ERROR(RequireSingleOutput(graph, node));
  return range;
}

// ---- Shapes and constants ---------------------------------------------------------------

std::vector<size_t> Dims(const Shape& shape) {
  if (shape.empty()) return {1};
  return std::vector<size_t>(shape.begin(), shape.end());
}

std::vector<size_t> NhwcDims(const Shape& shape) {
  Shape s(4 - std::min<size_t>(4, shape.size()), 1);
  s.insert(s.end(), shape.begin(), shape.end());
  return {static_cast<size_t>(s[0]), static_cast<size_t>(s[2]), static_cast<size_t>(s[3]),
          static_cast<size_t>(s[1])};
}

std::vector<float> ConstantNhwc(const Tensor& tensor) {
  const std::vector<float> src = tensor.ToVector<float>();
  const std::vector<size_t> d = NhwcDims(tensor.shape());  // n, h, w, c
  std::vector<float> dst(src.size());
  const size_t n = d[0], h = d[1], w = d[2], c = d[3];
  for (size_t in = 0; in < n; ++in) {
    for (size_t ic = 0; ic < c; ++ic) {
      for (size_t ih = 0; ih < h; ++ih) {
        for (size_t iw = 0; iw < w; ++iw) {
          dst[((in * h + ih) * w + iw) * c + ic] = src[((in * c + ic) * h + ih) * w + iw];
        }
      }
    }
  }
  return dst;
}

std::vector<float> ConstantFloats(const Graph& graph, ValueId value) {
  return graph.value(value).constant->ToVector<float>();
}

}  // namespace collage::xnnpack
