#include "collage/sdk/pattern.h"

#include <cstdio>
#include <cstdlib>

namespace collage {
namespace {

std::shared_ptr<Pattern::Data> CopyData(const Pattern::Data& data) {
  return std::make_shared<Pattern::Data>(data);
}

// Pattern construction happens while a backend builds its rule set: misuse is a defect in the
// backend's source, reported at once rather than turned into a rule that silently never matches.
[[noreturn]] void PatternMisuse(const char* what) {
  std::fprintf(stderr, "collage: pattern misuse: %s\n", what);
  std::abort();
}

}  // namespace

Pattern::Kind Pattern::kind() const { return data_->kind; }

Pattern Pattern::WithInputs(std::vector<Pattern> inputs) const {
  if (data_->kind != Kind::kOp) PatternMisuse("only an Op pattern takes input patterns");
  auto data = CopyData(*data_);
  data->inputs_given = true;
  data->children = std::move(inputs);
  return Pattern(std::move(data));
}

Pattern Pattern::If(NodePredicate predicate) const {
  auto data = CopyData(*data_);
  data->node_predicates.push_back(std::move(predicate));
  return Pattern(std::move(data));
}

Pattern Pattern::IfValue(ValuePredicate predicate) const {
  auto data = CopyData(*data_);
  data->value_predicates.push_back(std::move(predicate));
  return Pattern(std::move(data));
}

Pattern Pattern::WithDType(DType dtype) const {
  return IfValue([dtype](const Graph& graph, ValueId value) {
    return graph.value(value).type.dtype == dtype;
  });
}

Pattern Pattern::WithRank(int rank) const {
  return IfValue([rank](const Graph& graph, ValueId value) {
    return graph.value(value).type.shape.size() == static_cast<size_t>(rank);
  });
}

Pattern Pattern::WithAttr(const std::string& name, int64_t value) const {
  return If([name, value](const Graph&, const Node& node) {
    const Attribute* attribute = node.attributes.Find(name);
    if (attribute == nullptr) return false;
    const int64_t* stored = std::get_if<int64_t>(attribute);
    return stored != nullptr && *stored == value;
  });
}

Pattern Op(std::vector<std::string> op_types) {
  if (op_types.empty()) PatternMisuse("Op() needs at least one op type");
  auto data = std::make_shared<Pattern::Data>();
  data->kind = Pattern::Kind::kOp;
  data->op_types = std::move(op_types);
  return Pattern(std::move(data));
}

Pattern Any() {
  auto data = std::make_shared<Pattern::Data>();
  data->kind = Pattern::Kind::kAny;
  return Pattern(std::move(data));
}

Pattern Const() {
  auto data = std::make_shared<Pattern::Data>();
  data->kind = Pattern::Kind::kConst;
  return Pattern(std::move(data));
}

Pattern Alt(std::vector<Pattern> alternatives) {
  if (alternatives.empty()) PatternMisuse("Alt() needs at least one alternative");
  auto data = std::make_shared<Pattern::Data>();
  data->kind = Pattern::Kind::kAlt;
  data->children = std::move(alternatives);
  return Pattern(std::move(data));
}

Pattern Optional(Pattern pattern) {
  auto data = std::make_shared<Pattern::Data>();
  data->kind = Pattern::Kind::kOptional;
  data->children.push_back(std::move(pattern));
  return Pattern(std::move(data));
}

}  // namespace collage
