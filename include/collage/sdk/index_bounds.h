// Index inputs of gathers and scatters, and the range the spec allows their values: a value
// outside it is an error (the reference kernels refuse it), but some engines read it as a
// zero instead. Such an engine is given a gather only where the indices are known good:
// constants checked here once, or graph inputs the session checks on every run.
#pragma once

#include <string>
#include <vector>

#include "collage/sdk/graph.h"
#include "collage/status.h"

namespace collage {

// One axis an index tensor addresses: every index value v must satisfy -extent <= v < extent.
// For GatherND / ScatterND, `component` names which entry of the last dim addresses it (-1:
// every value addresses the same axis).
struct IndexAxis {
  int64_t extent = 0;
  int component = -1;
};

// The axes the index input of `node` addresses, when it is a gather or scatter whose index
// range collage knows (Gather, GatherElements, ScatterElements, GatherND, ScatterND); empty
// otherwise. `index_input` is set to the node's input slot holding the indices.
std::vector<IndexAxis> IndexedAxes(const Graph& graph, const Node& node, size_t* index_input);

// OK when every value of the integer tensor `indices` lies in its axis's range; otherwise a
// message naming the value, its position and the range (the caller adds whose indices).
Status CheckIndexValues(const Tensor& indices, const std::vector<IndexAxis>& axes);

// A graph input whose values are indices of a gather or scatter.
struct IndexInputBound {
  size_t input = 0;  // position among the graph's inputs
  std::vector<IndexAxis> axes;
  std::string node;  // "Gather node 'x'", for messages
};
std::vector<IndexInputBound> IndexInputBounds(const Graph& graph);

}  // namespace collage
