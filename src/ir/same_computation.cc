#include "ir/same_computation.h"

#include <cstring>
#include <variant>

namespace collage {

namespace {

// Ops whose outputs are drawn at random: two of them over the same inputs are two draws.
bool DrawsRandomNumbers(const Node& node) {
  return node.op_type.rfind("Random", 0) == 0 || node.op_type == "Bernoulli" ||
         node.op_type == "Multinomial";
}

bool SameTensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0);
}

bool SameAttribute(const Attribute& a, const Attribute& b) {
  if (a.index() != b.index()) return false;
  if (const auto* t = std::get_if<Tensor>(&a)) return SameTensor(*t, std::get<Tensor>(b));
  return std::visit(
      [&b](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          return false;  // handled above
        } else {
          return value == std::get<T>(b);
        }
      },
      a);
}

}  // namespace

std::string ComputationKey(const Node& node) {
  std::string key = node.domain + "::" + node.op_type;
  for (ValueId in : node.inputs) key += "," + std::to_string(in);
  return key;
}

bool SameComputation(const Node& a, const Node& b) {
  if (a.op_type != b.op_type || a.domain != b.domain || a.inputs != b.inputs ||
      a.outputs.size() != b.outputs.size() || DrawsRandomNumbers(a)) {
    return false;
  }
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    if (b.outputs[i] != kNoValue && a.outputs[i] == kNoValue) return false;
  }
  const auto& x = a.attributes.all();
  const auto& y = b.attributes.all();
  if (x.size() != y.size()) return false;
  for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j) {
    if (i->first != j->first || !SameAttribute(i->second, j->second)) return false;
  }
  return true;
}

}  // namespace collage
