// The `xnnpack_graph` backend's kernel: a region of ops defined as one XNNPACK subgraph and
// compiled into one runtime (xnn_create_runtime_v2), which plans its own internal buffers
// and fuses clamps into their producers.
//
// Layout inside a region: every 4-D value is NHWC (what convolution and pooling need),
// every other value plain. The kernel's 4-D inputs and outputs are therefore declared
// channels-last. SubgraphSupports refuses the ops this convention would break (a MatMul or
// Softmax on a 4-D value, a binary op mixing a 4-D and a lower-rank non-constant operand,
// a reshape that would reorder NHWC bytes).
//
// Constants become static tensors: XNNPACK keeps pointers to their data, so the kernel owns
// the buffers for its whole life.
#include <algorithm>
#include <deque>

#include "collage/sdk/errors.h"
#include "xnnpack_kernels.h"

namespace collage::xnnpack {

namespace {

bool IsBinary(const std::string& op) {
  return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min";
}

size_t Rank(const Graph& graph, ValueId v) { return graph.value(v).type.shape.size(); }

// Reshape-like ops only relabel dims; in a region they are free when the bytes are the same
// in both conventions, i.e. no 4-D side is reordered by NHWC (a unit channel dim or a 1x1
// image, e.g. GlobalAveragePool → Flatten → Gemm).
bool IsReshape(const std::string& op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze";
}
bool SameBytesAsNhwc(const Shape& shape) {
  return shape.size() != 4 || shape[1] == 1 || shape[2] * shape[3] == 1;
}

std::vector<size_t> RegionDims(const Shape& shape) {
  return shape.size() == 4 ? NhwcDims(shape) : Dims(shape);
}

struct SubgraphDeleter {
  void operator()(xnn_subgraph_t subgraph) const { xnn_delete_subgraph(subgraph); }
};
struct RuntimeDeleter {
  void operator()(xnn_runtime_t runtime) const { xnn_delete_runtime(runtime); }
};

class SubgraphKernel final : public Kernel {
 public:
  SubgraphKernel(PoolHandle pool, size_t num_inputs, size_t num_outputs)
      : pool_(std::move(pool)), externals_(num_inputs + num_outputs) {
    for (size_t i = 0; i < externals_.size(); ++i) externals_[i].id = static_cast<uint32_t>(i);
  }

  Status Build(const CompileRequest& request);

  // setup binds the buffers inside the runtime: setup + invoke is one critical section.
  Status Run(const KernelBuffers& buffers) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    // Created on the first run (packing the weights then), bound to the pool of the thread
    // count the kernel was compiled for, which never changes.
    if (runtime_ == nullptr) COLLAGE_RETURN_IF_ERROR(CreateRuntime());
    const size_t ni = buffers.inputs.size();
    for (size_t i = 0; i < ni; ++i) {
      // XNNPACK only reads external inputs; its struct has one non-const pointer type.
      externals_[i].data = const_cast<void*>(buffers.inputs[i]);
    }
    for (size_t i = 0; i < buffers.outputs.size(); ++i) {
      externals_[ni + i].data = buffers.outputs[i];
    }
    COLLAGE_RETURN_IF_ERROR(
        Check(xnn_setup_runtime(runtime_.get(), externals_.size(), externals_.data()),
              "xnn_setup_runtime"));
    return Check(xnn_invoke_runtime(runtime_.get()), "xnn_invoke_runtime");
  }

 private:
  Status CreateRuntime() const {
    xnn_runtime_t runtime = nullptr;
    runtime_.reset();
    Status status =
        Check(xnn_create_runtime_v2(subgraph_.get(), pool_.pool, kCreateFlags, &runtime),
              "xnn_create_runtime_v2");
    runtime_.reset(runtime);
    return status;
  }

