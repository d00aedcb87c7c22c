#include "collage/sdk/op_registry.h"

#include <algorithm>
#include <optional>

#include "collage/sdk/errors.h"
#include "ops/op_families.h"
#include "util/checked_math.h"

namespace collage {

namespace {

std::string NormalizeDomain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

OpRegistry BuildGlobalRegistry() {
  OpRegistry registry;
  RegisterConvOps(registry);
  RegisterConvTransposeOps(registry);
  RegisterPoolOps(registry);
  RegisterGemmOps(registry);
  RegisterNormalizationOps(registry);
  RegisterUnaryOps(registry);
  RegisterBinaryOps(registry);
  RegisterReductionOps(registry);
  RegisterShapeOps(registry);
  RegisterSliceOps(registry);
  RegisterGatherOps(registry);
  RegisterLayoutOps(registry);
  RegisterResizeOps(registry);
  RegisterRecurrentOps(registry);
  RegisterQuantizeOps(registry);
  RegisterIntegerMatMulOps(registry);
  RegisterIntegerConvOps(registry);
  RegisterQLinearContribOps(registry);
  RegisterGeluContribOps(registry);
  RegisterSkipLayerNormOps(registry);
  RegisterEmbedLayerNormOps(registry);
  RegisterAttentionOps(registry);
  RegisterScatterOps(registry);
  RegisterCumSumOps(registry);
  RegisterTopKOps(registry);
  RegisterEinsumOps(registry);
  RegisterSamplingOps(registry);
  RegisterRearrangeOps(registry);
  RegisterSelectionOps(registry);
  RegisterSignalOps(registry);
  RegisterDetOps(registry);
  RegisterMaxUnpoolOps(registry);
  return registry;
}

}  // namespace

const OpRegistry& OpRegistry::Global() {
  static const OpRegistry registry = BuildGlobalRegistry();
  return registry;
}

void OpRegistry::Register(OpDef def) {
  def.domain = NormalizeDomain(def.domain);
  auto key = std::make_pair(def.domain, def.op_type);
  defs_[key] = std::move(def);
}

const OpDef* OpRegistry::Find(const std::string& domain, const std::string& op_type) const {
  auto it = defs_.find({NormalizeDomain(domain), op_type});
  return it == defs_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::OpTypes() const {
  std::vector<std::string> names;
  for (const auto& [key, def] : defs_) {
    names.push_back(key.first.empty() ? key.second : key.first + "::" + key.second);
  }
  return names;
}

namespace {

// A tensor must be addressable: its byte size fits in int64 with room to spare (2^48 bytes,
// far beyond any memory), so later size arithmetic cannot overflow. The error says why not.
Status CheckFitsInMemoryModel(const Node& node, size_t output, const TensorType& type) {
  const std::optional<int64_t> elements = CheckedProduct(type.shape);
  if (!elements) {
    return OpError(node, StatusCode::kInvalidModel,
                   "output {} would have shape {}, whose element count overflows int64", output,
                   ShapeToString(type.shape));
  }
  const std::optional<int64_t> bytes =
      CheckedMul(*elements, static_cast<int64_t>(std::max<size_t>(DTypeSize(type.dtype), 1)));
  if (!bytes || *bytes > (int64_t{1} << 48)) {
    return OpError(node, StatusCode::kInvalidModel,
                   "output {} would have shape {} ({} elements of {}): too large (over 2^48 "
                   "bytes)",
                   output, ShapeToString(type.shape), *elements, DTypeName(type.dtype));
  }
  return Status::Ok();
}

bool HasNegativeDim(const Shape& shape) {
  return std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; });
}

}  // namespace

