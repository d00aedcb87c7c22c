#include "session/written_summary.h"

namespace collage {
namespace {

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

void CountNodes(const onnx::GraphProto& graph, ModelSummary& summary) {
  for (const onnx::TensorProto& init : graph.initializer()) {
    int64_t elements = 1;
    for (int64_t d : init.dims()) elements *= d;
    summary.num_parameters += elements;
  }
  for (const onnx::NodeProto& node : graph.node()) {
    ++summary.num_nodes;
    ++summary.op_counts[IsDefaultDomain(node.domain()) ? node.op_type()
                                                       : node.domain() + "::" + node.op_type()];
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) CountNodes(attr.g(), summary);
      for (const onnx::GraphProto& g : attr.graphs()) CountNodes(g, summary);
    }
  }
}

}  // namespace

ModelSummary WrittenSummary(const onnx::ModelProto& model) {
  ModelSummary summary;
  summary.name = model.graph().name();
  for (const auto& import : model.opset_import()) {
    if (IsDefaultDomain(import.domain())) summary.opset = import.version();
  }
  summary.flops_known = false;
  CountNodes(model.graph(), summary);
  return summary;
}

}  // namespace collage
