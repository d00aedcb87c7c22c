// Elementwise ops: binary *_nd_f32 (numpy broadcasting done by XNNPACK), unary *_nc_f32 and
// softmax_nc_f32, and the analyses deciding what they can run.
//
// Channels-last binary ops (rule suffix _nhwc) compute on NHWC shapes: a 4-D operand is
// declared channels-last; a lower-rank operand whose channel dim is 1 once aligned to 4-D is
// already laid out that way in plain memory; a constant is transposed here, once.
#include <algorithm>
#include <cmath>
#include <utility>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_params.h"
#include "xnnpack_checks.h"
#include "xnnpack_kernels.h"

namespace collage::xnnpack {

// ---- Binary -----------------------------------------------------------------------------

StatusOr<BinarySpec> AnalyzeBinary(const Graph& graph, const Node& node) {
  BinarySpec s;
  static const std::pair<const char*, BinaryKind> kKinds[] = {
      {"Add", BinaryKind::kAdd}, {"Sub", BinaryKind::kSub}, {"Mul", BinaryKind::kMul},
      {"Div", BinaryKind::kDiv}, {"Max", BinaryKind::kMax}, {"Min", BinaryKind::kMin}};
  bool found = false;
  for (const auto& kind : kKinds) {
    if (node.op_type == kind.first) {
      s.kind = kind.second;
      found = true;
    }
  }
  if (!found) return Unsupported("{} '{}' is not a binary op", node.op_type, node.name);
  s.clamps = s.kind != BinaryKind::kMax && s.kind != BinaryKind::kMin;
  if (node.inputs.size() != 2) {
    return Unsupported("{} '{}': exactly two inputs are supported", node.op_type, node.name);
  }
  // Before opset 7 broadcasting was opt-in with axis/broadcast attributes.
  if (graph.opset() < 7 || node.attributes.Has("broadcast") || node.attributes.Has("axis")) {
    return Unsupported("{} '{}': legacy broadcasting", node.op_type, node.name);
  }
  s.a = node.inputs[0];
  s.b = node.inputs[1];
  COLLAGE_RETURN_IF_ERROR(RequireFloat(graph, node, s.a, "input A"));
  COLLAGE_RETURN_IF_ERROR(RequireFloat(graph, node, s.b, "input B"));
  if (graph.value(s.a).is_constant() && graph.value(s.b).is_constant()) {
    return Unsupported("{} '{}': both inputs are constants", node.op_type, node.name);
  }
  COLLAGE_RETURN_IF_ERROR(RequireSingleOutput(graph, node));
  for (ValueId v : {s.a, s.b, node.outputs[0]}) {
    if (TypeOf(graph, v).shape.size() > XNN_MAX_TENSOR_DIMS) {
      return Unsupported("{} '{}': rank above {}", node.op_type, node.name, XNN_MAX_TENSOR_DIMS);
    }
  }
  return s;
}

bool BinaryFitsChannelsLast(const Graph& graph, const Node& node) {
  if (!AnalyzeBinary(graph, node).ok()) return false;
  if (TypeOf(graph, node.outputs[0]).shape.size() != 4) return false;
  for (ValueId v : {node.inputs[0], node.inputs[1]}) {
    if (graph.value(v).is_constant()) continue;
    const Shape& shape = TypeOf(graph, v).shape;
    if (shape.size() == 3 && shape[0] != 1) return false;  // its channel dim would move
  }
  return true;
}

// ---- Unary ------------------------------------------------------------------------------

StatusOr<UnarySpec> AnalyzeUnary(const Graph& graph, const Node& node) {
  UnarySpec s;
  if (node.op_type == "Relu" || node.op_type == "Clip") {
    s.kind = UnaryKind::kClamp;
    COLLAGE_ASSIGN_OR_RETURN(s.clamp, AnalyzeClamp(graph, node));
  } else {
    static const std::pair<const char*, UnaryKind> kKinds[] = {
        {"Sigmoid", UnaryKind::kSigmoid},
        {"HardSwish", UnaryKind::kHardSwish},
        {"LeakyRelu", UnaryKind::kLeakyRelu},
        {"Elu", UnaryKind::kElu},
        {"Abs", UnaryKind::kAbs},
        {"Neg", UnaryKind::kNeg},
        {"Sqrt", UnaryKind::kSqrt},
        {"Floor", UnaryKind::kFloor},
        {"Ceil", UnaryKind::kCeil},
        {"Round", UnaryKind::kRound}};  // ONNX Round is half-to-even: bankers rounding
    bool found = false;
    for (const auto& kind : kKinds) {
      if (node.op_type == kind.first) {
        s.kind = kind.second;
        found = true;
      }
    }
    if (!found) return Unsupported("{} '{}' is not a supported unary op", node.op_type, node.name);
    if (node.inputs.size() != 1) return Unsupported("{} '{}': one input", node.op_type, node.name);
    if (s.kind == UnaryKind::kLeakyRelu) s.alpha = node.attributes.GetFloat("alpha", 0.01f);
    if (s.kind == UnaryKind::kElu) s.alpha = node.attributes.GetFloat("alpha", 1.0f);
    if (!std::isfinite(s.alpha)) return Unsupported("{} '{}': alpha", node.op_type, node.name);
  }
  COLLAGE_RETURN_IF_ERROR(RequireData(graph, node, Input(node, 0), "the input"));
  COLLAGE_RETURN_IF_ERROR(RequireSingleOutput(graph, node));
  return s;
}

// ---- Softmax ----------------------------------------------------------------------------

StatusOr<SoftmaxSpec> AnalyzeSoftmax(const Graph& graph, const Node& node) {
  if (node.op_type != "Softmax")
    return Unsupported("{} '{}' is not Softmax", node.op_type, node.name);
  COLLAGE_RETURN_IF_ERROR(RequireData(graph, node, Input(node, 0), "the input"));
  COLLAGE_RETURN_IF_ERROR(RequireSingleOutput(graph, node));
  const Shape& x = TypeOf(graph, node.inputs[0]).shape;
  if (x.empty()) return Unsupported("Softmax '{}': scalar input", node.name);
  COLLAGE_ASSIGN_OR_RETURN(const SoftmaxAxis axis, ReadSoftmaxAxis(graph, node));
  // Opset 13's single axis and the older 2-D coercion both are a last-axis softmax exactly
  // when the axis is the last one.
  if (axis.axis != static_cast<int64_t>(x.size()) - 1) {
    return Unsupported("Softmax '{}': only the last axis is supported (axis {})", node.name,
                       axis.axis);
  }
  SoftmaxSpec s;
  s.channels = x.back();
  s.rows = NumElements(x) / s.channels;
  return s;
}

namespace {

// ---- Binary -----------------------------------------------------------------------------

struct Operand {
  int input = -1;            // kernel input index, or -1 for a constant
  std::vector<float> data;   // the constant, in the kernel's layout
  std::vector<size_t> dims;  // as XNNPACK sees it
};

class BinaryKernel final : public OperatorKernel {
 public:
  BinaryKernel(BinaryKind kind, Operand a, Operand b, const PoolHandle& pool)
      : OperatorKernel(pool), kind_(kind), a_(std::move(a)), b_(std::move(b)) {}

