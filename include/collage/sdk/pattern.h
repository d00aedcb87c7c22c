// The pattern language backends use to say what they can run (DESIGN.md 1.3):
//
//   Op("Relu")(Op("Conv")(Any(), Const(), Optional(Const())))
//
// A Pattern describes one value of the graph: produced by an op (Op), anything (Any), a
// constant (Const), one of several patterns (Alt), or an optional input that may be absent
// (Optional). Predicates on attributes, shapes and dtypes narrow any pattern. The root of a
// rule's pattern is always an Op pattern; its nodes become one candidate group.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "collage/tensor.h"
#include "collage/sdk/graph.h"

namespace collage {

using NodePredicate = std::function<bool(const Graph& graph, const Node& node)>;
using ValuePredicate = std::function<bool(const Graph& graph, ValueId value)>;

class Pattern {
 public:
  enum class Kind { kOp, kAny, kConst, kAlt, kOptional };

  Kind kind() const;

  // For an Op pattern: the same op with its inputs given, one pattern per node input. A node
  // with more inputs than patterns does not match (use Optional for trailing optional
  // inputs); an Op pattern never called this way accepts any inputs, all as boundary inputs.
  template <typename... Inputs>
  Pattern operator()(Inputs&&... inputs) const {
    return WithInputs(std::vector<Pattern>{std::forward<Inputs>(inputs)...});
  }
  Pattern WithInputs(std::vector<Pattern> inputs) const;

  // Narrowing predicates, each returns a new pattern.
  Pattern If(NodePredicate predicate) const;        // Op patterns: on the matched node
  Pattern IfValue(ValuePredicate predicate) const;  // any pattern: on the matched value
  Pattern WithDType(DType dtype) const;             // the matched value's dtype
  Pattern WithRank(int rank) const;                 // the matched value's rank
  // Op patterns: an int attribute equals `value` (absent attributes never match).
  Pattern WithAttr(const std::string& name, int64_t value) const;

  struct Data;
  const Data& data() const { return *data_; }

 private:
  friend Pattern Op(std::vector<std::string> op_types);
  friend Pattern Any();
  friend Pattern Const();
  friend Pattern Alt(std::vector<Pattern> alternatives);
  friend Pattern Optional(Pattern pattern);
  explicit Pattern(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  std::shared_ptr<const Data> data_;
};

// A node whose op type is one of `op_types`: of the default ONNX domain, or of another domain
// when written "domain::op" ("com.microsoft::QGemm").
Pattern Op(std::vector<std::string> op_types);
inline Pattern Op(std::initializer_list<std::string> op_types) {
  return Op(std::vector<std::string>(op_types));
}
inline Pattern Op(const std::string& op_type) { return Op(std::vector<std::string>{op_type}); }
// Any value; it becomes an input of the group.
Pattern Any();
// A value with constant data (a weight); it is compiled into the group's kernel.
Pattern Const();
// The first alternative that matches.
Pattern Alt(std::vector<Pattern> alternatives);
// An optional input: matches when the node has no such input (absent or past its last
// input) or when `pattern` matches it.
Pattern Optional(Pattern pattern);

struct Pattern::Data {
  Kind kind = Kind::kAny;
  std::vector<std::string> op_types;  // kOp
  bool inputs_given = false;          // kOp: false accepts any inputs
  std::vector<Pattern> children;      // kOp: input patterns; kAlt: alternatives; kOptional: one
  std::vector<NodePredicate> node_predicates;
  std::vector<ValuePredicate> value_predicates;
};

// One place where a rule's pattern matched. Op patterns and leaf patterns are numbered in
// pre-order (the root op first), so a rule's constraint can ask for "the node of the second
// op pattern" or "the value of the first Any/Const". Only the alternative an Alt took is
// numbered, at the Alt's place; an absent Optional is numbered as if present (-1 per Op,
// kNoValue per leaf; an Alt inside counts as its first alternative).
struct Match {
  const Graph* graph = nullptr;
  NodeId root = -1;
  std::vector<NodeId> op_nodes;   // per Op pattern in pre-order (the path taken through Alt)
  std::vector<ValueId> captures;  // per Any/Const leaf in pre-order; kNoValue when an
                                  // Optional input was absent

  const Node& node(size_t i) const { return graph->node(op_nodes[i]); }
  const Node& root_node() const { return graph->node(root); }
  // Type of captured value i (requires captures[i] != kNoValue).
  const TensorType& capture_type(size_t i) const { return graph->value(captures[i]).type; }
  bool has_capture(size_t i) const { return i < captures.size() && captures[i] != kNoValue; }
  // Type of the root node's first output.
  const TensorType& output_type() const { return graph->value(root_node().outputs[0]).type; }
};

}  // namespace collage
