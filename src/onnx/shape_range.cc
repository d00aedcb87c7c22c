// Shape ranges (declared in collage/shape_range.h): the bounds a plan's shape profile gives.
#include "collage/shape_range.h"

#include "collage/sdk/errors.h"

namespace collage {

bool WithinRange(const ShapeRange& range, const Shape& shape) {
  if (shape.size() != range.min.size() || shape.size() != range.max.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < range.min[d] || shape[d] > range.max[d]) return false;
  }
  return true;
}

Status CheckShapeRange(const std::string& name, const ShapeRange& range, const Shape& measured) {
  if (range.min.size() != range.max.size()) {
    return InvalidArgument("the shape range of input '{}' has a minimum of rank {} and a maximum "
                           "of rank {}",
                           name, range.min.size(), range.max.size());
  }
  for (size_t d = 0; d < range.min.size(); ++d) {
    if (range.min[d] < 0 || range.min[d] > range.max[d]) {
      return InvalidArgument("the shape range of input '{}' ({}) has dim {} from {} to {}", name,
                             ShapeRangeText(range), d, range.min[d], range.max[d]);
    }
  }
  if (!WithinRange(range, measured)) {
    return InvalidArgument("the shape range of input '{}' ({}) does not hold its measured shape {}",
                           name, ShapeRangeText(range), ShapeToString(measured));
  }
  return Status();
}

std::string ShapeRangeText(const ShapeRange& range) {
  return ShapeToString(range.min) + ".." + ShapeToString(range.max);
}

}  // namespace collage
