// Ops defined as functions of other ops are run as their bodies: the ONNX functions libonnx's
// schemas define (the loss functions, the window functions, Celu, ...) for ops collage has no
// kernel for, and the functions a model defines itself (ModelProto.functions, which exporters
// write for their own composite ops). The importer replaces such a node by the body's nodes,
// placed and run like any other.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collage/sdk/graph.h"
#include "collage/status.h"
#include "collage/tensor.h"

namespace onnx {
class FunctionProto;
class ModelProto;
class NodeProto;
}  // namespace onnx

namespace collage {

class FunctionExpander {
 public:
  // `opset`: the default-domain opset the model's nodes are read at.
  FunctionExpander(const onnx::ModelProto& model, int64_t opset);

  // Whether `node`'s op has a body: a function of the model, or an ONNX function at the opset.
  bool HasBody(const onnx::NodeProto& node) const;

  // How many nodes `node` becomes once the model's functions it calls are expanded, all the
  // way down (an ONNX function's body counts as one node: those are small and call no model
  // function). nullopt above `limit`, or for a model function that calls itself.
  std::optional<int64_t> ExpandedSize(const onnx::NodeProto& node, int64_t limit) const;

  // The body of `node` as nodes of the calling graph: the function's formal inputs and
  // outputs replaced by the node's, attribute references by the node's attributes (or the
  // function's defaults), and every value internal to the body renamed to a fresh name
  // "<node_name>/<value>" (`taken` says which names the graph already uses). `input_types`
  // are the node's input types (absent inputs: TensorType{}); a context-dependent ONNX
  // function builds its body from them. Unsupported when the body reads ops at another opset
  // whose definition changed since, naming them.
  StatusOr<std::vector<onnx::NodeProto>> Expand(
      const onnx::NodeProto& node, const std::string& node_name,
      const std::vector<TensorType>& input_types,
      const std::function<bool(const std::string&)>& taken) const;

 private:
  struct Body;
  StatusOr<Body> BodyOf(const onnx::NodeProto& node,
                        const std::vector<TensorType>& input_types) const;

  int64_t opset_;
  // (domain, name) → the model's own function.
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> local_;
  // ExpandedSize of each model function computed so far (-1: being computed, a cycle).
  mutable std::map<std::pair<std::string, std::string>, int64_t> sizes_;
};

}  // namespace collage