  Status Create(ClampRange clamp) {
    xnn_operator_t op = nullptr;
    Status status;
    switch (kind_) {
      case BinaryKind::kAdd:
        status = Check(xnn_create_add_nd_f32(clamp.min, clamp.max, kCreateFlags, &op),
                       "xnn_create_add_nd_f32");
        break;
      case BinaryKind::kSub:
        status = Check(xnn_create_subtract_nd_f32(clamp.min, clamp.max, kCreateFlags, &op),
                       "xnn_create_subtract_nd_f32");
        break;
      case BinaryKind::kMul:
        status = Check(xnn_create_multiply_nd_f32(clamp.min, clamp.max, kCreateFlags, &op),
                       "xnn_create_multiply_nd_f32");
        break;
      case BinaryKind::kDiv:
        status = Check(xnn_create_divide_nd_f32(clamp.min, clamp.max, kCreateFlags, &op),
                       "xnn_create_divide_nd_f32");
        break;
      case BinaryKind::kMax:
        status = Check(xnn_create_maximum_nd_f32(0, &op), "xnn_create_maximum_nd_f32");
        break;
      case BinaryKind::kMin:
        status = Check(xnn_create_minimum_nd_f32(0, &op), "xnn_create_minimum_nd_f32");
        break;
    }
    op_.reset(op);
    return status;
  }

