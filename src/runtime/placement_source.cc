// The spellings of a PlacementSource (collage/placement_source.h).
#include "collage/placement_source.h"

#include <utility>

namespace collage {
namespace {

constexpr std::string_view kSingleBackendPrefix = "single-backend:";
constexpr std::string_view kWholeGraphPrefix = "whole-graph:";
constexpr std::string_view kOtherShapesName = "plan measured at other shapes";

// "openvino", "openvino bf16".
std::string BackendInPrecision(const PlacementSource& source) {
  return source.precision == Precision::kFloat32
             ? source.backend
             : source.backend + " " + PrecisionName(source.precision);
}

}  // namespace

std::string PlacementSourceName(const PlacementSource& source) {
  switch (source.kind) {
    case PlacementSource::Kind::kOpLevel: return "op-level";
    case PlacementSource::Kind::kTwoLevel: return "two-level";
    case PlacementSource::Kind::kSingleBackend:
      return std::string(kSingleBackendPrefix) + source.backend;
    case PlacementSource::Kind::kWholeGraph:
      return std::string(kWholeGraphPrefix) + BackendInPrecision(source);
    case PlacementSource::Kind::kOtherShapes: return std::string(kOtherShapesName);
  }
  return "?";
}

std::optional<PlacementSource> PlacementSourceNamed(std::string_view name) {
  if (name == "op-level") return PlacementSource::OpLevel();
  if (name == "two-level") return PlacementSource::TwoLevel();
  if (name == kOtherShapesName) return PlacementSource::OtherShapes();
  if (name.size() > kSingleBackendPrefix.size() &&
      name.substr(0, kSingleBackendPrefix.size()) == kSingleBackendPrefix) {
    return PlacementSource::SingleBackend(std::string(name.substr(kSingleBackendPrefix.size())));
  }
  if (name.size() > kWholeGraphPrefix.size() &&
      name.substr(0, kWholeGraphPrefix.size()) == kWholeGraphPrefix) {
    std::string_view backend = name.substr(kWholeGraphPrefix.size());
    Precision precision = Precision::kFloat32;
    if (const size_t space = backend.find(' '); space != std::string_view::npos) {
      const std::optional<Precision> named = PrecisionNamed(backend.substr(space + 1));
      if (!named.has_value() || space == 0) return std::nullopt;
      precision = *named;
      backend = backend.substr(0, space);
    }
    return PlacementSource::WholeGraph(std::string(backend), precision);
  }
  return std::nullopt;
}

std::string PlacementSourceLabel(const PlacementSource& source) {
  switch (source.kind) {
    case PlacementSource::Kind::kOpLevel: return "op-level plan";
    case PlacementSource::Kind::kTwoLevel: return "two-level plan";
    case PlacementSource::Kind::kSingleBackend: return source.backend + " alone";
    case PlacementSource::Kind::kWholeGraph:
      return BackendInPrecision(source) + "'s whole-graph group";
    case PlacementSource::Kind::kOtherShapes: return "a plan measured at other shapes";
  }
  return "?";
}

}  // namespace collage
