#include "onnx/onnx_checks.h"

#include <algorithm>
#include <exception>
#include <unordered_map>

#include "onnx/checker.h"
#include "onnx/onnx_attributes.h"
#include "onnx/onnx_pb.h"
#include "onnx/onnx_types.h"
#include "onnx/shape_inference/implementation.h"
#include "collage/sdk/errors.h"

namespace collage {

namespace {

// The checker's messages span lines ("...\n\n==> Context: Bad node spec ..."); errors are
// one line here.
std::string OneLine(const std::string& message) {
  std::string out;
  bool in_break = false;
  for (char c : message) {
    if (c == '\n' || c == '\r') {
      in_break = true;
      continue;
    }
    if (in_break && !out.empty()) out += ' ';
    in_break = false;
    out += c;
  }
  return out;
}

// Initializers above this size are copied without their data for shape inference, which
// only reads small int64 tensors (shapes, axes) anyway.
constexpr size_t kMaxCopiedInitializerBytes = 64 * 1024;

bool UsesAiOnnxAlias(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (opset.domain() == "ai.onnx") return true;
  }
  for (const auto& node : model.graph().node()) {
    if (node.domain() == "ai.onnx") return true;
  }
  return false;
}

// "ai.onnx" names the default domain too, but libonnx 1.12 only knows it as "".
void NormalizeAiOnnxAlias(onnx::ModelProto& model) {
  for (auto& opset : *model.mutable_opset_import()) {
    if (opset.domain() == "ai.onnx") opset.set_domain("");
  }
  for (auto& node : *model.mutable_graph()->mutable_node()) {
    if (node.domain() == "ai.onnx") node.set_domain("");
  }
}

}  // namespace

bool OnnxCheckerKnows(int64_t opset) { return opset <= 17; }

bool OnnxOpUnchanged(const std::string& op_type, int64_t from, int64_t to) {
  const auto* registry = onnx::OpSchemaRegistry::Instance();
  const onnx::OpSchema* a = registry->GetSchema(op_type, static_cast<int>(from), "");
  const onnx::OpSchema* b = registry->GetSchema(op_type, static_cast<int>(to), "");
  return a != nullptr && b != nullptr && a->SinceVersion() == b->SinceVersion();
}

Status CheckAttributeTypes(const onnx::NodeProto& node, const std::string& where) {
  const auto* registry = onnx::OpSchemaRegistry::Instance();
  const onnx::OpSchema* schema = registry->GetSchema(node.op_type(), 17, node.domain());
  if (schema == nullptr) return Status::Ok();
  for (const auto& attr : node.attribute()) {
    auto it = schema->attributes().find(attr.name());
    if (it == schema->attributes().end()) continue;
    // An untyped attribute (IR version 1) has the type of the field holding its value: a
    // float in an int attribute is refused here as it would be once typed.
    const int type = EffectiveAttributeType(attr);
    if (type == onnx::AttributeProto::UNDEFINED || type == it->second.type) continue;
    return InvalidModel("{}: attribute '{}' is {}, the op defines it as {}", where, attr.name(),
                        onnx::AttributeProto::AttributeType_Name(
                            static_cast<onnx::AttributeProto::AttributeType>(type)),
                        onnx::AttributeProto::AttributeType_Name(it->second.type));
  }
  return Status::Ok();
}

namespace {

Status RefuseSparseIn(const onnx::GraphProto& graph);

// Subgraphs nest as deep as the file does, which protobuf's parser bounds (100 levels).
Status RefuseSparseIn(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
  for (const onnx::NodeProto& node : nodes) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_sparse_tensor() || attribute.sparse_tensors_size() > 0) {
        return Unsupported("{} node '{}': attribute '{}' holds a sparse tensor; sparse data is "
                           "not supported",
                           node.op_type(), node.name(), attribute.name());
      }
      if (attribute.has_g()) COLLAGE_RETURN_IF_ERROR(RefuseSparseIn(attribute.g()));
      for (const onnx::GraphProto& body : attribute.graphs()) {
        COLLAGE_RETURN_IF_ERROR(RefuseSparseIn(body));
      }
    }
  }
  return Status::Ok();
}

Status RefuseSparseIn(const onnx::GraphProto& graph) {
  if (graph.sparse_initializer_size() > 0) {
    return Unsupported("sparse initializers are not supported ('{}')",
                       graph.sparse_initializer(0).values().name());
  }
  return RefuseSparseIn(graph.node());
}

}  // namespace

