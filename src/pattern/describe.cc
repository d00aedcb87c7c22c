// Rules and fusions as text, for `collage backends -v` and reports.
#include <fmt/format.h>

#include "collage/sdk/rule.h"

namespace collage {
namespace {

std::string DescribePattern(const Pattern& pattern) {
  const Pattern::Data& data = pattern.data();
  std::string text;
  switch (data.kind) {
    case Pattern::Kind::kAny: text = "any"; break;
    case Pattern::Kind::kConst: text = "const"; break;
    case Pattern::Kind::kOptional: return DescribePattern(data.children.front()) + "?";
    case Pattern::Kind::kAlt: {
      for (const Pattern& alternative : data.children) {
        text += (text.empty() ? "" : " | ") + DescribePattern(alternative);
      }
      return "(" + text + ")";
    }
    case Pattern::Kind::kOp: {
      text = data.op_types.size() == 1 ? data.op_types.front()
                                       : fmt::format("{}", fmt::join(data.op_types, "|"));
      if (data.op_types.size() > 6) {
        text = fmt::format("{}|...({} op types)", data.op_types.front(), data.op_types.size());
      }
      if (data.inputs_given) {
        std::string inputs;
        for (const Pattern& input : data.children) {
          inputs += (inputs.empty() ? "" : ", ") + DescribePattern(input);
        }
        text += "(" + inputs + ")";
      }
      break;
    }
  }
  size_t predicates = data.node_predicates.size() + data.value_predicates.size();
  if (predicates > 0) text += "[if]";
  return text;
}

// "" for float32 alone; else ", in fp32 and bf16" (or ", in bf16" only).
std::string DescribePrecisions(const std::vector<Precision>& precisions) {
  if (precisions.size() == 1 && precisions[0] == Precision::kFloat32) return "";
  std::string text;
  for (Precision p : precisions)
    text += (text.empty() ? "" : " and ") + std::string(PrecisionName(p));
  return ", in " + text;
}

}  // namespace

std::string Rule::Describe() const {
  std::string text = DescribePattern(pattern_);
  if (!constraints_.empty()) text += fmt::format(" where {} constraint(s)", constraints_.size());
  return text + DescribePrecisions(precisions_);
}

std::string Fusion::Describe() const {
  auto kinds = [](const std::vector<OpKind>& list) {
    std::string text;
    for (OpKind kind : list) text += (text.empty() ? "" : ", ") + std::string(OpKindName(kind));
    return "{" + text + "}";
  };
  std::string sizes = fmt::format("{}..{} ops", min_ops_, max_ops_);
  if (maximal_regions_) sizes = fmt::format("maximal convex regions of {}+ ops", min_ops_);
  if (narrow_span_parts_ > 0) {
    sizes = fmt::format("spans between narrow points, about {} and runs of them", narrow_span_parts_);
  }
  return fmt::format("fusion: seed {} grow {}, {}{}{}", kinds(seed_kinds_), kinds(grow_kinds_),
                     sizes, predicates_.empty() ? "" : " [if]", DescribePrecisions(precisions_));
}

}  // namespace collage
