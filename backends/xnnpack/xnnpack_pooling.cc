// MaxPool / AveragePool → *_pooling2d_nhwc_f32, GlobalAveragePool →
// global_average_pooling_nwc_f32 (an NHWC image is N rows of H·W pixels of C channels).
// Channels-last in and out. The ONNX corner cases XNNPACK computes differently
// (count_include_pad with padding, ceil_mode adding windows) are refused by AnalyzePool.
#include <algorithm>
#include <string>

#include "collage/sdk/errors.h"
#include "xnnpack_checks.h"
#include "xnnpack_kernels.h"

namespace collage::xnnpack {

// ---- Pooling ----------------------------------------------------------------------------

StatusOr<PoolSpec> AnalyzePool(const Graph& graph, const Node& node) {
  PoolSpec s;
  if (node.op_type == "MaxPool") {
    s.kind = PoolKind::kMax;
  } else if (node.op_type == "AveragePool") {
    s.kind = PoolKind::kAverage;
  } else if (node.op_type == "GlobalAveragePool") {
    s.kind = PoolKind::kGlobalAverage;
  } else {
    return Unsupported("{} '{}' is not a supported pooling", node.op_type, node.name);
  }
  COLLAGE_RETURN_IF_ERROR(RequireData(graph, node, Input(node, 0), "the input"));
  COLLAGE_RETURN_IF_ERROR(RequireSingleOutput(graph, node));  // MaxPool's Indices refused
  const Shape& x = TypeOf(graph, node.inputs[0]).shape;
  if (x.size() != 4) return Unsupported("{} '{}': only 2-D pooling", node.op_type, node.name);
  s.n = x[0];
  s.c = x[1];
  s.h = x[2];
  s.w = x[3];
  if (s.kind == PoolKind::kGlobalAverage) {
    s.oh = s.ow = 1;
    COLLAGE_RETURN_IF_ERROR(CheckOutputShape(graph, node, {s.n, s.c, 1, 1}));
    return s;
  }
  if (!node.attributes.Has("kernel_shape")) {
    return Unsupported("{} '{}': kernel_shape is missing", node.op_type, node.name);
  }
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, Ints(node, "kernel_shape", 2, 1, 1));
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> strides, Ints(node, "strides", 2, 1, 1));
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, Ints(node, "dilations", 2, 1, 1));
  COLLAGE_ASSIGN_OR_RETURN(std::vector<int64_t> pads, Ints(node, "pads", 4, 0, 0));
  if (kernel[0] * kernel[1] == 1) {
    // XNNPACK refuses 1x1 pooling windows.
    return Unsupported("{} '{}': 1x1 pooling", node.op_type, node.name);
  }
  if (s.kind == PoolKind::kAverage && (dilations[0] != 1 || dilations[1] != 1)) {
    return Unsupported("AveragePool '{}': dilations", node.name);
  }
  const std::string auto_pad = node.attributes.GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return Unsupported("{} '{}': auto_pad '{}'", node.op_type, node.name, auto_pad);
  }
  if (auto_pad != "NOTSET") pads.assign(4, 0);
  const int64_t in[2] = {s.h, s.w};
  int64_t out[2] = {0, 0};
  for (int d = 0; d < 2; ++d) {
    const int64_t extent = (kernel[d] - 1) * dilations[d] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[d] = CeilDiv(in[d], strides[d]);
      const int64_t total = std::max<int64_t>(0, (out[d] - 1) * strides[d] + extent - in[d]);
      pads[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[d + 2] = total - pads[d];
    } else {
      const int64_t span = in[d] + pads[d] + pads[d + 2] - extent;
      // XNNPACK rounds the output size down; ceil_mode is accepted only where the inferred
      // output (which honours it) comes out the same, checked below.
      out[d] = span < 0 ? 0 : span / strides[d] + 1;
    }
    // A window lying wholly in the padding has no ONNX-compatible value in XNNPACK.
    if (pads[d] >= extent || pads[d + 2] >= extent) {
      return Unsupported("{} '{}': padding as large as the window", node.op_type, node.name);
    }
  }
  if (out[0] <= 0 || out[1] <= 0)
    return Unsupported("{} '{}': empty output", node.op_type, node.name);
  const bool any_pad = pads[0] + pads[1] + pads[2] + pads[3] > 0;
  // XNNPACK's average pooling divides by the number of in-image elements (ONNX
  // count_include_pad = 0); count_include_pad = 1 matches only without padding.
  if (s.kind == PoolKind::kAverage && any_pad &&
      node.attributes.GetInt("count_include_pad", 0) != 0) {
    return Unsupported("AveragePool '{}': count_include_pad with padding", node.name);
  }
  s.kh = kernel[0];
  s.kw = kernel[1];
  s.sh = strides[0];
  s.sw = strides[1];
  s.dh = dilations[0];
  s.dw = dilations[1];
  s.pad_top = pads[0];
  s.pad_left = pads[1];
  s.pad_bottom = pads[2];
  s.pad_right = pads[3];
  s.oh = out[0];
  s.ow = out[1];
  const Shape expected = {s.n, s.c, s.oh, s.ow};
  if (TypeOf(graph, node.outputs[0]).shape != expected) {
    return Unsupported("{} '{}': ceil_mode changes the output size", node.op_type, node.name);
  }
  return s;
}