Status RefuseSparseTensors(const onnx::ModelProto& model) {
  COLLAGE_RETURN_IF_ERROR(RefuseSparseIn(model.graph()));
  for (const onnx::FunctionProto& function : model.functions()) {
    COLLAGE_RETURN_IF_ERROR(RefuseSparseIn(function.node()));
  }
  return Status::Ok();
}

Status RunOnnxChecker(const onnx::ModelProto& model, const std::string& base_dir) {
  if (UsesAiOnnxAlias(model)) {  // rare: worth a copy rather than a false rejection
    onnx::ModelProto copy = model;
    NormalizeAiOnnxAlias(copy);
    return RunOnnxChecker(copy, base_dir);
  }
  // What onnx::checker::check_model(ModelProto) does, except that the model directory is
  // set: that overload checks external data files relative to the current directory.
  try {
    onnx::checker::CheckerContext ctx;
    // Newer exporters write IR versions libonnx 1.12 does not know (9, 10) even for opsets it
    // knows; checked as IR 8, the graph still gets validated. Features of the newer IR (new
    // element types) are refused by collage anyway.
    ctx.set_ir_version(static_cast<int>(std::min<int64_t>(model.ir_version(), onnx::IR_VERSION)));
    std::unordered_map<std::string, int> opsets;
    for (const auto& opset : model.opset_import()) {
      opsets[opset.domain()] = static_cast<int>(opset.version());
    }
    ctx.set_opset_imports(opsets);
    ctx.set_model_dir(base_dir);
    onnx::checker::LexicalScopeContext lexical;
    onnx::checker::check_graph(model.graph(), ctx, lexical);
    if (model.ir_version() >= 8) onnx::checker::check_model_local_functions(model, ctx, lexical);
  } catch (const std::exception& e) {
    return InvalidModel("the ONNX checker rejects the model: {}", OneLine(e.what()));
  }
  return Status::Ok();
}

Status RunOnnxShapeInference(const onnx::ModelProto& model,
                             const std::map<std::string, Shape>& input_shapes,
                             OnnxInferredTypes& types) {
  types.clear();
  onnx::ModelProto copy;
  copy.set_ir_version(model.ir_version());
  *copy.mutable_opset_import() = model.opset_import();
  *copy.mutable_functions() = model.functions();
  const onnx::GraphProto& graph = model.graph();
  onnx::GraphProto* g = copy.mutable_graph();
  g->set_name(graph.name());
  *g->mutable_node() = graph.node();
  *g->mutable_input() = graph.input();
  *g->mutable_output() = graph.output();
  for (const onnx::TensorProto& init : graph.initializer()) {
    onnx::TensorProto* t = g->add_initializer();
    if (init.data_location() != onnx::TensorProto::EXTERNAL &&
        static_cast<size_t>(init.ByteSizeLong()) <= kMaxCopiedInitializerBytes) {
      *t = init;
    } else {
      t->set_name(init.name());
      t->set_data_type(init.data_type());
      *t->mutable_dims() = init.dims();
    }
  }
  for (onnx::ValueInfoProto& input : *g->mutable_input()) {
    auto it = input_shapes.find(input.name());
    if (it == input_shapes.end() || !input.type().has_tensor_type()) continue;
    auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : it->second) shape->add_dim()->set_dim_value(d);
  }
  for (onnx::ValueInfoProto& output : *g->mutable_output()) {
    if (output.type().has_tensor_type()) {
      output.mutable_type()->mutable_tensor_type()->clear_shape();
    }
  }
  NormalizeAiOnnxAlias(copy);
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0,
                                        /*data_prop_val=*/false);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return InvalidModel("ONNX shape inference rejects the model: {}", OneLine(e.what()));
  }
  auto collect = [&](const onnx::ValueInfoProto& info) {
    if (!info.type().has_tensor_type()) return;
    const auto& tensor = info.type().tensor_type();
    if (!tensor.has_shape()) return;
    auto dtype = DTypeFromOnnx(tensor.elem_type());
    if (!dtype.ok()) return;
    TensorType type{*dtype, {}};
    for (const auto& dim : tensor.shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0) return;
      type.shape.push_back(dim.dim_value());
    }
    types[info.name()] = std::move(type);
  };
  for (const auto& info : g->value_info()) collect(info);
  for (const auto& info : g->output()) collect(info);
  return Status::Ok();
}

}  // namespace collage
