// Quantized convolutions on XNNPACK's integer operators, for the forms ONNX Runtime's
// quantizer writes (backend/shared/quantized_conv.h): "qdq_conv", "qdq_conv_relu" and
// "qlinear_conv", 2-D, channels-last in and out like the float convolutions.
//  - int8 activations: xnn_create_convolution2d_nhwc_qc8, the weights' scales per output
//    channel (a per-tensor scale repeated), what quantize_static's QDQ format writes;
//  - uint8 activations with per-tensor weights: xnn_create_convolution2d_nhwc_qu8, the int8
//    weights shifted to uint8 with a zero point of 128 ((w + 128) - 128 = w, exact). uint8
//    activations with per-channel weights (the quantizer's operator format) have no XNNPACK
//    operator here and are not offered.
// XNNPACK sums the integers exactly in int32 on every CPU, adds the bias rounded to the sums'
// units (exact for the quantizer's int32 bias), scales the sums in float and rounds half to
// even; a fused Relu is the output's lower bound at the zero point.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/shared/quantized_conv.h"
#include "backend/shared/quantized_params.h"
#include "collage/sdk/errors.h"
#include "xnnpack_kernels.h"
#include "xnnpack_rules.h"

namespace collage::xnnpack {
namespace {

// A convolution XNNPACK's integer operators take: its reading and its geometry.
struct Int8Conv {
  QuantizedConv q;
  ConvSpec spec;
  bool int8_activations = false;  // qc8; else uint8 activations, qu8
};

StatusOr<Int8Conv> Analyze(const Match& match) {
  const std::optional<QuantizedConv> q = ReadQuantizedConv(match);
  if (!q.has_value()) {
    return Unsupported("quantized convolution '{}' is not in a supported form",
                       match.root_node().name);
  }
  const Graph& graph = *match.graph;
  const TensorType& x = graph.value(q->x).type;
  const TensorType& y = graph.value(q->y).type;
  if (!IsEightBit(x.dtype) || y.dtype != x.dtype) {
    return Unsupported("{} in, {} out", DTypeName(x.dtype), DTypeName(y.dtype));
  }
  Int8Conv c;
  c.int8_activations = x.dtype == DType::kInt8;
  if (!c.int8_activations && q->w_scale.size() != 1) {
    return Unsupported("uint8 activations with per-channel weight scales");
  }
  const Node& conv = graph.node(q->conv);
  COLLAGE_ASSIGN_OR_RETURN(c.spec, ConvGeometry(conv, x.shape, q->weights->shape()));
  if (std::vector<int64_t>{c.spec.n, c.spec.m, c.spec.oh, c.spec.ow} != y.shape) {
    return Unsupported("output shape {}", ShapeToString(y.shape));
  }
  for (float b : q->bias) {
    if (!(std::fabs(b) < 2147483520.0f)) return Unsupported("a bias beyond int32");
  }
  c.q = *q;
  return c;
}

// The output's bounds: the type's range, from the zero point up with a Relu.
template <typename T>
std::pair<T, T> OutputRange(const QuantizedConv& q) {
  const int32_t low = q.relu ? std::max<int32_t>(q.y_zero_point, std::numeric_limits<T>::min())
                             : std::numeric_limits<T>::min();
  return {static_cast<T>(low), std::numeric_limits<T>::max()};
}

class Int8ConvKernel final : public OperatorKernel {
 public:
  Int8ConvKernel(const Int8Conv& conv, const PoolHandle& pool)
      : OperatorKernel(pool), spec_(conv.spec), int8_activations_(conv.int8_activations) {
    input_layouts_ = {Layout::ChannelsLast()};
    output_layouts_ = {Layout::ChannelsLast()};
  }

