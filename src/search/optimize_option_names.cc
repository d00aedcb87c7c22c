// The names of OptimizeOptions' choices (collage/optimize.h), as the command line, the JSON
// summary and Python spell them.
#include "collage/optimize.h"

namespace collage {
namespace {

// The choice named `name` among `choices`, by `name_of`.
template <typename Choice, typename NameOf>
std::optional<Choice> Named(std::string_view name, std::initializer_list<Choice> choices,
                            NameOf name_of) {
  for (Choice choice : choices) {
    if (name == name_of(choice)) return choice;
  }
  return std::nullopt;
}

}  // namespace

const char* PrecisionChoiceName(PrecisionChoice choice) {
  switch (choice) {
    case PrecisionChoice::kFloat32: return "fp32";
    case PrecisionChoice::kBfloat16: return "bf16";
    case PrecisionChoice::kAuto: return "auto";
  }
  return "?";
}

std::optional<PrecisionChoice> PrecisionChoiceNamed(std::string_view name) {
  return Named(name,
               {PrecisionChoice::kFloat32, PrecisionChoice::kBfloat16, PrecisionChoice::kAuto},
               PrecisionChoiceName);
}

const char* SearchKindName(SearchKind kind) {
  switch (kind) {
    case SearchKind::kOpLevel: return "op-level";
    case SearchKind::kTwoLevel: return "two-level";
  }
  return "?";
}

std::optional<SearchKind> SearchKindNamed(std::string_view name) {
  return Named(name, {SearchKind::kOpLevel, SearchKind::kTwoLevel}, SearchKindName);
}

PlacementSource SourceOf(SearchKind kind) {
  return kind == SearchKind::kTwoLevel ? PlacementSource::TwoLevel() : PlacementSource::OpLevel();
}

const char* CacheStateName(CacheState state) {
  switch (state) {
    case CacheState::kRun: return "run";
    case CacheState::kWarm: return "warm";
    case CacheState::kCold: return "cold";
  }
  return "?";
}

std::optional<CacheState> CacheStateNamed(std::string_view name) {
  return Named(name, {CacheState::kRun, CacheState::kWarm, CacheState::kCold}, CacheStateName);
}

}  // namespace collage
