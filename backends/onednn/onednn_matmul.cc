// MatMul (2-D and batched, batch dims broadcast) and Gemm (transA/transB/alpha/beta, C
// broadcast) as oneDNN matmul, with fused bias adds and activations as post-ops. Constant
// right-hand sides are packed into the format the primitive picks. In float32, and in bf16
// where the CPU computes it: both operands converted (a constant once, at compile), the sums,
// bias and output in float32.
#include "collage/sdk/op_params.h"
#include "onednn_epilogue.h"
#include "onednn_layout.h"
#include "onednn_rules.h"

namespace collage::onednn {
namespace {

using dnnl::memory;

bool MatMulOk(const Graph& graph, const Node& node) {
  if (node.inputs.size() != 2 || node.outputs.size() != 1) return false;
  if (!IsFloatValue(graph, node.inputs[0]) || !IsFloatValue(graph, node.inputs[1])) return false;
  const Shape& a = graph.value(node.inputs[0]).type.shape;
  const Shape& b = graph.value(node.inputs[1]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  // 1-D operands change the output rank (ONNX promotes and removes a dim): not handled.
  return a.size() >= 2 && b.size() >= 2 && y.size() == std::max(a.size(), b.size()) && y.size() <= 6;
}

bool GemmOk(const Graph& graph, const Node& node) {
  if (node.inputs.size() < 2 || node.outputs.size() != 1) return false;
  if (!IsFloatValue(graph, node.inputs[0]) || !IsFloatValue(graph, node.inputs[1])) return false;
  const StatusOr<GemmParams> p = ReadGemmParams(graph, node);
  if (!p.ok()) return false;
  if (p->has_c) {
    const Value& c = graph.value(node.inputs[2]);
    if (c.type.dtype != DType::kFloat32) return false;
    // A non-constant C can only be added as it is (oneDNN's output scale also scales the bias).
    if (!c.is_constant() && (p->beta != 1.0f || p->alpha != 1.0f)) return false;
  }
  // alpha scales the bias too: the bias is folded as beta / alpha * C, so alpha must not be 0.
  return p->alpha != 0.0f;
}

// The transposed view of a row-major 2-D operand as a strided descriptor.
memory::desc Operand2D(const Shape& shape, bool transposed) {
  if (!transposed) return PlainDesc(shape);
  return memory::desc({shape[1], shape[0]}, memory::data_type::f32, memory::dims{1, shape[1]});
}

// A MatMul of an [..., M, K] activation by a constant [K, N] weight is one [prod(...) * M, K]
// x [K, N] product on the same bytes. oneDNN picks a packed weight format and its fast
// 2-D kernels for that form; the batched 3-D form kept the weights plain and ran at half the
// speed (BERT's linear layers). Only when every post-op operand still broadcasts the same way
// on the flattened output: the output's own shape, or a row (one value per column).
bool FlattensTo2D(const Match& match, const Node& node) {
  const Graph& graph = *match.graph;
  const Value& a = graph.value(node.inputs[0]);
  const Value& b = graph.value(node.inputs[1]);
  if (node.op_type != "MatMul" || !b.is_constant() || b.type.shape.size() != 2 ||
      a.type.shape.size() < 3) {
    return false;
  }
  std::vector<NodeId> nodes = ChainOrder(match);
  ValueId chain = node.outputs[0];
  for (size_t i = 1; i < nodes.size(); ++i) {
    const Node& next = graph.node(nodes[i]);
    for (ValueId in : next.inputs) {
      if (in == chain || in == kNoValue) continue;
      if (next.op_type == "Clip") continue;  // scalar bounds
      const Shape& shape = graph.value(in).type.shape;
      const bool row = shape.size() <= 2 && (shape.size() < 2 || shape[0] == 1);
      if (shape != graph.value(chain).type.shape && !row) return false;
    }
    chain = next.outputs[0];
  }
  return true;
}

// A product's operands as oneDNN's matmul takes them: src and weights_plain are the forms
// its inputs arrive in (a transposed Gemm operand as a strided view, a MatMul by a constant
// 2-D weight flattened to 2-D), computed_src and weights what the primitive reads (in bf16,
// or a packed constant weight, in formats it picks), bias and alpha from a Gemm's C.
struct MatmulDescs {
  memory::desc src, weights_plain, computed_src, weights, bias_desc, dst;
  dnnl::primitive_attr attr = BaseAttr();  // alpha as an output scale
  Tensor bias;                             // beta / alpha * C, folded once when C is constant
};

StatusOr<MatmulDescs> DescribeMatmul(const Graph& graph, const Match& match, Precision precision) {
  const Node& node = MainNode(match);
  const bool gemm = node.op_type == "Gemm";
  const Value& a = graph.value(node.inputs[0]);
  const Value& b = graph.value(node.inputs[1]);
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  MatmulDescs d;
  GemmParams params;
  if (gemm) {
    COLLAGE_ASSIGN_OR_RETURN(params, ReadGemmParams(graph, node));
    d.src = Operand2D(a.type.shape, params.trans_a);
    d.weights_plain = Operand2D(b.type.shape, params.trans_b);
  } else if (FlattensTo2D(match, node)) {
    const int64_t rows = a.type.num_elements() / a.type.shape.back();
    d.src = PlainDesc({rows, a.type.shape.back()});
    d.weights_plain = PlainDesc(b.type.shape);
  } else {
    d.src = PlainDesc(PadShape(a.type.shape, y.size()));
    d.weights_plain = PlainDesc(PadShape(b.type.shape, y.size()));
  }
  d.dst = d.src.dims().size() == 2 && !gemm && y.size() > 2 ? PlainDesc({d.src.dims()[0], y.back()})
                                                            : PlainDesc(y);
  const bool bf16 = precision == Precision::kBfloat16;
  const memory::data_type computed = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  // The primitive picks the packed format of a constant right-hand side, and in bf16 the
  // format of every operand (they are converted anyway).
  d.weights = b.is_constant() || bf16
                  ? memory::desc(d.weights_plain.dims(), computed, memory::format_tag::any)
                  : d.weights_plain;
  d.computed_src = bf16 ? memory::desc(d.src.dims(), computed, memory::format_tag::any) : d.src;
  if (gemm) {
    const float alpha = params.alpha;
    const float beta = params.beta;
    if (alpha != 1.0f) d.attr.set_output_scales(0, {alpha});
    if (params.has_c) {
      const Value& c = graph.value(node.inputs[2]);
      d.bias_desc = PlainDesc(PadShape(c.type.shape, 2));
      if (c.is_constant()) {
        // beta / alpha * C, folded once: the matmul bias (broadcast over rows or columns),
        // which oneDNN scales by alpha with the product.
        d.bias = Tensor(DType::kFloat32, PadShape(c.type.shape, 2));
        const float* in = c.constant->data_as<float>();
        const float factor = beta / alpha;
        for (int64_t i = 0; i < d.bias.num_elements(); ++i)
          d.bias.data_as<float>()[i] = factor * in[i];
      }
    }
  }
  return d;
}

StatusOr<std::unique_ptr<Kernel>> CompileMatmul(const CompileRequest& request, const Match& match) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
  const bool gemm = node.op_type == "Gemm";
  if (gemm ? !GemmOk(graph, node) : (node.op_type != "MatMul" || !MatMulOk(graph, node))) {
    return Unsupported("{} '{}' is not supported", node.op_type, node.name);
  }
  const Value& b = graph.value(node.inputs[1]);
  const bool bf16 = request.precision == Precision::kBfloat16;
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("matmul", [&]() -> Status {
    COLLAGE_ASSIGN_OR_RETURN(MatmulDescs d, DescribeMatmul(graph, match, request.precision));
    KernelBuilder builder(request);
    dnnl::matmul::desc desc(d.computed_src, d.weights, d.bias_desc, d.dst);
    COLLAGE_ASSIGN_OR_RETURN(Epilogue epilogue, BuildEpilogue(request, match, d.dst, builder));
    d.attr.set_post_ops(epilogue.ops);
    dnnl::matmul::primitive_desc pd(desc, d.attr, Engine());
    if (bf16) {
      if (IsReferenceImplementation(pd.impl_info_str())) {
        return Unsupported("oneDNN runs this matmul in bf16 only by its reference implementation");
      }
      COLLAGE_RETURN_IF_ERROR(builder.BindValueConverted(node.inputs[0], DNNL_ARG_SRC, d.src,
                                                         Layout::Plain(), pd.src_desc()));
      COLLAGE_RETURN_IF_ERROR(builder.BindValueConverted(
          node.inputs[1], DNNL_ARG_WEIGHTS, d.weights_plain, Layout::Plain(), pd.weights_desc()));
    } else {
      COLLAGE_RETURN_IF_ERROR(
          builder.BindValue(node.inputs[0], DNNL_ARG_SRC, d.src, Layout::Plain()));
      if (b.is_constant()) {
        COLLAGE_ASSIGN_OR_RETURN(dnnl::memory packed,
                                 ConstantMemory(*b.constant, pd.weights_desc(), &d.weights_plain));
        builder.BindConstant(DNNL_ARG_WEIGHTS, std::move(packed));
      } else {
        COLLAGE_RETURN_IF_ERROR(
            builder.BindValue(node.inputs[1], DNNL_ARG_WEIGHTS, d.weights_plain, Layout::Plain()));
      }
    }
    if (!d.bias.empty()) {
      COLLAGE_ASSIGN_OR_RETURN(dnnl::memory m, ConstantMemory(d.bias, d.bias_desc));
      builder.BindConstant(DNNL_ARG_BIAS, std::move(m));
    } else if (!d.bias_desc.is_zero()) {
      COLLAGE_RETURN_IF_ERROR(
          builder.BindValue(node.inputs[2], DNNL_ARG_BIAS, d.bias_desc, Layout::Plain()));
    }
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(epilogue.output, DNNL_ARG_DST, d.dst));
    COLLAGE_ASSIGN_OR_RETURN(
        kernel, builder.Finish(std::string(bf16 ? "bf16 matmul " : "matmul ") + pd.impl_info_str(),
                               dnnl::matmul(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
}

// The bf16 offers: declined where oneDNN 2.6 has only its reference implementation for the
// product in bf16 (short reductions, a Gemm's C broadcast down a column). Asked of the product
// as the compile describes it, without its activation post-ops.
bool OptimizedInBfloat16(const Match& match) {
  return HasOptimizedImplementation([&] {
    StatusOr<MatmulDescs> d = DescribeMatmul(*match.graph, match, Precision::kBfloat16);
    if (!d.ok()) return std::string("ref: not described");
    const dnnl::matmul::desc desc(d->computed_src, d->weights, d->bias_desc, d->dst);
    return std::string(dnnl::matmul::primitive_desc(desc, d->attr, Engine()).impl_info_str());
  });
}

// Add of a constant that broadcasts into the product: the bias of a Linear layer.
Pattern WithBias(const Pattern& inner) {
  return Alt({Op("Add")(inner, Const()), Op("Add")(Const(), inner)});
}

}  // namespace

void AddMatmulRules(std::vector<RuleEntry>& rules) {
  const Pattern matmul = Op("MatMul")(Any(), Any()).If(MatMulOk);
  const Pattern gemm = Op("Gemm")(Any(), Any(), Optional(Any())).If(GemmOk);
  const std::vector<std::pair<std::string, Pattern>> shapes = {
      {"matmul", matmul},
      {"matmul_act", WithActivation(matmul)},
      {"matmul_bias", WithBias(matmul)},
      {"matmul_bias_act", WithActivation(WithBias(matmul))},
      {"gemm", gemm},
      {"gemm_act", WithActivation(gemm)},
  };
  // bf16 where the CPU computes it natively, beside float32: the search measures both.
  const std::vector<Precision> precisions =
      ComputesBfloat16() ? std::vector<Precision>{Precision::kFloat32, Precision::kBfloat16}
                         : std::vector<Precision>{Precision::kFloat32};
  for (const auto& entry : shapes) {
    rules.push_back({Rule(entry.first, entry.second)
                         .Where(MatchEpilogueOk)
                         .Precisions(precisions)
                         .WhereIn(Precision::kBfloat16, OptimizedInBfloat16)
                         .Compiles(CompileMatmul),
                     false});
  }
}

}  // namespace collage::onednn
