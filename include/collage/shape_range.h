// The input shapes a plan is declared for beyond the ones it was measured at: a shape profile
// (`collage optimize --shape-range NAME=MIN:OPT:MAX`, as TensorRT's min/opt/max profiles and
// OpenVINO's dimension bounds give them), bounding each dim of an input.
#pragma once

#include <map>
#include <string>

#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

struct ShapeRange {
  Shape min;  // the least of each dim
  Shape max;  // the greatest; min and max have one rank
};
// Per input name.
using InputShapeRanges = std::map<std::string, ShapeRange>;

// Whether `shape` has the range's rank and every dim within its bounds.
bool WithinRange(const ShapeRange& range, const Shape& shape);
// Checks a range: equal ranks, min <= max in every dim, and `measured` (the shape a plan is
// measured at) within it. `name` names the input in the error.
Status CheckShapeRange(const std::string& name, const ShapeRange& range, const Shape& measured);
// "1x3x224x224..1x3x640x640".
std::string ShapeRangeText(const ShapeRange& range);

}  // namespace collage
