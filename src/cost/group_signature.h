// What measuring a candidate group needs to know about it, shared by the cost measurement and
// the differential harness: a signature that is equal for groups a backend compiles the same
// way (so repeated blocks are measured once), the tolerance its arithmetic deserves against
// the reference kernels, and random inputs that keep every op inside its domain.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "collage/sdk/backend.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/subgraph.h"

namespace collage {

// Equal for two groups that a backend compiles the same way: op types and domains,
// attributes, how the nodes connect, the types of inputs and outputs, which inputs are
// constants (with the data of scalars and small integer constants: shapes, axes, clip
// bounds), and the graph's opset. Weights' values are left out.
std::string GroupSignature(const Graph& graph, const SubGraph& nodes);

// The longest sum any output element of the group accumulates (Conv: input channels per
// group × kernel size; MatMul/Gemm: K; pooling: the window; reductions: the reduced count).
int64_t LongestReduction(const Graph& graph, const SubGraph& nodes);

// Tolerance on the normalized error (util/normalized_error.h): 1e-4 (float32 rounding of
// short sums, and of transcendental functions computed by different approximations), 1e-3
// when an output element sums more than 1000 products — libraries reorder and block such
// sums (and may use FMA or Winograd), so their rounding error grows with the length of the
// sum.
double ToleranceFor(const Graph& graph, const SubGraph& nodes);

// One random tensor per request input (util/random_tensor.h); integer inputs used as Gather /
// GatherElements indices are drawn within the indexed axis, float inputs of Sqrt and Log
// are made positive, integer divisors non-zero.
std::vector<Tensor> RandomInputs(const CompileRequest& request, std::mt19937& rng);

}  // namespace collage
