// Graph IR: values and nodes, nodes kept in topological order. Every value has a static
// TensorType once the frontend is done; constants (weights, folded shape arithmetic) are
// values that carry their data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collage/status.h"
#include "collage/tensor.h"
#include "collage/sdk/attribute.h"

namespace collage {

using ValueId = int32_t;
using NodeId = int32_t;
// An absent optional input (ONNX's empty input name).
inline constexpr ValueId kNoValue = -1;

struct TensorType {
  DType dtype = DType::kUndefined;
  Shape shape;  // a dim < 0 is unknown; after import every shape is static

  bool is_static() const;
  int64_t num_elements() const { return NumElements(shape); }
  size_t nbytes() const { return static_cast<size_t>(num_elements()) * DTypeSize(dtype); }
  std::string ToString() const;  // "float32[1x3x224x224]"
  bool operator==(const TensorType& other) const = default;
};

struct Value {
  std::string name;
  TensorType type;
  std::optional<Tensor> constant;  // set for weights and folded constants
  NodeId producer = -1;            // -1 for graph inputs and constants
  std::vector<NodeId> consumers;   // maintained by Graph (one entry per use)

  bool is_constant() const { return constant.has_value(); }
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  Attributes attributes;
  std::vector<ValueId> inputs;   // kNoValue for an absent optional input
  std::vector<ValueId> outputs;  // kNoValue for an unused optional output
};

class Graph {
 public:
  ValueId AddValue(std::string name, TensorType type);
  ValueId AddConstant(std::string name, Tensor data);
  // Appends a node; its inputs must already exist (so nodes stay topologically ordered),
  // its outputs must have no producer yet.
  StatusOr<NodeId> AddNode(Node node);
  void AddInput(ValueId id) { inputs_.push_back(id); }
  void AddOutput(ValueId id) { outputs_.push_back(id); }

  const Value& value(ValueId id) const { return values_[static_cast<size_t>(id)]; }
  Value& mutable_value(ValueId id) { return values_[static_cast<size_t>(id)]; }
  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  Node& mutable_node(NodeId id) { return nodes_[static_cast<size_t>(id)]; }
  int32_t num_values() const { return static_cast<int32_t>(values_.size()); }
  int32_t num_nodes() const { return static_cast<int32_t>(nodes_.size()); }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  std::vector<ValueId>& mutable_outputs() { return outputs_; }

  // Value by name; nullopt when there is none.
  std::optional<ValueId> FindValue(const std::string& name) const;
  // A name not used by any value yet, starting with `prefix`.
  std::string UniqueName(const std::string& prefix);

  // Default-domain opset the model was written for (drives op semantics, e.g. Split, Squeeze).
  int64_t opset() const { return opset_; }
  void set_opset(int64_t opset) { opset_ = opset; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Removes nodes none of whose outputs reach a graph output, and values nothing uses.
  // Renumbers ids; graph inputs are always kept.
  void RemoveDeadCode();
  // Checks the invariants: ids in range, topological order, producers/consumers consistent,
  // every non-constant value produced exactly once or a graph input, types static.
  Status Validate() const;

  // Total elements held by constants (the model's parameters).
  int64_t NumParameters() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::unordered_map<std::string, ValueId> by_name_;
  int64_t opset_ = 17;
  std::string name_ = "graph";
  int64_t unique_counter_ = 0;
};

}  // namespace collage