  Status Create(const QuantizedConv& q) {
    const ConvSpec& s = spec_;
    const std::vector<int8_t> weights = PadForXnnpack(
        PackConvWeightsAs(q.weights->ToVector<int8_t>(), s));
    std::vector<int32_t> bias;
    for (float b : q.bias) bias.push_back(static_cast<int32_t>(std::lrint(b)));
    const int32_t* b = bias.empty() ? nullptr : bias.data();
    xnn_operator_t op = nullptr;
    Status status;
    if (int8_activations_) {
      std::vector<float> scales;
      for (int64_t oc = 0; oc < s.m; ++oc) scales.push_back(q.WeightScale(static_cast<size_t>(oc)));
      const auto [low, high] = OutputRange<int8_t>(q);
      status = Check(xnn_create_convolution2d_nhwc_qc8(
                         U32(s.pad_top), U32(s.pad_right), U32(s.pad_bottom), U32(s.pad_left),
                         U32(s.kh), U32(s.kw), U32(s.sh), U32(s.sw), U32(s.dh), U32(s.dw),
                         U32(s.groups), Sz(s.group_in()), Sz(s.group_out()), Sz(s.c), Sz(s.m),
                         static_cast<int8_t>(q.x_zero_point), q.x_scale, scales.data(),
                         weights.data(), b, static_cast<int8_t>(q.y_zero_point), q.y_scale, low,
                         high, kCreateFlags, &op),
                     "xnn_create_convolution2d_nhwc_qc8");
    } else {
      std::vector<uint8_t> shifted(weights.size());
      for (size_t i = 0; i < weights.size(); ++i) {
        shifted[i] = static_cast<uint8_t>(static_cast<int32_t>(weights[i]) + 128);
      }
      const auto [low, high] = OutputRange<uint8_t>(q);
      status = Check(xnn_create_convolution2d_nhwc_qu8(
                         U32(s.pad_top), U32(s.pad_right), U32(s.pad_bottom), U32(s.pad_left),
                         U32(s.kh), U32(s.kw), U32(s.sh), U32(s.sw), U32(s.dh), U32(s.dw),
                         U32(s.groups), Sz(s.group_in()), Sz(s.group_out()), Sz(s.c), Sz(s.m),
                         static_cast<uint8_t>(q.x_zero_point), q.x_scale, uint8_t{128},
                         q.w_scale[0], shifted.data(), b, static_cast<uint8_t>(q.y_zero_point),
                         q.y_scale, low, high, kCreateFlags, &op),
                     "xnn_create_convolution2d_nhwc_qu8");
    }
    op_.reset(op);
    return status;
  }

 private:
  Status Setup(const KernelBuffers& buffers, pthreadpool_t pool) const override {
    const ConvSpec& s = spec_;
    if (int8_activations_) {
      return Check(xnn_setup_convolution2d_nhwc_qc8(
                       op_.get(), Sz(s.n), Sz(s.h), Sz(s.wd),
                       static_cast<const int8_t*>(buffers.inputs[0]),
                       static_cast<int8_t*>(buffers.outputs[0]), pool),
                   "xnn_setup_convolution2d_nhwc_qc8");
    }
    return Check(xnn_setup_convolution2d_nhwc_qu8(
                     op_.get(), Sz(s.n), Sz(s.h), Sz(s.wd),
                     static_cast<const uint8_t*>(buffers.inputs[0]),
                     static_cast<uint8_t*>(buffers.outputs[0]), pool),
                 "xnn_setup_convolution2d_nhwc_qu8");
  }

  ConvSpec spec_;
  bool int8_activations_;
};

KernelOr CompileInt8Conv(const CompileRequest& request, const Match& match) {
  COLLAGE_ASSIGN_OR_RETURN(Int8Conv conv, Analyze(match));
  if (request.inputs.size() != 1 || request.inputs[0] != conv.q.x) {
    return InvalidArgument("rule '{}': the group's one input is not the convolution's",
                           request.rule);
  }
  COLLAGE_RETURN_IF_ERROR(EnsureInitialized());
  auto kernel = std::make_unique<Int8ConvKernel>(conv, ThreadPoolFor(request));
  COLLAGE_RETURN_IF_ERROR(kernel->Create(conv.q));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace

void AddInt8ConvRules(RuleSet& rules) {
  const std::vector<std::pair<std::string, Pattern>> forms = {
      {"qlinear_conv", Op("QLinearConv")},
      {"qdq_conv", QdqConvPattern(false)},
      {"qdq_conv_relu", QdqConvPattern(true)},
  };
  for (const auto& [name, pattern] : forms) {
    rules.Add(Rule(name, pattern)
                  .Where([](const Match& m) { return Analyze(m).ok(); })
                  .Compiles(CompileInt8Conv));
  }
}

}  // namespace collage::xnnpack