  std::vector<Layout>& inputs() { return input_layouts_; }
  std::vector<Layout>& outputs() { return output_layouts_; }

 private:
  const float* Pointer(const Operand& operand, const KernelBuffers& buffers) const {
    if (operand.input < 0) return operand.data.data();
    return static_cast<const float*>(buffers.inputs[static_cast<size_t>(operand.input)]);
  }

  Status Setup(const KernelBuffers& buffers, pthreadpool_t pool) const override {
    const float* a = Pointer(a_, buffers);
    const float* b = Pointer(b_, buffers);
    auto* out = static_cast<float*>(buffers.outputs[0]);
    const size_t na = a_.dims.size(), nb = b_.dims.size();
    const size_t* da = a_.dims.data();
    const size_t* db = b_.dims.data();
    switch (kind_) {
      case BinaryKind::kAdd:
        return Check(xnn_setup_add_nd_f32(op_.get(), na, da, nb, db, a, b, out, pool),
                     "xnn_setup_add_nd_f32");
      case BinaryKind::kSub:
        return Check(xnn_setup_subtract_nd_f32(op_.get(), na, da, nb, db, a, b, out, pool),
                     "xnn_setup_subtract_nd_f32");
      case BinaryKind::kMul:
        return Check(xnn_setup_multiply_nd_f32(op_.get(), na, da, nb, db, a, b, out, pool),
                     "xnn_setup_multiply_nd_f32");
      case BinaryKind::kDiv:
        return Check(xnn_setup_divide_nd_f32(op_.get(), na, da, nb, db, a, b, out, pool),
                     "xnn_setup_divide_nd_f32");
      case BinaryKind::kMax:
        return Check(xnn_setup_maximum_nd_f32(op_.get(), na, da, nb, db, a, b, out, pool),
                     "xnn_setup_maximum_nd_f32");
      case BinaryKind::kMin:
        return Check(xnn_setup_minimum_nd_f32(op_.get(), na, da, nb, db, a, b, out, pool),
                     "xnn_setup_minimum_nd_f32");
    }
    return Status();
  }

  BinaryKind kind_;
  Operand a_, b_;
};

// ---- Unary ------------------------------------------------------------------------------

class UnaryKernel final : public OperatorKernel {
 public:
  UnaryKernel(int64_t elements, const Layout& layout, const PoolHandle& pool)
      : OperatorKernel(pool), elements_(elements) {
    input_layouts_ = {layout};
    output_layouts_ = {layout};
  }

  // Elementwise: the tensor is one row of `elements` channels, whatever its shape or layout.
  Status Create(const UnarySpec& s) {
    const size_t c = 1;  // batch = elements, channels = 1: one contiguous run
    xnn_operator_t op = nullptr;
    Status status;
    switch (s.kind) {
      case UnaryKind::kClamp:
        status =
            Check(xnn_create_clamp_nc_f32(c, c, c, s.clamp.min, s.clamp.max, kCreateFlags, &op),
                  "xnn_create_clamp_nc_f32");
        break;
      case UnaryKind::kSigmoid:
        status = Check(xnn_create_sigmoid_nc_f32(c, c, c, kCreateFlags, &op),
                       "xnn_create_sigmoid_nc_f32");
        break;
      case UnaryKind::kHardSwish:
        status = Check(xnn_create_hardswish_nc_f32(c, c, c, kCreateFlags, &op),
                       "xnn_create_hardswish_nc_f32");
        break;
      case UnaryKind::kLeakyRelu:
        status = Check(xnn_create_leaky_relu_nc_f32(c, c, c, s.alpha, kCreateFlags, &op),
                       "xnn_create_leaky_relu_nc_f32");
        break;
      case UnaryKind::kElu:
        status = Check(xnn_create_elu_nc_f32(c, c, c, s.alpha, kCreateFlags, &op),
                       "xnn_create_elu_nc_f32");
        break;
      case UnaryKind::kAbs:
        status = Check(xnn_create_abs_nc_f32(c, c, c, kCreateFlags, &op), "xnn_create_abs_nc_f32");
        break;
      case UnaryKind::kNeg:
        status =
            Check(xnn_create_negate_nc_f32(c, c, c, kCreateFlags, &op), "xnn_create_negate_nc_f32");
        break;
      case UnaryKind::kSqrt:
        status = Check(xnn_create_square_root_nc_f32(c, c, c, kCreateFlags, &op),
                       "xnn_create_square_root_nc_f32");
        break;
      case UnaryKind::kFloor:
        status =
            Check(xnn_create_floor_nc_f32(c, c, c, kCreateFlags, &op), "xnn_create_floor_nc_f32");
        break;
      case UnaryKind::kCeil:
        status = Check(xnn_create_ceiling_nc_f32(c, c, c, kCreateFlags, &op),
                       "xnn_create_ceiling_nc_f32");
        break;
      case UnaryKind::kRound:
        status = Check(xnn_create_bankers_rounding_nc_f32(c, c, c, kCreateFlags, &op),
                       "xnn_create_bankers_rounding_nc_f32");
        break;
    }
    kind_ = s.kind;
    op_.reset(op);
    return status;
  }

