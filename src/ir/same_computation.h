// Whether two nodes compute the same values: the same op of the same domain, over the same
// inputs, with equal attributes, and not an op that draws random numbers. The graph
// simplification keeps the first of such nodes and lets the other's readers read it (common
// subexpressions: a NASNet cell's branches each apply their own ReLU to one input, and two
// of its branches pool the same input the same way).
#pragma once

#include <string>

#include "collage/sdk/graph.h"

namespace collage {

// Nodes with the same computation have the same key (op, domain and inputs); nodes with the
// same key may still differ in their attributes.
std::string ComputationKey(const Node& node);

// `a` and `b` compute the same values: same key, equal attributes, the same number of
// outputs, and a deterministic op. `b`'s present outputs must be present in `a` too.
bool SameComputation(const Node& a, const Node& b);

}  // namespace collage
