// What a model is made of and what it costs: `collage info` prints it, Session::summary()
// and ExportZooModel (collage/zoo.h) give it. And what the model file says of itself.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace collage {

struct ModelSummary {
  std::string name;  // the model's graph name
  int64_t opset = 0;
  int num_nodes = 0;
  // Nodes per op type; an op outside the default ONNX domain as "domain::OpType".
  std::map<std::string, int> op_counts;
  int64_t num_parameters = 0;  // elements of the constant tensors (the weights)
  // Floating-point operations of one run: a multiply-add counts 2, other ops one per output
  // element.
  double flops = 0;
  // False where a run's data sets the shapes (control flow, NonZero of a computed value): the
  // counts above are then of the model as written, before folding, and `flops` is 0.
  bool flops_known = true;
};

// What the model file says of itself (ONNX's ModelProto fields): Session::metadata() gives
// it, Python's InferenceSession.get_modelmeta() as ONNX Runtime's ModelMetadata.
struct ModelMetadata {
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string description;        // the model's doc_string
  std::string graph_name;
  std::string graph_description;  // the graph's doc_string
  std::map<std::string, std::string> custom;  // metadata_props
};

}  // namespace collage
