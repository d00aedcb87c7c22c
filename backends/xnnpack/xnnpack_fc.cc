// Gemm and MatMul with a constant B → fully_connected_nc_f32 on plain row-major data: the
// input's leading dims are the batch. B is given in its stored order ([K][N] with
// XNN_FLAG_TRANSPOSE_WEIGHTS, [N][K] without), so no transposition happens here. AnalyzeFc
// and AnalyzeBiasAdd decide what it can run.
#include <cmath>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_params.h"
#include "xnnpack_checks.h"
#include "xnnpack_kernels.h"

namespace collage::xnnpack {

// ---- Fully connected --------------------------------------------------------------------

StatusOr<FcSpec> AnalyzeFc(const Graph& graph, const Node& node) {
  FcSpec s;
  s.a = Input(node, 0);
  s.w = Input(node, 1);
  COLLAGE_RETURN_IF_ERROR(RequireData(graph, node, s.a, "A"));
  COLLAGE_RETURN_IF_ERROR(RequireConst(graph, node, s.w, "B"));
  COLLAGE_RETURN_IF_ERROR(RequireSingleOutput(graph, node));
  const Shape& a = TypeOf(graph, s.a).shape;
  const Shape& w = TypeOf(graph, s.w).shape;
  if (w.size() != 2) return Unsupported("{} '{}': B must be 2-D", node.op_type, node.name);
  Shape out;
  if (node.op_type == "MatMul") {
    if (node.inputs.size() != 2 || a.empty()) {
      return Unsupported("MatMul '{}': needs A of rank >= 1", node.name);
    }
    s.k = w[0];
    s.n = w[1];
    out.assign(a.begin(), a.end() - 1);
  } else if (node.op_type == "Gemm") {
    COLLAGE_ASSIGN_OR_RETURN(const GemmParams p, ReadGemmParams(graph, node));
    if (p.trans_a) return Unsupported("Gemm '{}': transA is not supported", node.name);
    s.w_is_nk = p.trans_b;
    s.k = p.k;
    s.n = p.n;
    s.alpha = p.alpha;
    s.beta = p.beta;
    if (!std::isfinite(s.alpha) || !std::isfinite(s.beta)) {
      return Unsupported("Gemm '{}': alpha/beta must be finite", node.name);
    }
    s.c = Input(node, 2);
    if (node.inputs.size() > 3) return Unsupported("Gemm '{}': too many inputs", node.name);
    if (s.c != kNoValue) {
      COLLAGE_RETURN_IF_ERROR(RequireConst(graph, node, s.c, "C"));
      const Shape& c = TypeOf(graph, s.c).shape;
      const int64_t numel = NumElements(c);
      // A bias vector: C broadcasts along M only ([], [1], [N], [1, N], [1, 1]).
      const bool row = c.size() <= 1 || (c.size() == 2 && c[0] == 1);
      if (!row || (numel != 1 && numel != s.n) || (!c.empty() && c.back() != numel)) {
        return Unsupported("Gemm '{}': C of shape {} is not a bias vector", node.name,
                           ShapeToString(c));
      }
    }
    out = {a[0]};
  } else {
    return Unsupported("{} '{}' is not a fully connected op", node.op_type, node.name);
  }
  if (a.back() != s.k) return Unsupported("{} '{}': K mismatch", node.op_type, node.name);
  s.batch = NumElements(a) / s.k;
  out.push_back(s.n);
  COLLAGE_RETURN_IF_ERROR(CheckOutputShape(graph, node, out));
  return s;
}

std::vector<float> FcWeights(const Graph& graph, const FcSpec& s) {
  std::vector<float> w = ConstantFloats(graph, s.w);
  if (s.alpha != 1.0f) {
    for (float& v : w) v *= s.alpha;  // alpha·(A·B) = A·(alpha·B)
  }
  return w;
}

std::vector<float> FcBias(const Graph& graph, const FcSpec& s) {
  if (s.c == kNoValue || s.beta == 0.0f) return {};
  const std::vector<float> c = ConstantFloats(graph, s.c);
  std::vector<float> bias(static_cast<size_t>(s.n));
  for (size_t j = 0; j < bias.size(); ++j) bias[j] = s.beta * c[c.size() == 1 ? 0 : j];
  return bias;
}

StatusOr<std::vector<float>> AnalyzeBiasAdd(const Graph& graph, const Node& add, const Node& matmul,
                                            const FcSpec& spec) {
  if (add.op_type != "Add" || add.inputs.size() != 2 || add.attributes.Has("broadcast") ||
      graph.opset() < 7) {
    return Unsupported("{} '{}' is not a bias Add", add.op_type, add.name);
  }
  const ValueId product = matmul.outputs[0];
  const int which = add.inputs[0] == product ? 1 : add.inputs[1] == product ? 0 : -1;
  if (which < 0) return Unsupported("Add '{}' does not read the product", add.name);
  const ValueId bias = add.inputs[static_cast<size_t>(which)];
  COLLAGE_RETURN_IF_ERROR(RequireConst(graph, add, bias, "the bias"));
  COLLAGE_RETURN_IF_ERROR(RequireSingleOutput(graph, add));
  const Shape& shape = TypeOf(graph, bias).shape;
  const int64_t numel = NumElements(shape);
  const bool last_only =
      numel == 1 || (!shape.empty() && shape.back() == spec.n && numel == spec.n);
  if (!last_only || shape.size() > TypeOf(graph, product).shape.size() ||
      TypeOf(graph, add.outputs[0]).shape != TypeOf(graph, product).shape) {
    return Unsupported("Add '{}': {} is not a bias along the last dim", add.name,
                       ShapeToString(shape));
  }
  const std::vector<float> values = ConstantFloats(graph, bias);
  std::vector<float> out(static_cast<size_t>(spec.n));
  for (size_t j = 0; j < out.size(); ++j) out[j] = values[numel == 1 ? 0 : j];
  return out;
}

namespace {

class FcKernel final : public OperatorKernel {
 public:
  FcKernel(const FcSpec& spec, const PoolHandle& pool) : OperatorKernel(pool), spec_(spec) {
    input_layouts_ = {Layout::Plain()};
    output_layouts_ = {Layout::Plain()};
  }