  StatusOr<uint32_t> Static(std::vector<float> data, std::vector<size_t> dims) {
    constants_.push_back(PadForXnnpack(std::move(data)));
    uint32_t id = XNN_INVALID_VALUE_ID;
    COLLAGE_RETURN_IF_ERROR(
        Check(xnn_define_tensor_value(subgraph_.get(), xnn_datatype_fp32, dims.size(), dims.data(),
                                      constants_.back().data(), XNN_INVALID_VALUE_ID, 0, &id),
              "xnn_define_tensor_value (static)"));
    return id;
  }
  StatusOr<uint32_t> ValueOf(const Graph& graph, ValueId v);
  Status DefineNode(const Graph& graph, const Node& node);

  const PoolHandle pool_;  // first: outlives the runtime
  std::unique_ptr<xnn_subgraph, SubgraphDeleter> subgraph_;
  mutable std::unique_ptr<xnn_runtime, RuntimeDeleter> runtime_;
  mutable std::vector<xnn_external_value> externals_;
  mutable std::mutex mutex_;
  std::deque<std::vector<float>> constants_;  // deque: growing never moves the data
  std::vector<std::pair<ValueId, uint32_t>> ids_;
};

StatusOr<uint32_t> SubgraphKernel::ValueOf(const Graph& graph, ValueId v) {
  for (const auto& [value, id] : ids_) {
    if (value == v) return id;
  }
  const Value& value = graph.value(v);
  if (value.is_constant()) {
    return Internal("constant '{}' used as a data operand in a region", value.name);
  }
  // An internal value: produced and consumed inside the region, planned by the runtime.
  const std::vector<size_t> dims = RegionDims(value.type.shape);
  uint32_t id = XNN_INVALID_VALUE_ID;
  COLLAGE_RETURN_IF_ERROR(
      Check(xnn_define_tensor_value(subgraph_.get(), xnn_datatype_fp32, dims.size(), dims.data(),
                                    nullptr, XNN_INVALID_VALUE_ID, 0, &id),
            "xnn_define_tensor_value"));
  ids_.emplace_back(v, id);
  return id;
}

Status SubgraphKernel::DefineNode(const Graph& graph, const Node& node) {
  xnn_subgraph_t sg = subgraph_.get();
  const std::string& op = node.op_type;
  // Data inputs first (they must exist before the output is defined as internal).
  if (op == "Conv" || op == "ConvTranspose") {
    COLLAGE_ASSIGN_OR_RETURN(ConvSpec s, AnalyzeConv(graph, node));
    COLLAGE_ASSIGN_OR_RETURN(uint32_t in, ValueOf(graph, s.x));
    COLLAGE_ASSIGN_OR_RETURN(
        uint32_t filter,
        Static(PackConvWeights(graph, s), {Sz(s.m), Sz(s.kh), Sz(s.kw), Sz(s.group_in())}));
    std::vector<float> bias = ConvBias(graph, s);
    if (bias.empty()) bias.assign(Sz(s.m), 0.0f);
    COLLAGE_ASSIGN_OR_RETURN(uint32_t b, Static(std::move(bias), {Sz(s.m)}));
    COLLAGE_ASSIGN_OR_RETURN(uint32_t out, ValueOf(graph, node.outputs[0]));
    if (s.transpose) {
      return Check(xnn_define_deconvolution_2d(
                       sg, U32(s.pad_top), U32(s.pad_right), U32(s.pad_bottom), U32(s.pad_left),
                       U32(s.adj_h), U32(s.adj_w), U32(s.kh), U32(s.kw), U32(s.sh), U32(s.sw),
                       U32(s.dh), U32(s.dw), U32(s.groups), Sz(s.group_in()), Sz(s.group_out()),
                       -kInf, kInf, in, filter, b, out, 0),
                   "xnn_define_deconvolution_2d");
    }
    return Check(
        xnn_define_convolution_2d(sg, U32(s.pad_top), U32(s.pad_right), U32(s.pad_bottom),
                                  U32(s.pad_left), U32(s.kh), U32(s.kw), U32(s.sh), U32(s.sw),
                                  U32(s.dh), U32(s.dw), U32(s.groups), Sz(s.group_in()),
                                  Sz(s.group_out()), -kInf, kInf, in, filter, b, out, 0),
        "xnn_define_convolution_2d");
  }
  if (op == "Gemm" || op == "MatMul") {
    COLLAGE_ASSIGN_OR_RETURN(FcSpec s, AnalyzeFc(graph, node));
    COLLAGE_ASSIGN_OR_RETURN(uint32_t in, ValueOf(graph, s.a));
    std::vector<float> w = FcWeights(graph, s);
    if (!s.w_is_nk) {
      // [K][N] → [N][K], the subgraph's default filter order.
      std::vector<float> nk(w.size());
      for (int64_t k = 0; k < s.k; ++k) {
        for (int64_t n = 0; n < s.n; ++n) nk[Sz(n * s.k + k)] = w[Sz(k * s.n + n)];
      }
      w = std::move(nk);
    }
    COLLAGE_ASSIGN_OR_RETURN(uint32_t filter, Static(std::move(w), {Sz(s.n), Sz(s.k)}));
    uint32_t b = XNN_INVALID_VALUE_ID;
    std::vector<float> bias = FcBias(graph, s);
    if (!bias.empty()) {
      COLLAGE_ASSIGN_OR_RETURN(b, Static(std::move(bias), {Sz(s.n)}));
    }
    COLLAGE_ASSIGN_OR_RETURN(uint32_t out, ValueOf(graph, node.outputs[0]));
    return Check(xnn_define_fully_connected(sg, -kInf, kInf, in, filter, b, out, 0),
                 "xnn_define_fully_connected");
  }
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") {
    COLLAGE_ASSIGN_OR_RETURN(PoolSpec s, AnalyzePool(graph, node));
    COLLAGE_ASSIGN_OR_RETURN(uint32_t in, ValueOf(graph, node.inputs[0]));
    COLLAGE_ASSIGN_OR_RETURN(uint32_t out, ValueOf(graph, node.outputs[0]));
    switch (s.kind) {
      case PoolKind::kMax:
        return Check(
            xnn_define_max_pooling_2d(sg, U32(s.pad_top), U32(s.pad_right), U32(s.pad_bottom),
                                      U32(s.pad_left), U32(s.kh), U32(s.kw), U32(s.sh), U32(s.sw),
                                      U32(s.dh), U32(s.dw), -kInf, kInf, in, out, 0),
            "xnn_define_max_pooling_2d");
      case PoolKind::kAverage:
        return Check(xnn_define_average_pooling_2d(
                         sg, U32(s.pad_top), U32(s.pad_right), U32(s.pad_bottom), U32(s.pad_left),
                         U32(s.kh), U32(s.kw), U32(s.sh), U32(s.sw), -kInf, kInf, in, out, 0),
                     "xnn_define_average_pooling_2d");
      case PoolKind::kGlobalAverage:
        return Check(xnn_define_global_average_pooling_2d(sg, -kInf, kInf, in, out, 0),
                     "xnn_define_global_average_pooling_2d");
    }
  }
  if (IsBinary(op)) {
    COLLAGE_ASSIGN_OR_RETURN(BinarySpec s, AnalyzeBinary(graph, node));
    const bool nhwc = Rank(graph, node.outputs[0]) == 4;
    uint32_t operands[2] = {XNN_INVALID_VALUE_ID, XNN_INVALID_VALUE_ID};
    const ValueId values[2] = {s.a, s.b};
    for (int i = 0; i < 2; ++i) {
      const Value& value = graph.value(values[i]);
      if (value.is_constant()) {
        const std::vector<size_t> dims = nhwc ? NhwcDims(value.type.shape) : Dims(value.type.shape);
        COLLAGE_ASSIGN_OR_RETURN(
            operands[i],
            Static(nhwc ? ConstantNhwc(*value.constant) : value.constant->ToVector<float>(), dims));
      } else {
        COLLAGE_ASSIGN_OR_RETURN(operands[i], ValueOf(graph, values[i]));
      }
    }
    COLLAGE_ASSIGN_OR_RETURN(uint32_t out, ValueOf(graph, node.outputs[0]));
    const uint32_t a = operands[0], b = operands[1];
    switch (s.kind) {
      case BinaryKind::kAdd:
        return Check(xnn_define_add2(sg, -kInf, kInf, a, b, out, 0), "xnn_define_add2");
      case BinaryKind::kSub:
        return Check(xnn_define_subtract(sg, -kInf, kInf, a, b, out, 0), "xnn_define_subtract");
      case BinaryKind::kMul:
        return Check(xnn_define_multiply2(sg, -kInf, kInf, a, b, out, 0), "xnn_define_multiply2");
      case BinaryKind::kDiv:
        return Check(xnn_define_divide(sg, -kInf, kInf, a, b, out, 0), "xnn_define_divide");
      case BinaryKind::kMax:
        return Check(xnn_define_maximum2(sg, a, b, out, 0), "xnn_define_maximum2");
      case BinaryKind::kMin:
        return Check(xnn_define_minimum2(sg, a, b, out, 0), "xnn_define_minimum2");
    }
  }
  if (IsReshape(op)) {
    COLLAGE_ASSIGN_OR_RETURN(uint32_t in, ValueOf(graph, node.inputs[0]));
    COLLAGE_ASSIGN_OR_RETURN(uint32_t out, ValueOf(graph, node.outputs[0]));
    const std::vector<size_t> dims = RegionDims(graph.value(node.outputs[0]).type.shape);
    return Check(xnn_define_static_reshape(sg, dims.size(), dims.data(), in, out, 0),
                 "xnn_define_static_reshape");
  }
  if (op == "Softmax") {
    COLLAGE_RETURN_IF_ERROR(AnalyzeSoftmax(graph, node).status());
    COLLAGE_ASSIGN_OR_RETURN(uint32_t in, ValueOf(graph, node.inputs[0]));
    COLLAGE_ASSIGN_OR_RETURN(uint32_t out, ValueOf(graph, node.outputs[0]));
    return Check(xnn_define_softmax(sg, in, out, 0), "xnn_define_softmax");
  }
  COLLAGE_ASSIGN_OR_RETURN(UnarySpec s, AnalyzeUnary(graph, node));
  COLLAGE_ASSIGN_OR_RETURN(uint32_t in, ValueOf(graph, node.inputs[0]));
  COLLAGE_ASSIGN_OR_RETURN(uint32_t out, ValueOf(graph, node.outputs[0]));
  switch (s.kind) {
    case UnaryKind::kClamp:
      return Check(xnn_define_clamp(sg, s.clamp.min, s.clamp.max, in, out, 0), "xnn_define_clamp");
    case UnaryKind::kSigmoid:
      return Check(xnn_define_sigmoid(sg, in, out, 0), "xnn_define_sigmoid");
    case UnaryKind::kHardSwish:
      return Check(xnn_define_hardswish(sg, in, out, 0), "xnn_define_hardswish");
    case UnaryKind::kLeakyRelu:
      return Check(xnn_define_leaky_relu(sg, s.alpha, in, out, 0), "xnn_define_leaky_relu");
    case UnaryKind::kElu: return Check(xnn_define_elu(sg, s.alpha, in, out, 0), "xnn_define_elu");
    case UnaryKind::kAbs: return Check(xnn_define_abs(sg, in, out, 0), "xnn_define_abs");
    case UnaryKind::kNeg: return Check(xnn_define_negate(sg, in, out, 0), "xnn_define_negate");
    case UnaryKind::kSqrt:
      return Check(xnn_define_square_root(sg, in, out, 0), "xnn_define_square_root");
    case UnaryKind::kFloor: return Check(xnn_define_floor(sg, in, out, 0), "xnn_define_floor");
    case UnaryKind::kCeil: return Check(xnn_define_ceiling(sg, in, out, 0), "xnn_define_ceiling");
    case UnaryKind::kRound:
      return Check(xnn_define_bankers_rounding(sg, in, out, 0), "xnn_define_bankers_rounding");
  }
  return Unsupported("{} '{}': not supported in an XNNPACK subgraph", op, node.name);
}

