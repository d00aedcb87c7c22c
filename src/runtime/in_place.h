// Which groups of a placement need no kernel because their output can share bytes with other
// values: a view (Reshape, Flatten, Squeeze, Unsqueeze, Identity: the same dense row-major
// bytes under a new shape) and a Concat whose inputs can be written straight into their slices
// of its output, and a Split whose outputs are dense slices of its input. The executable
// decides the layouts; these only read the graph.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "runtime/placement.h"

namespace collage {

// The data input of `group` when it is a single view node whose output has the same dtype and
// byte count as that input, which is computed (not a constant: constants are baked into the
// kernels that read them and have no arena buffer to alias).
std::optional<ValueId> ViewSource(const Graph& graph, const PlacedGroup& group);

// The byte offset of each output of `group` in its input when the group is a single Split
// node whose outputs are dense blocks of its input at kArenaAlignment-aligned offsets (all dims
// before the axis are 1): they can then be read where they lie.
std::optional<std::vector<size_t>> SplitSliceOffsets(const Graph& graph, const PlacedGroup& group);

// Where a value is written when its producer writes it into a Concat's output.
struct ConcatSlice {
  ValueId concat_output = kNoValue;
  size_t offset = 0;  // bytes from the start of the Concat's output
};

// The Concats planned to run in place: by group index, and each of their inputs' slice.
struct InPlaceConcats {
  std::set<size_t> groups;
  std::map<ValueId, ConcatSlice> slice_of;
};

// A Concat group (one node) is planned in place when every input's part of the output is one
// dense block at a kArenaAlignment-aligned offset (all dims before the axis are 1), and every
// input is computed by an earlier group that is neither a view nor a Concat planned in place,
// appears once among the Concat's inputs, has bytes, and is no other Concat's slice already.
// The executable still falls back to a step when a producer writes a non-plain layout.
InPlaceConcats PlanInPlaceConcats(const Graph& graph, const Placement& placement);

}  // namespace collage
