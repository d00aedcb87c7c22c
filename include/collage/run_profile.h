// What one run's profile records (Session::Run with a RunProfile): the time of each step.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "collage/precision.h"

namespace collage {

// What a step of a run is: one placed group's kernel, or a layout conversion between two.
enum class StepKind : unsigned char { kGroup, kLayoutConversion };

// Time spent in each step of one run, in execution order (filled by Run when requested).
// A step is one kernel: a group of nodes on one backend, or a layout conversion. A group that
// runs no kernel (a view, a Concat or Split done in place) is listed too, with 0 ms and
// `elided`.
struct NodeTiming {
  std::string node_name;  // the group's first node (the converted value for a conversion)
  std::string op_type;    // the group's op types joined by '+' ("LayoutConversion": a conversion)
  double milliseconds = 0;
  std::string backend;
  std::string rule;       // for a conversion: "from->to", for readers
  double start_ms = 0;    // when the step started, from the start of the run
  std::string elided;     // "view", "concat in place", "split in place": no kernel ran
  Precision precision = Precision::kFloat32;  // the group's (collage/precision.h)
  StepKind kind = StepKind::kGroup;
  int group = -1;  // a group's index among the placement's groups; -1 for a conversion
  // A conversion's layouts (Layout::name(), e.g. "plain", "nChw16c"); empty for a group.
  std::string from_layout;
  std::string to_layout;
};
struct RunProfile {
  std::vector<NodeTiming> nodes;
};

inline bool IsConversion(const NodeTiming& step) {
  return step.kind == StepKind::kLayoutConversion;
}

// The step of a conversion of value `value_name` from layout `from` to `to`, run by `backend`.
inline NodeTiming ConversionStep(std::string value_name, std::string backend, std::string from,
                                 std::string to, double milliseconds = 0) {
  NodeTiming step;
  step.node_name = std::move(value_name);
  step.op_type = "LayoutConversion";
  step.milliseconds = milliseconds;
  step.backend = std::move(backend);
  step.rule = from + "->" + to;
  step.kind = StepKind::kLayoutConversion;
  step.from_layout = std::move(from);
  step.to_layout = std::move(to);
  return step;
}

}  // namespace collage
