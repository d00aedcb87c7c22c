// The names of OptimizeOptions::precision (collage/optimize.h), as the command line and
// Python spell them.
#include "collage/optimize.h"

namespace collage {

const char* PrecisionChoiceName(PrecisionChoice choice) {
  switch (choice) {
    case PrecisionChoice::kFloat32: return "fp32";
    case PrecisionChoice::kBfloat16: return "bf16";
    case PrecisionChoice::kAuto: return "auto";
  }
  return "?";
}

std::optional<PrecisionChoice> PrecisionChoiceNamed(std::string_view name) {
  for (PrecisionChoice choice :
       {PrecisionChoice::kFloat32, PrecisionChoice::kBfloat16, PrecisionChoice::kAuto}) {
    if (name == PrecisionChoiceName(choice)) return choice;
  }
  return std::nullopt;
}

}  // namespace collage
