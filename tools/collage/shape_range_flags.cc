#include "shape_range_flags.h"

#include <fmt/format.h>

#include "collage/shape_text.h"
#include "commands.h"

namespace collage::cli {

StatusOr<std::vector<ShapeRangeFlag>> ParseShapeRangeFlags(const std::vector<std::string>& flags) {
  std::vector<ShapeRangeFlag> parsed;
  for (const std::string& text : flags) {
    // Split at the last '=': tensor names may contain '=', shapes never do.
    const size_t eq = text.rfind('=');
    std::vector<std::string> parts;
    if (eq != std::string::npos && eq > 0) {
      const std::string dims = text.substr(eq + 1);
      for (size_t begin = 0;;) {
        const size_t colon = dims.find(':', begin);
        parts.push_back(dims.substr(begin, colon == std::string::npos ? colon : colon - begin));
        if (colon == std::string::npos) break;
        begin = colon + 1;
      }
    }
    if (parts.size() != 3) {
      return InvalidArgument(fmt::format(
          "--shape-range '{}': expected NAME=MIN:OPT:MAX, e.g. "
          "input=1x3x224x224:1x3x320x320:1x3x640x640 (the plan is measured at OPT)",
          text));
    }
    ShapeRangeFlag flag;
    flag.name = text.substr(0, eq);
    std::vector<Shape> shapes;
    for (const std::string& part : parts) {
      StatusOr<Shape> shape = ParseShape(part);
      if (!shape.ok()) return shape.status().WithContext("--shape-range '" + text + "'");
      shapes.push_back(*shape);
    }
    flag.range = ShapeRange{shapes[0], shapes[2]};
    flag.opt = shapes[1];
    Status valid = CheckShapeRange(flag.name, flag.range, flag.opt);
    if (!valid.ok()) return valid.WithContext("--shape-range '" + text + "'");
    for (const ShapeRangeFlag& earlier : parsed) {
      if (earlier.name == flag.name && earlier.opt == flag.opt) {
        return InvalidArgument(fmt::format(
            "--shape-range gives input '{}' two ranges measured at {}: one plan per measured shape",
            flag.name, ShapeToString(flag.opt)));
      }
    }
    parsed.push_back(std::move(flag));
  }
  return parsed;
}

std::vector<std::string> MeasuredShapeFlags(const std::vector<ShapeRangeFlag>& flags) {
  std::vector<std::string> measured;
  for (const ShapeRangeFlag& flag : flags) measured.push_back(flag.name + "=" + ShapeToString(flag.opt));
  return measured;
}

InputShapeRanges DeclaredRanges(const std::vector<ShapeRangeFlag>& flags,
                                const std::map<std::string, Shape>& shapes) {
  InputShapeRanges declared;
  for (const ShapeRangeFlag& flag : flags) {
    auto shape = shapes.find(flag.name);
    if (shape != shapes.end() && shape->second == flag.opt) declared[flag.name] = flag.range;
  }
  return declared;
}

}  // namespace collage::cli
