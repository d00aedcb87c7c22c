// `collage optimize --shape-range NAME=MIN:OPT:MAX`: a shape profile as TensorRT's min/opt/max
// gives one. The plan is measured at OPT and declared for every shape from MIN to MAX, dim by
// dim: a run within it uses the plan's placement as made for it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collage/shape_range.h"
#include "collage/status.h"

namespace collage::cli {

struct ShapeRangeFlag {
  std::string name;
  Shape opt;  // measured at
  ShapeRange range;
};

// Parses the flags, checking each range holds its OPT; one input's OPT may be given once.
StatusOr<std::vector<ShapeRangeFlag>> ParseShapeRangeFlags(const std::vector<std::string>& flags);
// As --shape flags: "NAME=OPT" for each.
std::vector<std::string> MeasuredShapeFlags(const std::vector<ShapeRangeFlag>& flags);
// The ranges declared for a plan measured at `shapes`: those whose input is at their OPT.
InputShapeRanges DeclaredRanges(const std::vector<ShapeRangeFlag>& flags,
                                const std::map<std::string, Shape>& shapes);

}  // namespace collage::cli
