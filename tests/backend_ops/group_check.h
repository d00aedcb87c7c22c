// What the differential harness needs to know about one candidate group: a signature to
// test repeated blocks once, its cost (to spread the tested groups across sizes), the
// tolerance its arithmetic deserves, random inputs, and the comparison with the oracle.
#pragma once

#include <string>
#include <vector>

#include "collage/sdk/backend.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/subgraph.h"
#include "cost/group_signature.h"  // signatures, tolerances and random inputs
#include "collage/normalized_error.h"   // the comparison with the oracle

namespace collage::backend_ops {

// Sum of the nodes' arithmetic (src/ops/flops.h).
double GroupFlops(const Graph& graph, const SubGraph& nodes);

// "float32[1x3x8x8], float32[4]" for a list of values.
std::string DescribeTypes(const Graph& graph, const std::vector<ValueId>& values);
// "Conv+Relu" for the group's op types in node order.
std::string DescribeOps(const Graph& graph, const SubGraph& nodes);

}  // namespace collage::backend_ops
