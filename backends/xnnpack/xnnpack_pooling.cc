// MaxPool / AveragePool → *_pooling2d_nhwc_f32, GlobalAveragePool →
// global_average_pooling_nwc_f32 (an NHWC image is N rows of H·W pixels of C channels).
// Channels-last in and out. The ONNX corner cases XNNPACK computes differently
// (count_include_pad with padding, ceil_mode adding windows) are refused by AnalyzePool.
#include <algorithm>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_params.h"
#include "xnnpack_checks.h"
#include "xnnpack_kernels.h"

namespace collage::xnnpack {

// ---- Pooling ----------------------------------------------------------------------------

StatusOr<PoolSpec> AnalyzePool(const Graph& graph, const Node& node) {
  COLLAGE_RETURN_IF_ERROR(RequireData(graph, node, Input(node, 0), "the input"));
  COLLAGE_RETURN_IF_ERROR(RequireSingleOutput(graph, node));  // MaxPool's Indices refused
  const Shape& x = TypeOf(graph, node.inputs[0]).shape;
  if (x.size() != 4) return Unsupported("{} '{}': only 2-D pooling", node.op_type, node.name);
  // The ONNX geometry, read once for every library; what follows is XNNPACK's form of it.
  COLLAGE_ASSIGN_OR_RETURN(const PoolParams p, ReadPoolParams(graph, node));
  PoolSpec s;
  s.n = p.batch;
  s.c = p.channels;
  s.h = p.in_spatial[0];
  s.w = p.in_spatial[1];
  switch (p.kind) {
    case collage::PoolKind::kMax: s.kind = PoolKind::kMax; break;
    case collage::PoolKind::kAverage: s.kind = PoolKind::kAverage; break;
    case collage::PoolKind::kGlobalAverage:
      s.kind = PoolKind::kGlobalAverage;
      s.oh = s.ow = 1;
      COLLAGE_RETURN_IF_ERROR(CheckOutputShape(graph, node, p.output_shape()));
      return s;
    case collage::PoolKind::kGlobalMax:
      return Unsupported("GlobalMaxPool '{}' is not supported", node.name);
  }
  if (p.kernel[0] * p.kernel[1] == 1) {  // XNNPACK refuses 1x1 pooling windows
    return Unsupported("{} '{}': 1x1 pooling", node.op_type, node.name);
  }
  if (s.kind == PoolKind::kAverage && (p.dilations[0] != 1 || p.dilations[1] != 1)) {
    return Unsupported("AveragePool '{}': dilations", node.name);
  }
  for (size_t d = 0; d < 2; ++d) {
    // A window lying wholly in the padding has no ONNX-compatible value in XNNPACK.
    if (p.pads_begin[d] >= p.dilated_kernel(d) || p.pads_end[d] >= p.dilated_kernel(d)) {
      return Unsupported("{} '{}': padding as large as the window", node.op_type, node.name);
    }
    // XNNPACK rounds the output size down: ceil_mode only where it adds no window.
    if (p.reached_pad_end(d) > p.pads_end[d]) {
      return Unsupported("{} '{}': ceil_mode changes the output size", node.op_type, node.name);
    }
  }
  const bool any_pad = p.pads_begin[0] + p.pads_begin[1] + p.pads_end[0] + p.pads_end[1] > 0;
  // XNNPACK's average pooling divides by the number of in-image elements (ONNX
  // count_include_pad = 0); count_include_pad = 1 matches only without padding.
  if (s.kind == PoolKind::kAverage && any_pad && p.count_include_pad) {
    return Unsupported("AveragePool '{}': count_include_pad with padding", node.name);
  }
  TakeWindow2d(p, s);
  for (int64_t v : {s.kh, s.kw, s.sh, s.sw, s.dh, s.dw, s.pad_top, s.pad_left, s.pad_bottom,
                    s.pad_right}) {
    if (v > kMaxGeometry) {
      return Unsupported("{} '{}': geometry too large", node.op_type, node.name);
    }
  }
  COLLAGE_RETURN_IF_ERROR(CheckOutputShape(graph, node, p.output_shape()));
  return s;
}

namespace {

class PoolKernel final : public OperatorKernel {
 public:
  PoolKernel(const PoolSpec& spec, const PoolHandle& pool) : OperatorKernel(pool), spec_(spec) {
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
                           Sz(s.c), Sz(s.c), Sz(s.c), clamp.min, clamp.max, kCreateFlags, &op),
                       "xnn_create_max_pooling2d_nhwc_f32");
        break;
      case PoolKind::kAverage:
        status = Check(xnn_create_average_pooling2d_nhwc_f32(
                           U32(s.pad_top), U32(s.pad_right), U32(s.pad_bottom), U32(s.pad_left),
                           U32(s.kh), U32(s.kw), U32(s.sh), U32(s.sw), Sz(s.c), Sz(s.c), Sz(s.c),
                           clamp.min, clamp.max, kCreateFlags, &op),
                       "xnn_create_average_pooling2d_nhwc_f32");
        break;
      case PoolKind::kGlobalAverage:
        status = Check(xnn_create_global_average_pooling_nwc_f32(
                           Sz(s.c), Sz(s.c), Sz(s.c), clamp.min, clamp.max, kCreateFlags, &op),
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

KernelOr CompilePool(const OpGroup& group, const PoolHandle& pool) {
  COLLAGE_ASSIGN_OR_RETURN(PoolSpec spec, AnalyzePool(*group.graph, *group.main));
  auto kernel = std::make_unique<PoolKernel>(spec, pool);
  COLLAGE_RETURN_IF_ERROR(kernel->Create(group.clamp));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace collage::xnnpack
