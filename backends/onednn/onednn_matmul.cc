// MatMul (2-D and batched, batch dims broadcast) and Gemm (transA/transB/alpha/beta, C
// broadcast) as oneDNN matmul, with fused bias adds and activations as post-ops. Constant
// right-hand sides are packed into the format the primitive picks.
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

StatusOr<std::unique_ptr<Kernel>> CompileMatmul(const CompileRequest& request, const Match& match) {
  const Graph& graph = *request.graph;
  const Node& node = MainNode(match);
  const bool gemm = node.op_type == "Gemm";
  if (gemm ? !GemmOk(graph, node) : (node.op_type != "MatMul" || !MatMulOk(graph, node))) {
    return Unsupported("{} '{}' is not supported", node.op_type, node.name);
  }
  const Value& a = graph.value(node.inputs[0]);
  const Value& b = graph.value(node.inputs[1]);
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  std::unique_ptr<Kernel> kernel;
  COLLAGE_RETURN_IF_ERROR(Guard("matmul", [&]() -> Status {
    memory::desc src, weights_plain;
    GemmParams params;
    if (gemm) {
      COLLAGE_ASSIGN_OR_RETURN(params, ReadGemmParams(graph, node));
      src = Operand2D(a.type.shape, params.trans_a);
      weights_plain = Operand2D(b.type.shape, params.trans_b);
    } else if (FlattensTo2D(match, node)) {
      const int64_t rows = a.type.num_elements() / a.type.shape.back();
      src = PlainDesc({rows, a.type.shape.back()});
      weights_plain = PlainDesc(b.type.shape);
    } else {
      src = PlainDesc(PadShape(a.type.shape, y.size()));
      weights_plain = PlainDesc(PadShape(b.type.shape, y.size()));
    }
    const memory::desc dst = src.dims().size() == 2 && !gemm && y.size() > 2
                                 ? PlainDesc({src.dims()[0], y.back()})
                                 : PlainDesc(y);
    const memory::desc weights = b.is_constant()
                                     ? memory::desc(weights_plain.dims(), memory::data_type::f32,
                                                    memory::format_tag::any)
                                     : weights_plain;
    KernelBuilder builder(request);
    dnnl::primitive_attr attr = BaseAttr();
    dnnl::post_ops ops;
    memory::desc bias_desc;
    Tensor bias;
    if (gemm) {
      const float alpha = params.alpha;
      const float beta = params.beta;
      if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
      if (params.has_c) {
        const Value& c = graph.value(node.inputs[2]);
        bias_desc = PlainDesc(PadShape(c.type.shape, 2));
        if (c.is_constant()) {
          // beta / alpha * C, folded once: the matmul bias (broadcast over rows or columns),
          // which oneDNN scales by alpha with the product.
          bias = Tensor(DType::kFloat32, PadShape(c.type.shape, 2));
          const float* in = c.constant->data_as<float>();
          const float factor = beta / alpha;
          for (int64_t i = 0; i < bias.num_elements(); ++i) bias.data_as<float>()[i] = factor * in[i];
        }
      }
    }
    dnnl::matmul::desc desc(src, weights, bias_desc, dst);
    COLLAGE_ASSIGN_OR_RETURN(Epilogue epilogue, BuildEpilogue(request, match, dst, builder));
    attr.set_post_ops(epilogue.ops);
    dnnl::matmul::primitive_desc pd(desc, attr, Engine());
    COLLAGE_RETURN_IF_ERROR(builder.BindValue(node.inputs[0], DNNL_ARG_SRC, src, Layout::Plain()));
    if (b.is_constant()) {
      COLLAGE_ASSIGN_OR_RETURN(dnnl::memory packed,
                               ConstantMemory(*b.constant, pd.weights_desc(), &weights_plain));
      builder.BindConstant(DNNL_ARG_WEIGHTS, std::move(packed));
    } else {
      COLLAGE_RETURN_IF_ERROR(
          builder.BindValue(node.inputs[1], DNNL_ARG_WEIGHTS, weights_plain, Layout::Plain()));
    }
    if (!bias.empty()) {
      COLLAGE_ASSIGN_OR_RETURN(dnnl::memory m, ConstantMemory(bias, bias_desc));
      builder.BindConstant(DNNL_ARG_BIAS, std::move(m));
    } else if (!bias_desc.is_zero()) {
      COLLAGE_RETURN_IF_ERROR(
          builder.BindValue(node.inputs[2], DNNL_ARG_BIAS, bias_desc, Layout::Plain()));
    }
    COLLAGE_RETURN_IF_ERROR(builder.BindOutput(epilogue.output, DNNL_ARG_DST, dst));
    COLLAGE_ASSIGN_OR_RETURN(kernel, builder.Finish(std::string("matmul ") + pd.impl_info_str(),
                                                    dnnl::matmul(pd), pd.scratchpad_desc()));
    return Status();
  }));
  return kernel;
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
  for (const auto& entry : shapes) {
    rules.push_back(
        {Rule(entry.first, entry.second).Where(MatchEpilogueOk).Compiles(CompileMatmul), false});
  }
}

}  // namespace collage::onednn
