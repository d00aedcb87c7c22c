// GraphBuilder: writes Graphs in C++ (the zoo, tests). Every node's output types are
// inferred the moment it is added, with the op registry's own inference, so a model that
// builds is a model every later stage can type.
//
// Errors are sticky: the first failing call records its Status, later calls do nothing and
// return kNoValue, and Build() returns that Status. Model code can then read like the
// network it describes, without a check after every line:
//
//   GraphBuilder b("tiny");
//   ValueId x = b.Input("input", DType::kFloat32, {1, 3, 224, 224});
//   ValueId w = b.RandomNormal("conv1.weight", {64, 3, 7, 7}, 0.05f);
//   ValueId y = b.Node("Conv", {x, w}, {{"strides", {2, 2}}, {"pads", {3, 3, 3, 3}}}, "conv1");
//   b.Output(y, "features");
//   StatusOr<Graph> graph = std::move(b).Build();
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "collage/sdk/attribute.h"
#include "collage/sdk/graph.h"
#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

class OpRegistry;

// One attribute of a node being built. The extra constructors let call sites write
// {"pads", {1, 1, 1, 1}} or {"axis", 1} instead of spelling out the vector / int64_t.
struct NamedAttribute {
  NamedAttribute(std::string n, Attribute v) : name(std::move(n)), value(std::move(v)) {}
  NamedAttribute(std::string n, std::initializer_list<int64_t> ints)
      : name(std::move(n)), value(std::vector<int64_t>(ints)) {}
  NamedAttribute(std::string n, int v) : name(std::move(n)), value(static_cast<int64_t>(v)) {}
  NamedAttribute(std::string n, int64_t v) : name(std::move(n)), value(v) {}
  NamedAttribute(std::string n, float v) : name(std::move(n)), value(v) {}
  NamedAttribute(std::string n, double v) : name(std::move(n)), value(static_cast<float>(v)) {}
  NamedAttribute(std::string n, const char* v) : name(std::move(n)), value(std::string(v)) {}

  std::string name;
  Attribute value;
};
using NamedAttributes = std::vector<NamedAttribute>;

class GraphBuilder {
 public:
  // `seed` drives every random constant; `registry` (default: the global one) types nodes.
  explicit GraphBuilder(std::string graph_name = "graph", int64_t opset = 17, uint64_t seed = 0,
                        const OpRegistry* registry = nullptr);

  // --- Graph inputs and constants -------------------------------------------------------
  ValueId Input(const std::string& name, DType dtype, Shape shape);
  // `name` is prefixed with the current scope; it is made unique if already used.
  ValueId Constant(const std::string& name, Tensor data);
  template <typename T>
  ValueId Constant(const std::string& name, Shape shape, const std::vector<T>& values) {
    if (static_cast<int64_t>(values.size()) != NumElements(shape)) {
      return Fail(Status(StatusCode::kInvalidArgument,
                         "constant '" + name + "': " + std::to_string(values.size()) +
                             " values for shape " + ShapeToString(shape)));
    }
    return Constant(name, Tensor::FromVector<T>(std::move(shape), values));
  }
  template <typename T>
  ValueId Scalar(const std::string& name, T value) { return Constant(name, Tensor::Scalar<T>(value)); }
  // 1-D int64 constant (shapes, axes, perms).
  ValueId Ints(const std::string& name, const std::vector<int64_t>& values);

  // float32 constants with random elements. Each constant's stream is derived from the
  // builder's seed and the constant's full name, so the data does not depend on the order
  // constants are made in, nor on the number of threads generating it.
  ValueId RandomNormal(const std::string& name, Shape shape, float stddev, float mean = 0.0f);
  ValueId RandomUniform(const std::string& name, Shape shape, float low, float high);

  // --- Nodes -----------------------------------------------------------------------------
  // Adds a single-output node and returns its output. `name` (scope-prefixed) names the
  // node and its output value; empty picks "<scope>.<op type in lower case>".
  ValueId Node(const std::string& op_type, const std::vector<ValueId>& inputs,
               const NamedAttributes& attributes = {}, const std::string& name = "");
  // Adds a node with `num_outputs` outputs ("<name>:0", "<name>:1", ...).
  std::vector<ValueId> NodeMulti(const std::string& op_type, const std::vector<ValueId>& inputs,
                                 int num_outputs, const NamedAttributes& attributes = {},
                                 const std::string& name = "", const std::string& domain = "");

  // Marks a graph output; a non-empty `name` renames the value (must not be taken).
  void Output(ValueId value, const std::string& name = "");

  // --- Names -----------------------------------------------------------------------------
  // Scopes prefix node and constant names: within PushScope("layer1.0"), Node(..., "conv1")
  // is named "layer1.0.conv1". Scopes nest.
  void PushScope(const std::string& scope);
  void PopScope();
  class ScopeGuard {
   public:
    ScopeGuard(GraphBuilder& builder, const std::string& scope) : builder_(builder) {
      builder_.PushScope(scope);
    }
    ~ScopeGuard() { builder_.PopScope(); }
    ScopeGuard(const ScopeGuard&) = delete;
    ScopeGuard& operator=(const ScopeGuard&) = delete;

   private:
    GraphBuilder& builder_;
  };
  ScopeGuard Scope(const std::string& scope) { return ScopeGuard(*this, scope); }

  // --- State -----------------------------------------------------------------------------
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  const TensorType& type(ValueId value) const { return graph_.value(value).type; }
  const Shape& shape(ValueId value) const { return graph_.value(value).type.shape; }
  // Dim `axis` (negative counts from the back) of a value; 0 once the builder has failed
  // (the value may then be kNoValue), so model code can go on until Build() reports.
  int64_t dim(ValueId value, int64_t axis) const {
    if (value < 0 || value >= graph_.num_values()) return 0;
    const Shape& s = shape(value);
    const int64_t rank = static_cast<int64_t>(s.size());
    const int64_t a = axis < 0 ? axis + rank : axis;
    return a >= 0 && a < rank ? s[static_cast<size_t>(a)] : 0;
  }
  const Graph& graph() const { return graph_; }

  // Validates and returns the graph, or the first error any call met.
  StatusOr<Graph> Build() &&;

 private:
  ValueId Fail(Status status);
  std::string Scoped(const std::string& name) const;
  std::string UniqueNodeName(const std::string& base);
  uint64_t StreamSeed(const std::string& full_name) const;

  Graph graph_;
  const OpRegistry* registry_;
  uint64_t seed_;
  Status status_;
  std::vector<std::string> scopes_;
  std::unordered_set<std::string> node_names_;
  std::unordered_map<std::string, int> next_suffix_;      // last suffix UniqueNodeName gave a base
  std::vector<std::pair<ValueId, std::string>> renames_;  // graph outputs named by Output()
};

}  // namespace collage