 private:
  Status Setup(const KernelBuffers& buffers, pthreadpool_t pool) const override {
    const auto* in = static_cast<const float*>(buffers.inputs[0]);
    auto* out = static_cast<float*>(buffers.outputs[0]);
    const size_t n = Sz(elements_);
    xnn_operator_t op = op_.get();
    switch (kind_) {
      case UnaryKind::kClamp:
        return Check(xnn_setup_clamp_nc_f32(op, n, in, out, pool), "xnn_setup_clamp_nc_f32");
      case UnaryKind::kSigmoid:
        return Check(xnn_setup_sigmoid_nc_f32(op, n, in, out, pool), "xnn_setup_sigmoid_nc_f32");
      case UnaryKind::kHardSwish:
        return Check(xnn_setup_hardswish_nc_f32(op, n, in, out, pool),
                     "xnn_setup_hardswish_nc_f32");
      case UnaryKind::kLeakyRelu:
        return Check(xnn_setup_leaky_relu_nc_f32(op, n, in, out, pool),
                     "xnn_setup_leaky_relu_nc_f32");
      case UnaryKind::kElu:
        return Check(xnn_setup_elu_nc_f32(op, n, in, out, pool), "xnn_setup_elu_nc_f32");
      case UnaryKind::kAbs:
        return Check(xnn_setup_abs_nc_f32(op, n, in, out, pool), "xnn_setup_abs_nc_f32");
      case UnaryKind::kNeg:
        return Check(xnn_setup_negate_nc_f32(op, n, in, out, pool), "xnn_setup_negate_nc_f32");
      case UnaryKind::kSqrt:
        return Check(xnn_setup_square_root_nc_f32(op, n, in, out, pool),
                     "xnn_setup_square_root_nc_f32");
      case UnaryKind::kFloor:
        return Check(xnn_setup_floor_nc_f32(op, n, in, out, pool), "xnn_setup_floor_nc_f32");
      case UnaryKind::kCeil:
        return Check(xnn_setup_ceiling_nc_f32(op, n, in, out, pool), "xnn_setup_ceiling_nc_f32");
      case UnaryKind::kRound:
        return Check(xnn_setup_bankers_rounding_nc_f32(op, n, in, out, pool),
                     "xnn_setup_bankers_rounding_nc_f32");
    }
    return Status();
  }

  int64_t elements_;
  UnaryKind kind_ = UnaryKind::kClamp;
};

// ---- Softmax ----------------------------------------------------------------------------

class SoftmaxKernel final : public OperatorKernel {
 public:
  SoftmaxKernel(const SoftmaxSpec& spec, const PoolHandle& pool)
      : OperatorKernel(pool), spec_(spec) {
    input_layouts_ = {Layout::Plain()};
    output_layouts_ = {Layout::Plain()};
  }

