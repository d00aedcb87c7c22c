// What produced a placement: one of the searches, or one backend by itself. The finalists of
// the end-to-end decision, the plans calibration runs, a saved plan and a session's current
// placement each carry one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "collage/precision.h"

namespace collage {

struct PlacementSource {
  enum class Kind : unsigned char {
    kOpLevel,        // the op-level search (dynamic programming over measured groups)
    kTwoLevel,       // the graph-level (evolutionary) search over whole plans
    kSingleBackend,  // one backend's rules where they match, the reference kernels elsewhere
    kWholeGraph,     // one backend's group that is the whole model
    kOtherShapes,    // a loaded plan's placement at input shapes other than it was measured at
  };
  Kind kind = Kind::kOpLevel;
  std::string backend;  // kSingleBackend and kWholeGraph: whose; empty otherwise
  // kWholeGraph: the group's precision (a backend alone computes in float32).
  Precision precision = Precision::kFloat32;

  static PlacementSource OpLevel() { return {Kind::kOpLevel, "", Precision::kFloat32}; }
  static PlacementSource TwoLevel() { return {Kind::kTwoLevel, "", Precision::kFloat32}; }
  static PlacementSource SingleBackend(std::string backend) {
    return {Kind::kSingleBackend, std::move(backend), Precision::kFloat32};
  }
  static PlacementSource WholeGraph(std::string backend, Precision precision) {
    return {Kind::kWholeGraph, std::move(backend), precision};
  }
  static PlacementSource OtherShapes() { return {Kind::kOtherShapes, "", Precision::kFloat32}; }
  bool is_search() const { return kind == Kind::kOpLevel || kind == Kind::kTwoLevel; }
  friend bool operator==(const PlacementSource&, const PlacementSource&) = default;
};

// As plan files, the JSON summary and Python spell it: "op-level", "two-level",
// "single-backend:onednn", "whole-graph:openvino", "whole-graph:openvino bf16", "plan measured
// at other shapes".
std::string PlacementSourceName(const PlacementSource& source);
// The spelling above read back (a plan file's "search"); none for other text.
std::optional<PlacementSource> PlacementSourceNamed(std::string_view name);
// For a reader: "op-level plan", "two-level plan", "onednn alone", "openvino bf16's whole-graph
// group".
std::string PlacementSourceLabel(const PlacementSource& source);

}  // namespace collage