namespace {

class PoolKernel final : public OperatorKernel {
 public:
  PoolKernel(const PoolSpec& spec, pthreadpool_t pool) : OperatorKernel(pool), spec_(spec) {
    input_layouts_ = {Layout::ChannelsLast()};
    output_layouts_ = {Layout::ChannelsLast()};
  }

  Status Create(ClampRange clamp) {
    const PoolSpec& s = spec_;
    xnn_operator_t op = nullptr;
    Status status;
    switch (s.kind) {
      case PoolKind::kMax:
        status = Check(xnn_create_max_pooling2d_nhwc_f32(
                           U32(s.pad_top), U32(s.pad_right), U32(s.pad_bottom), U32(s.pad_left),
                           U32(s.kh), U32(s.kw), U32(s.sh), U32(s.sw), U32(s.dh), U32(s.dw),
                           Sz(s.c), Sz(s.c), Sz(s.c), clamp.min, clamp.max, kYieldWorkers, &op),
                       "xnn_create_max_pooling2d_nhwc_f32");
        break;
      case PoolKind::kAverage:
        status = Check(xnn_create_average_pooling2d_nhwc_f32(
                           U32(s.pad_top), U32(s.pad_right), U32(s.pad_bottom), U32(s.pad_left),
                           U32(s.kh), U32(s.kw), U32(s.sh), U32(s.sw), Sz(s.c), Sz(s.c), Sz(s.c),
                           clamp.min, clamp.max, kYieldWorkers, &op),
                       "xnn_create_average_pooling2d_nhwc_f32");
        break;
      case PoolKind::kGlobalAverage:
        status = Check(xnn_create_global_average_pooling_nwc_f32(
                           Sz(s.c), Sz(s.c), Sz(s.c), clamp.min, clamp.max, kYieldWorkers, &op),
                       "xnn_create_global_average_pooling_nwc_f32");
        break;
    }
    op_.reset(op);
    return status;
  }

 private:
  Status Setup(const KernelBuffers& buffers, pthreadpool_t pool) const override {
    const PoolSpec& s = spec_;
    const auto* in = static_cast<const float*>(buffers.inputs[0]);
    auto* out = static_cast<float*>(buffers.outputs[0]);
    switch (s.kind) {
      case PoolKind::kMax:
        return Check(
            xnn_setup_max_pooling2d_nhwc_f32(op_.get(), Sz(s.n), Sz(s.h), Sz(s.w), in, out, pool),
            "xnn_setup_max_pooling2d_nhwc_f32");
      case PoolKind::kAverage:
        return Check(xnn_setup_average_pooling2d_nhwc_f32(op_.get(), Sz(s.n), Sz(s.h), Sz(s.w), in,
                                                          out, pool),
                     "xnn_setup_average_pooling2d_nhwc_f32");
      case PoolKind::kGlobalAverage:
        return Check(xnn_setup_global_average_pooling_nwc_f32(op_.get(), Sz(s.n), Sz(s.h * s.w), in,
                                                              out, pool),
                     "xnn_setup_global_average_pooling_nwc_f32");
    }
    return Status();
  }

  PoolSpec spec_;
};

}  // namespace

KernelOr CompilePool(const OpGroup& group, pthreadpool_t pool) {
  COLLAGE_ASSIGN_OR_RETURN(PoolSpec spec, AnalyzePool(*group.graph, *group.main));
  auto kernel = std::make_unique<PoolKernel>(spec, pool);
  COLLAGE_RETURN_IF_ERROR(kernel->Create(group.clamp));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace collage::xnnpack