  Status Create() {
    const size_t c = Sz(spec_.channels);
    xnn_operator_t op = nullptr;
    Status status =
        Check(xnn_create_softmax_nc_f32(c, c, c, kCreateFlags, &op), "xnn_create_softmax_nc_f32");
    op_.reset(op);
    return status;
  }

 private:
  Status Setup(const KernelBuffers& buffers, pthreadpool_t pool) const override {
    return Check(xnn_setup_softmax_nc_f32(op_.get(), Sz(spec_.rows),
                                          static_cast<const float*>(buffers.inputs[0]),
                                          static_cast<float*>(buffers.outputs[0]), pool),
                 "xnn_setup_softmax_nc_f32");
  }

  SoftmaxSpec spec_;
};

}  // namespace

KernelOr CompileBinary(const OpGroup& group, const std::vector<ValueId>& inputs,
                       const PoolHandle& pool) {
  const Graph& graph = *group.graph;
  const Node& node = *group.main;
  COLLAGE_ASSIGN_OR_RETURN(BinarySpec spec, AnalyzeBinary(graph, node));
  if (group.channels_last && !BinaryFitsChannelsLast(graph, node)) {
    return Unsupported("{} '{}': no channels-last form", node.op_type, node.name);
  }
  if ((group.clamp.min != -kInf || group.clamp.max != kInf) && !spec.clamps) {
    return Unsupported("{} '{}': XNNPACK cannot fuse a clamp here", node.op_type, node.name);
  }
  std::vector<Layout> input_layouts(inputs.size(), Layout::Plain());
  auto make_operand = [&](ValueId v) -> StatusOr<Operand> {
    Operand operand;
    const Value& value = graph.value(v);
    const Shape& shape = value.type.shape;
    operand.dims = group.channels_last ? NhwcDims(shape) : Dims(shape);
    if (value.is_constant()) {
      operand.data = PadForXnnpack(group.channels_last ? ConstantNhwc(*value.constant)
                                                       : value.constant->ToVector<float>());
      return operand;
    }
    auto it = std::find(inputs.begin(), inputs.end(), v);
    if (it == inputs.end()) {
      return Internal("{} '{}': operand is not a kernel input", node.op_type, node.name);
    }
    operand.input = static_cast<int>(it - inputs.begin());
    if (group.channels_last && shape.size() == 4) {
      input_layouts[static_cast<size_t>(operand.input)] = Layout::ChannelsLast();
    }
    return operand;
  };
  COLLAGE_ASSIGN_OR_RETURN(Operand a, make_operand(spec.a));
  COLLAGE_ASSIGN_OR_RETURN(Operand b, make_operand(spec.b));
  // XNNPACK derives the output shape from the operands' by broadcasting.
  auto kernel = std::make_unique<BinaryKernel>(spec.kind, std::move(a), std::move(b), pool);
  kernel->inputs() = std::move(input_layouts);
  kernel->outputs() = {group.channels_last ? Layout::ChannelsLast() : Layout::Plain()};
  COLLAGE_RETURN_IF_ERROR(kernel->Create(group.clamp));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

KernelOr CompileUnary(const OpGroup& group, const PoolHandle& pool) {
  COLLAGE_ASSIGN_OR_RETURN(UnarySpec spec, AnalyzeUnary(*group.graph, *group.main));
  const TensorType& type = group.graph->value(group.output).type;
  if (group.channels_last && (type.shape.size() < 3 || type.shape.size() > 5)) {
    return Unsupported("{} '{}': no channels-last form for rank {}", group.main->op_type,
                       group.main->name, type.shape.size());
  }
  auto kernel = std::make_unique<UnaryKernel>(
      type.num_elements(), group.channels_last ? Layout::ChannelsLast() : Layout::Plain(), pool);
  COLLAGE_RETURN_IF_ERROR(kernel->Create(spec));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

KernelOr CompileSoftmax(const OpGroup& group, const PoolHandle& pool) {
  COLLAGE_ASSIGN_OR_RETURN(SoftmaxSpec spec, AnalyzeSoftmax(*group.graph, *group.main));
  auto kernel = std::make_unique<SoftmaxKernel>(spec, pool);
  COLLAGE_RETURN_IF_ERROR(kernel->Create());
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace collage::xnnpack
