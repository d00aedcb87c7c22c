// What one run's profile records (Session::Run with a RunProfile): the time of each step.
#pragma once

#include <string>
#include <vector>

#include "collage/precision.h"

namespace collage {

// Time spent in each step of one run, in execution order (filled by Run when requested).
// A step is one kernel: a group of nodes on one backend, or a layout conversion. A group that
// runs no kernel (a view, a Concat or Split done in place) is listed too, with 0 ms and
// `elided`.
struct NodeTiming {
  std::string node_name;  // the group's first node (the converted value for a conversion)
  std::string op_type;    // the group's op types joined by '+', or "LayoutConversion"
  double milliseconds = 0;
  std::string backend;
  std::string rule;       // for a conversion: "from->to"
  double start_ms = 0;    // when the step started, from the start of the run
  std::string elided;     // "view", "concat in place", "split in place": no kernel ran
  Precision precision = Precision::kFloat32;  // the group's (collage/precision.h)
};
struct RunProfile {
  std::vector<NodeTiming> nodes;
};

// A layout conversion's step (the executable names them so); every other step is a group.
inline bool IsConversion(const NodeTiming& step) { return step.op_type == "LayoutConversion"; }

}  // namespace collage