  Status Create(const std::vector<float>& weights, const std::vector<float>& bias,
                ClampRange clamp) {
    xnn_operator_t op = nullptr;
    Status status =
        Check(xnn_create_fully_connected_nc_f32(
                  Sz(spec_.k), Sz(spec_.n), Sz(spec_.k), Sz(spec_.n), weights.data(),
                  bias.empty() ? nullptr : bias.data(), clamp.min, clamp.max,
                  kCreateFlags | (spec_.w_is_nk ? 0u : XNN_FLAG_TRANSPOSE_WEIGHTS), &op),
              "xnn_create_fully_connected_nc_f32");
    op_.reset(op);
    return status;
  }

 private:
  Status Setup(const KernelBuffers& buffers, pthreadpool_t pool) const override {
    return Check(xnn_setup_fully_connected_nc_f32(op_.get(), Sz(spec_.batch),
                                                  static_cast<const float*>(buffers.inputs[0]),
                                                  static_cast<float*>(buffers.outputs[0]), pool),
                 "xnn_setup_fully_connected_nc_f32");
  }

  FcSpec spec_;
};

}  // namespace

KernelOr CompileFc(const OpGroup& group, const PoolHandle& pool) {
  COLLAGE_ASSIGN_OR_RETURN(FcSpec spec, AnalyzeFc(*group.graph, *group.main));
  std::vector<float> bias = FcBias(*group.graph, spec);
  if (group.bias_add != nullptr) {
    if (!bias.empty()) return Unsupported("Gemm '{}': C and a bias Add", group.main->name);
    COLLAGE_ASSIGN_OR_RETURN(bias,
                             AnalyzeBiasAdd(*group.graph, *group.bias_add, *group.main, spec));
  }
  auto kernel = std::make_unique<FcKernel>(spec, pool);
  COLLAGE_RETURN_IF_ERROR(
      kernel->Create(PadForXnnpack(FcWeights(*group.graph, spec)), bias, group.clamp));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace collage::xnnpack