Status SubgraphKernel::Build(const CompileRequest& request) {
  const Graph& graph = *request.graph;
  const size_t ni = request.inputs.size();
  xnn_subgraph_t subgraph = nullptr;
  COLLAGE_RETURN_IF_ERROR(
      Check(xnn_create_subgraph(static_cast<uint32_t>(externals_.size()), 0, &subgraph),
            "xnn_create_subgraph"));
  subgraph_.reset(subgraph);
  // External values: ids 0..ni-1 are the kernel inputs, then the outputs.
  for (size_t i = 0; i < externals_.size(); ++i) {
    const bool is_input = i < ni;
    const ValueId v = is_input ? request.inputs[i] : request.outputs[i - ni];
    const TensorType& type = graph.value(v).type;
    const std::vector<size_t> dims = RegionDims(type.shape);
    uint32_t id = XNN_INVALID_VALUE_ID;
    COLLAGE_RETURN_IF_ERROR(
        Check(xnn_define_tensor_value(
                  subgraph, xnn_datatype_fp32, dims.size(), dims.data(), nullptr,
                  static_cast<uint32_t>(i),
                  is_input ? XNN_VALUE_FLAG_EXTERNAL_INPUT : XNN_VALUE_FLAG_EXTERNAL_OUTPUT, &id),
              "xnn_define_tensor_value (external)"));
    ids_.emplace_back(v, id);
    const Layout layout = type.shape.size() == 4 ? Layout::ChannelsLast() : Layout::Plain();
    (is_input ? input_layouts_ : output_layouts_).push_back(layout);
  }
  for (NodeId id : request.node_ids()) {
    const Node& node = graph.node(id);
    if (!SubgraphSupports(graph, node)) {
      return Unsupported("{} '{}' cannot be part of an XNNPACK subgraph", node.op_type, node.name);
    }
    COLLAGE_RETURN_IF_ERROR(DefineNode(graph, node));
  }
  return CreateRuntime();
}

}  // namespace

