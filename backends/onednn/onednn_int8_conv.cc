// Quantized convolutions on oneDNN's integer kernels (VNNI and AMX where the CPU has them,
// AVX2/AVX-512 multiply-adds elsewhere), for both forms ONNX Runtime's quantizer writes
// (backend/shared/quantized_conv.h): "qlinear_conv" (a QLinearConv), "qdq_conv" and
// "qdq_conv_relu" (QdqConvPattern). Each runs as one int8 convolution in channels-last layout
// (what oneDNN's integer convolutions read and write), the input's zero point removed and the
// output's added by oneDNN; activations uint8 or int8 — on a CPU without VNNI, uint8 with
// 7-bit weights only (IntegerProductExact).
#include <optional>

#include "backend/shared/quantized_conv.h"
#include "backend/shared/quantized_params.h"
#include "collage/sdk/op_params.h"
#include "onednn_layout.h"
#include "onednn_quantized.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

struct Int8ConvDescs {
  memory::desc src, weights, bias, dst;
  ConvGeometry geometry;
  dnnl::primitive_attr attr;

  dnnl::convolution_forward::primitive_desc PrimitiveDesc() const {
    dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, weights, bias,
        dst, geometry.strides, geometry.dilates, geometry.pads_l, geometry.pads_r);
    return dnnl::convolution_forward::primitive_desc(d, attr, Engine());
  }
};

StatusOr<Int8ConvDescs> Describe(const Graph& graph, const QuantizedConv& q) {
  const Node& conv = graph.node(q.conv);
  const TensorType& x = graph.value(q.x).type;
  const TensorType& y = graph.value(q.y).type;
  const Shape& w = q.weights->shape();
  COLLAGE_ASSIGN_OR_RETURN(const ConvParams p, ReadConvParams(conv, x.shape, w));
  if (x.shape.size() < 3 || x.shape.size() > 5 || p.output_shape() != y.shape) {
    return Unsupported("rank {} or output shape", x.shape.size());
  }
  const std::optional<memory::data_type> src_type = DataTypeOf(x.dtype);
  const std::optional<memory::data_type> dst_type = DataTypeOf(y.dtype);
  if (!IsEightBit(x.dtype) || !IsEightBit(y.dtype) || !src_type || !dst_type) {
    return Unsupported("{} in, {} out", DTypeName(x.dtype), DTypeName(y.dtype));
  }
  Int8ConvDescs d;
  COLLAGE_ASSIGN_OR_RETURN(d.geometry,
                           OnednnConvGeometry(p.strides, p.dilations, p.pads_begin, p.pads_end));
  memory::dims wdims = ToDims(w);
  if (p.group > 1) {
    wdims[0] /= p.group;
    wdims.insert(wdims.begin(), p.group);
  }
  const int ndims = static_cast<int>(x.shape.size());
  const memory::format_tag channels_last = ndims == 3   ? memory::format_tag::nwc
                                           : ndims == 4 ? memory::format_tag::nhwc
                                                        : memory::format_tag::ndhwc;
  d.src = memory::desc(ToDims(x.shape), *src_type, channels_last);
  d.dst = memory::desc(ToDims(y.shape), *dst_type, channels_last);
  d.weights = memory::desc(wdims, memory::data_type::s8, memory::format_tag::any);
  if (!q.bias.empty()) d.bias = PlainDesc({p.out_channels});
  d.attr = BaseAttr();
  std::vector<float> scales;
  for (size_t oc = 0; oc < static_cast<size_t>(q.w_scale.size()); ++oc) {
    scales.push_back(q.x_scale * q.WeightScale(oc) / q.y_scale);
  }
  d.attr.set_output_scales(scales.size() == 1 ? 0 : 1 << 1, scales);
  SetZeroPoints(d.attr, q.x_zero_point, q.y_zero_point);
  if (q.relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    d.attr.set_post_ops(ops);
  }
  return d;
}

StatusOr<std::unique_ptr<Kernel>> CompileInt8Conv(const CompileRequest& request,
                                                  const Match& match) {
  const Graph& graph = *request.graph;
  const std::optional<QuantizedConv> q = ReadQuantizedConv(match);
  if (!q.has_value())
    return Unsupported("quantized convolution '{}' is not supported", match.root_node().name);
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("int8 convolution", [&]() -> Status {
    COLLAGE_ASSIGN_OR_RETURN(Int8ConvDescs d, Describe(graph, *q));
    const auto pd = d.PrimitiveDesc();
    KernelBuilder builder(request);
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(q->x, DNNL_ARG_SRC, d.src));
    COLLAGE_ASSIGN_OR_RETURN(memory packed, ConstantMemory(*q->weights, pd.weights_desc()));
    builder.BindConstant(DNNL_ARG_WEIGHTS, std::move(packed));
    if (!q->bias.empty()) {
      COLLAGE_ASSIGN_OR_RETURN(
          memory bias,
          ConstantMemory(Tensor::FromVector<float>({static_cast<int64_t>(q->bias.size())}, q->bias),
                         d.bias));
      builder.BindConstant(DNNL_ARG_BIAS, std::move(bias));
    }
    BindZeroPoints(builder, q->x_zero_point, q->y_zero_point);
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(q->y, DNNL_ARG_DST, d.dst));
    COLLAGE_ASSIGN_OR_RETURN(kernel,
                             builder.Finish(std::string("int8 convolution ") + pd.impl_info_str(),
                                            dnnl::convolution_forward(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

// oneDNN runs it exactly, with an optimized (not reference) implementation.
bool Int8ConvOk(const Match& m) {
  const std::optional<QuantizedConv> q = ReadQuantizedConv(m);
  if (!q.has_value() || !IntegerProductExact(m.graph->value(q->x).type.dtype, *q->weights)) {
    return false;
  }
  return HasOptimizedImplementation([&]() -> std::string {
    StatusOr<Int8ConvDescs> d = Describe(*m.graph, *q);
    if (!d.ok()) return "ref:unsupported";
    return d->PrimitiveDesc().impl_info_str();
  });
}

}  // namespace

void AddInt8ConvRules(std::vector<RuleEntry>& rules) {
  const std::vector<std::pair<std::string, Pattern>> forms = {
      {"qlinear_conv", Op("QLinearConv")},
      {"qdq_conv", QdqConvPattern(false)},
      {"qdq_conv_relu", QdqConvPattern(true)},
  };
  for (const auto& [name, pattern] : forms) {
    rules.push_back({Rule(name, pattern).Where(Int8ConvOk).Compiles(CompileInt8Conv), false});
  }
}

}  // namespace collage::onednn
