// Conv → convolution2d_nhwc_f32, ConvTranspose → deconvolution2d_nhwc_f32, channels-last in
// and out, with a fused Relu/Clip as the operator's output range. AnalyzeConv decides what
// they can run (ONNX geometry → XNNPACK padding/adjustment), for the rules and both backends.
#include <algorithm>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_params.h"
#include "xnnpack_checks.h"
#include "xnnpack_kernels.h"

namespace collage::xnnpack {

// ---- Conv / ConvTranspose ---------------------------------------------------------------

namespace {

// The ONNX geometry, read once for every library, in XNNPACK's form. Conv's and
// ConvTranspose's params name these fields alike.
template <typename Params>
void TakeGeometry(const Params& p, ConvSpec& s) {
  s.n = p.batch;
  s.c = p.in_channels;
  s.m = p.out_channels;
  s.groups = p.group;
  s.h = p.in_spatial[0];
  s.wd = p.in_spatial[1];
  TakeWindow2d(p, s);
}

// What every XNNPACK convolution's geometry must be: a non-empty output, sizes XNNPACK's
// 32-bit fields hold.
Status CheckGeometry(const Node& node, const ConvSpec& s) {
  if (s.oh <= 0 || s.ow <= 0) {
    return Unsupported("{} '{}': empty output", node.op_type, node.name);
  }
  for (int64_t v : {s.c, s.m, s.kh, s.kw, s.sh, s.sw, s.dh, s.dw, s.pad_top, s.pad_left,
                    s.pad_bottom, s.pad_right}) {
    if (v > kMaxGeometry)
      return Unsupported("{} '{}': geometry too large", node.op_type, node.name);
  }
  return Status::Ok();
}

Status RequireTwoDimensional(const Node& node, const Shape& x, const Shape& w) {
  if (x.size() != 4 || w.size() != 4) {
    return Unsupported("{} '{}': only 2-D convolutions (4-D input) are supported", node.op_type,
                       node.name);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ConvSpec> ConvGeometry(const Node& node, const Shape& x, const Shape& w) {
  COLLAGE_RETURN_IF_ERROR(RequireTwoDimensional(node, x, w));
  ConvSpec s;
  COLLAGE_ASSIGN_OR_RETURN(const ConvParams p, ReadConvParams(node, x, w));
  TakeGeometry(p, s);
  COLLAGE_RETURN_IF_ERROR(CheckGeometry(node, s));
  return s;
}

StatusOr<ConvSpec> AnalyzeConv(const Graph& graph, const Node& node) {
  ConvSpec s;
  s.transpose = node.op_type == "ConvTranspose";
  if (node.op_type != "Conv" && !s.transpose) {
    return Unsupported("{} '{}' is not a convolution", node.op_type, node.name);
  }
  s.x = Input(node, 0);
  s.w = Input(node, 1);
  s.b = Input(node, 2);
  COLLAGE_RETURN_IF_ERROR(RequireData(graph, node, s.x, "the input"));
  COLLAGE_RETURN_IF_ERROR(RequireConst(graph, node, s.w, "the weight"));
  if (s.b != kNoValue) COLLAGE_RETURN_IF_ERROR(RequireConst(graph, node, s.b, "the bias"));
  if (node.inputs.size() > 3)
    return Unsupported("{} '{}': too many inputs", node.op_type, node.name);
  COLLAGE_RETURN_IF_ERROR(RequireSingleOutput(graph, node));
  COLLAGE_RETURN_IF_ERROR(
      RequireTwoDimensional(node, TypeOf(graph, s.x).shape, TypeOf(graph, s.w).shape));
  if (s.transpose) {
    COLLAGE_ASSIGN_OR_RETURN(const ConvTransposeParams p, ReadConvTransposeParams(graph, node));
    for (size_t d = 0; d < 2; ++d) {
      // XNNPACK's adjustment (ONNX output_padding) must be smaller than the stride.
      if (p.output_padding[d] >= p.strides[d]) {
        return Unsupported("ConvTranspose '{}': output_padding {} must be below stride {}",
                           node.name, p.output_padding[d], p.strides[d]);
      }
      // Negative padding (an output larger than the scatter) has no XNNPACK form.
      if (p.pads_begin[d] < 0 || p.pads_end[d] < 0) {
        return Unsupported("ConvTranspose '{}': negative padding", node.name);
      }
    }
    TakeGeometry(p, s);
    s.adj_h = p.output_padding[0];
    s.adj_w = p.output_padding[1];
  } else {
    COLLAGE_ASSIGN_OR_RETURN(const ConvParams p, ReadConvParams(graph, node));
    TakeGeometry(p, s);
  }
  if (s.b != kNoValue && TypeOf(graph, s.b).shape != Shape{s.m}) {
    return Unsupported("{} '{}': bias shape is not [{}]", node.op_type, node.name, s.m);
  }
  COLLAGE_RETURN_IF_ERROR(CheckGeometry(node, s));
  COLLAGE_RETURN_IF_ERROR(CheckOutputShape(graph, node, {s.n, s.m, s.oh, s.ow}));
  return s;
}

std::vector<float> PackConvWeights(const Graph& graph, const ConvSpec& s) {
  return PackConvWeightsAs(ConstantFloats(graph, s.w), s);
}

std::vector<float> ConvBias(const Graph& graph, const ConvSpec& s) {
  return s.b == kNoValue ? std::vector<float>() : ConstantFloats(graph, s.b);
}

namespace {

class ConvKernel final : public OperatorKernel {
 public:
  ConvKernel(const ConvSpec& spec, const PoolHandle& pool) : OperatorKernel(pool), spec_(spec) {
    input_layouts_ = {Layout::ChannelsLast()};
    output_layouts_ = {Layout::ChannelsLast()};
  }

  Status Create(const std::vector<float>& weights, const std::vector<float>& bias,
                ClampRange clamp) {
    const ConvSpec& s = spec_;
    const float* b = bias.empty() ? nullptr : bias.data();
    xnn_operator_t op = nullptr;
    Status status;
    if (s.transpose) {
      status = Check(xnn_create_deconvolution2d_nhwc_f32(
                         U32(s.pad_top), U32(s.pad_right), U32(s.pad_bottom), U32(s.pad_left),
                         U32(s.kh), U32(s.kw), U32(s.sh), U32(s.sw), U32(s.dh), U32(s.dw),
                         U32(s.groups), Sz(s.group_in()), Sz(s.group_out()), Sz(s.c), Sz(s.m),
                         weights.data(), b, clamp.min, clamp.max, kCreateFlags, &op),
                     "xnn_create_deconvolution2d_nhwc_f32");
    } else {
      // Depthwise (group_in = 1) needs no flag: XNNPACK detects it and repacks the
      // [G][OCg][KH][KW][1] weights for its depthwise kernels itself.
      status = Check(xnn_create_convolution2d_nhwc_f32(
                         U32(s.pad_top), U32(s.pad_right), U32(s.pad_bottom), U32(s.pad_left),
                         U32(s.kh), U32(s.kw), U32(s.sh), U32(s.sw), U32(s.dh), U32(s.dw),
                         U32(s.groups), Sz(s.group_in()), Sz(s.group_out()), Sz(s.c), Sz(s.m),
                         weights.data(), b, clamp.min, clamp.max, kCreateFlags, &op),
                     "xnn_create_convolution2d_nhwc_f32");
    }
    op_.reset(op);
    return status;
  }

 private:
  Status Setup(const KernelBuffers& buffers, pthreadpool_t pool) const override {
    const ConvSpec& s = spec_;
    const auto* in = static_cast<const float*>(buffers.inputs[0]);
    auto* out = static_cast<float*>(buffers.outputs[0]);
    if (s.transpose) {
      return Check(xnn_setup_deconvolution2d_nhwc_f32(op_.get(), Sz(s.n), Sz(s.h), Sz(s.wd),
                                                      U32(s.adj_h), U32(s.adj_w), in, out, pool),
                   "xnn_setup_deconvolution2d_nhwc_f32");
    }
    return Check(
        xnn_setup_convolution2d_nhwc_f32(op_.get(), Sz(s.n), Sz(s.h), Sz(s.wd), in, out, pool),
        "xnn_setup_convolution2d_nhwc_f32");
  }

  ConvSpec spec_;
};

}  // namespace

KernelOr CompileConv(const OpGroup& group, const PoolHandle& pool) {
  COLLAGE_ASSIGN_OR_RETURN(ConvSpec spec, AnalyzeConv(*group.graph, *group.main));
  auto kernel = std::make_unique<ConvKernel>(spec, pool);
  // XNNPACK packs the weights into its own buffer at creation: these copies can go.
  COLLAGE_RETURN_IF_ERROR(kernel->Create(PadForXnnpack(PackConvWeights(*group.graph, spec)),
                                         ConvBias(*group.graph, spec), group.clamp));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace collage::xnnpack
