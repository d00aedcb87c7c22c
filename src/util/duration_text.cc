#include "collage/duration_text.h"

#include <cstdlib>

#include "collage/sdk/errors.h"

namespace collage {

StatusOr<double> ParseSeconds(const std::string& text, const std::string& what) {
  double scale = 1;
  std::string number = text;
  if (number.size() > 2 && number.compare(number.size() - 2, 2, "ms") == 0) {
    scale = 1e-3;
    number.resize(number.size() - 2);
  } else if (!number.empty() && (number.back() == 's' || number.back() == 'm')) {
    scale = number.back() == 'm' ? 60 : 1;
    number.pop_back();
  }
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !(value > 0) || value > 1e7) {
    return InvalidArgument("{} '{}': expected a positive time such as 120s, 2m or 500ms", what, text);
  }
  return value * scale;
}

}  // namespace collage
