#include "pattern/pattern_text.h"

#include <cctype>
#include <string>
#include <vector>

#include "collage/sdk/errors.h"

namespace collage {
namespace {

// A hostile or mistaken plug-in must not exhaust the stack or the time of collage's start.
constexpr size_t kMaxPatternChars = 4096;
constexpr int kMaxPatternDepth = 32;

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == ':';
}

class PatternParser {
 public:
  explicit PatternParser(std::string_view text) : text_(text) {}

  StatusOr<Pattern> ParseAll() {
    COLLAGE_ASSIGN_OR_RETURN(Pattern pattern, ParsePattern(0));
    SkipSpaces();
    if (position_ != text_.size()) return Error("unexpected text");
    if (pattern.kind() != Pattern::Kind::kOp) {
      return InvalidArgument("pattern '{}' must be rooted at an op, such as Relu(any)", text_);
    }
    return pattern;
  }

 private:
  StatusOr<Pattern> ParsePattern(int depth) {
    if (depth > kMaxPatternDepth) return Error("nested deeper than 32 levels");
    COLLAGE_ASSIGN_OR_RETURN(Pattern term, ParseTerm(depth));
    if (Accept('?')) return Optional(std::move(term));
    return term;
  }

  StatusOr<Pattern> ParseTerm(int depth) {
    SkipSpaces();
    if (Accept('(')) {
      std::vector<Pattern> alternatives;
      do {
        COLLAGE_ASSIGN_OR_RETURN(Pattern alternative, ParsePattern(depth + 1));
        alternatives.push_back(std::move(alternative));
      } while (Accept('|'));
      if (!Accept(')')) return Error("expected '|' or ')'");
      if (alternatives.size() < 2) return Error("parentheses hold two or more alternatives");
      return Alt(std::move(alternatives));
    }
    std::string name = Name();
    if (name.empty()) return Error("expected 'any', 'const', an op type or '('");
    if (name == "any") return Any();
    if (name == "const") return Const();
    std::vector<std::string> op_types = {name};
    while (Accept('|')) {
      op_types.push_back(Name());
      if (op_types.back().empty()) return Error("expected an op type after '|'");
    }
    Pattern op = Op(std::move(op_types));
    if (!Accept('(')) return op;
    std::vector<Pattern> inputs;
    if (!Accept(')')) {
      do {
        COLLAGE_ASSIGN_OR_RETURN(Pattern input, ParsePattern(depth + 1));
        inputs.push_back(std::move(input));
      } while (Accept(','));
      if (!Accept(')')) return Error("expected ',' or ')'");
    }
    return op.WithInputs(std::move(inputs));
  }

  std::string Name() {
    SkipSpaces();
    const size_t start = position_;
    while (position_ < text_.size() && IsNameChar(text_[position_])) ++position_;
    return std::string(text_.substr(start, position_ - start));
  }

  bool Accept(char c) {
    SkipSpaces();
    if (position_ < text_.size() && text_[position_] == c) {
      ++position_;
      return true;
    }
    return false;
  }

  void SkipSpaces() {
    while (position_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[position_]))) {
      ++position_;
    }
  }

  Status Error(const char* what) const {
    return InvalidArgument("pattern '{}': {} at character {}", text_, what, position_ + 1);
  }

  std::string_view text_;
  size_t position_ = 0;
};

}  // namespace

StatusOr<Pattern> ParsePatternText(std::string_view text) {
  if (text.size() > kMaxPatternChars) {
    return InvalidArgument("pattern of {} characters: longer than {}", text.size(),
                           kMaxPatternChars);
  }
  return PatternParser(text).ParseAll();
}

}  // namespace collage
