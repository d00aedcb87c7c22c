// Shapes as people type them (`--shape input=1x3x224x224`), for SessionOptions::input_shapes.
#pragma once

#include <map>
#include <string>

#include "collage/status.h"
#include "collage/tensor.h"

namespace collage {

// Parses "1x3x224x224" (also "1,3,224,224"); error on anything else.
StatusOr<Shape> ParseShape(const std::string& text);
// Parses "name=1x3x224x224" into `shapes`.
Status ParseShapeOverride(const std::string& text, std::map<std::string, Shape>& shapes);

}  // namespace collage
