// ParseShape and ParseShapeOverride (declared in collage/shape_text.h): the text of --shape flags.
#include <charconv>

#include "collage/shape_text.h"
#include "collage/sdk/errors.h"

namespace collage {

namespace {

std::string Trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  const size_t end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

}  // namespace

StatusOr<Shape> ParseShape(const std::string& text) {
  const std::string s = Trim(text);
  // "scalar" is how ShapeToString prints rank 0, so accept it back.
  if (s == "scalar") return Shape{};
  const bool has_x = s.find('x') != std::string::npos;
  const bool has_comma = s.find(',') != std::string::npos;
  if (s.empty() || (has_x && has_comma)) {
    return InvalidArgument("'{}' is not a shape (expected dims like 1x3x224x224 or 1,3,224,224)",
                           text);
  }
  const char separator = has_comma ? ',' : 'x';
  Shape shape;
  size_t pos = 0;
  for (;;) {
    const size_t next = s.find(separator, pos);
    const std::string part =
        Trim(s.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    int64_t dim = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), dim);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || dim < 0) {
      return InvalidArgument(
          "'{}' is not a shape: '{}' is not a non-negative integer dim "
          "(expected dims like 1x3x224x224)",
          text, part);
    }
    shape.push_back(dim);
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return shape;
}

Status ParseShapeOverride(const std::string& text, std::map<std::string, Shape>& shapes) {
  // Split at the last '=': tensor names may contain '=', shapes never do.
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument(
        "'{}' is not a shape override (expected NAME=DIMS, e.g. "
        "input=1x3x224x224)",
        text);
  }
  const std::string name = text.substr(0, eq);
  auto shape = ParseShape(text.substr(eq + 1));
  if (!shape.ok()) return shape.status().WithContext("shape override '" + text + "'");
  if (shapes.count(name)) {
    return InvalidArgument("the shape of input '{}' is given twice", name);
  }
  shapes[name] = std::move(shape).value();
  return Status::Ok();
}

}  // namespace collage