bool SubgraphSupports(const Graph& graph, const Node& node) {
  for (ValueId v : node.inputs) {
    if (v != kNoValue && Rank(graph, v) > XNN_MAX_TENSOR_DIMS) return false;
  }
  const std::string& op = node.op_type;
  if (op == "Conv" || op == "ConvTranspose") return AnalyzeConv(graph, node).ok();
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") {
    return AnalyzePool(graph, node).ok();
  }
  if (op == "Gemm" || op == "MatMul") {
    // A 4-D value is NHWC inside a region, which a row-major product cannot read.
    const size_t rank = Rank(graph, node.inputs[0]);
    return rank >= 2 && rank != 4 && AnalyzeFc(graph, node).ok();
  }
  if (op == "Softmax") return Rank(graph, node.inputs[0]) != 4 && AnalyzeSoftmax(graph, node).ok();
  if (IsReshape(op)) {
    if (node.inputs.empty() || node.outputs.size() != 1) return false;
    const Value& in = graph.value(node.inputs[0]);
    const Value& out = graph.value(node.outputs[0]);
    return !in.is_constant() && in.type.dtype == DType::kFloat32 && in.type.is_static() &&
           in.type.num_elements() > 0 && out.type.shape.size() <= XNN_MAX_TENSOR_DIMS &&
           SameBytesAsNhwc(in.type.shape) && SameBytesAsNhwc(out.type.shape);
  }
  if (IsBinary(op)) {
    if (!AnalyzeBinary(graph, node).ok()) return false;
    const bool out4 = Rank(graph, node.outputs[0]) == 4;
    for (ValueId v : node.inputs) {
      if (graph.value(v).is_constant()) continue;  // re-laid out when defined
      // Non-constant operands must share the output's convention (NHWC iff 4-D).
      if (out4 != (Rank(graph, v) == 4)) return false;
    }
    return true;
  }
  return AnalyzeUnary(graph, node).ok() && Rank(graph, node.outputs[0]) <= XNN_MAX_TENSOR_DIMS;
}

KernelOr CompileSubgraph(const CompileRequest& request, const PoolHandle& pool) {
  if (request.outputs.empty()) return InvalidArgument("an XNNPACK region needs an output");
  auto kernel =
      std::make_unique<SubgraphKernel>(pool, request.inputs.size(), request.outputs.size());
  COLLAGE_RETURN_IF_ERROR(kernel->Build(request));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace collage::xnnpack