Status InferNodeTypes(const OpDef& def, InferContext& ctx) {
  const Node& node = ctx.node;
  // Trailing absent optional inputs do not count towards arity.
  int num_inputs = static_cast<int>(ctx.input_types.size());
  while (num_inputs > 0 && ctx.input_types[static_cast<size_t>(num_inputs) - 1] == nullptr) {
    --num_inputs;
  }
  if (num_inputs < def.min_inputs || num_inputs > def.max_inputs) {
    return OpError(node, StatusCode::kInvalidModel, "has {} inputs, expected {} to {}", num_inputs,
                   def.min_inputs, def.max_inputs);
  }
  int num_outputs = static_cast<int>(node.outputs.size());
  if (num_outputs < def.min_outputs || num_outputs > def.max_outputs) {
    return OpError(node, StatusCode::kInvalidModel, "has {} outputs, expected {} to {}",
                   num_outputs, def.min_outputs, def.max_outputs);
  }
  for (int i = 0; i < def.min_inputs && i < num_inputs; ++i) {
    if (ctx.input_types[static_cast<size_t>(i)] == nullptr) {
      return OpError(node, StatusCode::kInvalidModel, "required input {} is missing", i);
    }
  }
  for (size_t i = 0; i < ctx.input_types.size(); ++i) {
    const TensorType* t = ctx.input_types[i];
    if (t != nullptr && !t->is_static()) {
      return OpError(node, StatusCode::kInvalidArgument,
                     "input {} has a dynamic shape {}; fix it with --shape", i, t->ToString());
    }
  }
  for (int i = 0; i < def.min_outputs && i < num_outputs; ++i) {
    if (node.outputs[static_cast<size_t>(i)] == kNoValue) {
      return OpError(node, StatusCode::kInvalidModel, "required output {} has no name", i);
    }
  }
  ctx.output_types.assign(node.outputs.size(), TensorType{});
  COLLAGE_RETURN_IF_ERROR(def.infer(ctx));
  if (ctx.output_types.size() != node.outputs.size()) {
    return Internal("{} node '{}': type inference produced {} outputs for {}", node.op_type,
                    node.name, ctx.output_types.size(), node.outputs.size());
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) continue;
    // Inference only ever computes dims from known values (inputs are static, see above), so
    // a negative one is a shape computation that went wrong, not data it could not see.
    if (HasNegativeDim(ctx.output_types[i].shape)) {
      return OpError(node, StatusCode::kInternal,
                     "type inference computed output {} with a negative dim ({}): its shape "
                     "computation overflowed or is wrong",
                     i, ctx.output_types[i].ToString());
    }
    if (ctx.output_types[i].is_static()) {
      COLLAGE_RETURN_IF_ERROR(CheckFitsInMemoryModel(node, i, ctx.output_types[i]));
    }
    if (!ctx.output_types[i].is_static()) {
      return OpError(node, StatusCode::kUnsupported,
                     "output {} has no static type ({}); its shape depends on data that is not "
                     "constant",
                     i, ctx.output_types[i].ToString());
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> RunReferenceNode(const Node& node, int64_t opset,
                                               const std::vector<Tensor>& inputs) {
  const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type);
  if (def == nullptr) {
    return Unsupported("op {} (node '{}') is not supported", node.op_type, node.name);
  }
  std::vector<TensorType> types(inputs.size());
  InferContext infer{node, opset, {}, {}, {}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) {
      infer.input_types.push_back(nullptr);
      infer.input_values.push_back(nullptr);
    } else {
      types[i] = TensorType{inputs[i].dtype(), inputs[i].shape()};
      infer.input_types.push_back(&types[i]);
      infer.input_values.push_back(&inputs[i]);
    }
  }
  COLLAGE_RETURN_IF_ERROR(InferNodeTypes(*def, infer));
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == kNoValue) {
      outputs.emplace_back();
    } else {
      outputs.emplace_back(infer.output_types[i].dtype, infer.output_types[i].shape);
    }
  }
  KernelContext run{node, opset, std::span<const Tensor>(inputs), std::span<Tensor>(outputs)};
  COLLAGE_RETURN_IF_ERROR(def->run(run));
  return outputs;
}

}  // namespace collage
