// What a model is made of and what it costs: `collage info` prints it, Session::summary()
// and ExportZooModel (collage/zoo.h) give it.
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

}  // namespace collage
