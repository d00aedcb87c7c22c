#include "onnx/onnx_export.h"

#include <set>

#include "onnx/onnx_attributes.h"
#include "onnx/onnx_pb.h"
#include "onnx/onnx_types.h"
#include "onnx/tensor_proto.h"
#include "collage/sdk/errors.h"
#include "util/file_io.h"

namespace collage {

namespace {

// The IR version an opset was released with (ONNX's versioning table): 8 up to opset 18,
// 9 for 19–20, 10 for 21. Older opsets can be carried by IR 8 just fine.
int64_t IrVersionFor(int64_t opset) {
  if (opset >= 21) return 10;
  if (opset >= 19) return 9;
  return 8;
}

Status CheckExportable(const Value& value) {
  if (value.type.dtype == DType::kUndefined || value.type.dtype == DType::kString) {
    return Internal("value '{}' has type {}, which cannot be exported", value.name,
                    value.type.ToString());
  }
  return Status::Ok();
}

Status FillValueInfo(const Value& value, onnx::ValueInfoProto& info) {
  COLLAGE_RETURN_IF_ERROR(CheckExportable(value));
  info.set_name(value.name);
  FillTypeProto(value.type, *info.mutable_type());
  return Status::Ok();
}

}  // namespace

Status ExportOnnxModel(const Graph& graph, onnx::ModelProto& model) {
  model.Clear();
  model.set_ir_version(IrVersionFor(graph.opset()));
  model.set_producer_name("collage");
  auto* default_opset = model.add_opset_import();
  default_opset->set_domain("");
  default_opset->set_version(graph.opset());
  // Ops of other domains (custom ops registered by backends) are versioned 1.
  std::set<std::string> domains;
  for (const Node& node : graph.nodes()) {
    if (!node.domain.empty() && node.domain != "ai.onnx") domains.insert(node.domain);
  }
  for (const std::string& domain : domains) {
    auto* opset = model.add_opset_import();
    opset->set_domain(domain);
    opset->set_version(1);
  }

  onnx::GraphProto* g = model.mutable_graph();
  g->set_name(graph.name());
  std::set<ValueId> declared;  // inputs, outputs, constants: everything but intermediates
  for (ValueId id : graph.inputs()) {
    COLLAGE_RETURN_IF_ERROR(FillValueInfo(graph.value(id), *g->add_input()));
    declared.insert(id);
  }
  for (ValueId id = 0; id < graph.num_values(); ++id) {
    const Value& value = graph.value(id);
    if (!value.is_constant()) continue;
    COLLAGE_RETURN_IF_ERROR(CheckExportable(value));
    TensorToProto(*value.constant, value.name, *g->add_initializer());
    declared.insert(id);
  }
  for (const Node& node : graph.nodes()) {
    onnx::NodeProto* n = g->add_node();
    n->set_name(node.name);
    n->set_op_type(node.op_type);
    if (!node.domain.empty()) n->set_domain(node.domain);
    for (ValueId in : node.inputs) n->add_input(in == kNoValue ? "" : graph.value(in).name);
    for (ValueId out : node.outputs) n->add_output(out == kNoValue ? "" : graph.value(out).name);
    for (const auto& [name, attribute] : node.attributes.all()) {
      Status s = AttributeToProto(name, attribute, *n->add_attribute());
      if (!s.ok()) return s.WithContext(fmt::format("{} node '{}'", node.op_type, node.name));
    }
  }
  for (ValueId id : graph.outputs()) {
    COLLAGE_RETURN_IF_ERROR(FillValueInfo(graph.value(id), *g->add_output()));
    declared.insert(id);
  }
  // Intermediate types, so viewers and other runtimes need not re-infer them.
  for (ValueId id = 0; id < graph.num_values(); ++id) {
    if (declared.count(id) || graph.value(id).producer < 0) continue;
    COLLAGE_RETURN_IF_ERROR(FillValueInfo(graph.value(id), *g->add_value_info()));
  }
  return Status::Ok();
}

StatusOr<std::string> ExportOnnxBytes(const Graph& graph) {
  onnx::ModelProto model;
  COLLAGE_RETURN_IF_ERROR(ExportOnnxModel(graph, model));
  std::string bytes;
  if (model.ByteSizeLong() > static_cast<size_t>(INT32_MAX) || !model.SerializeToString(&bytes)) {
    return Unsupported(
        "graph '{}' is larger than 2 GiB, which an ONNX file cannot hold without "
        "external data",
        graph.name());
  }
  return bytes;
}

Status ExportOnnxFile(const Graph& graph, const std::string& path) {
  COLLAGE_ASSIGN_OR_RETURN(std::string bytes, ExportOnnxBytes(graph));
  return WriteFileAtomically(path, bytes);
}

}  // namespace collage
