// What the placement searches work on: every group some backend offers to run, with its
// measured cost and the layouts its kernel reads and writes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collage/sdk/backend.h"
#include "runtime/candidate_index.h"
#include "runtime/placement.h"

namespace collage {

// A PlacedGroup (backend + rule + nodes) as the searches see it: adds the values it reads
// and produces, the layouts its kernel reads and writes them in, and its measured cost. The
// cost model prices these; the op-level search chooses among them, and the group it
// chooses goes into the Placement as the PlacedGroup it extends.
struct SearchCandidate : PlacedGroup {
  std::vector<ValueId> inputs;   // non-constant values read (CompileRequest::inputs)
  std::vector<ValueId> outputs;  // values produced for others (CompileRequest::outputs)
  // Filled by the cost model; one per input / output.
  std::vector<Layout> input_layouts;
  std::vector<Layout> output_layouts;
  double cost_ms = 0;
};

// `group` with its inputs and outputs filled from the graph; layouts and cost not yet.
SearchCandidate SearchCandidateOf(const Graph& graph, PlacedGroup group);

// Every group offered by the rules and fusions of `backends` (each registered; "native" is
// always added, so that every node has a candidate), inputs and outputs filled, layouts and
// cost not yet. One entry per (backend, rule, node set, precision). `strict_non_finite`: only
// the rules and fusions that meet the NaN/Inf contract (native's all do, so every node keeps
// one). `precisions`: the precisions offers may be in (collage/sdk/rule.h EnumerateCandidates).
StatusOr<std::vector<SearchCandidate>> EnumerateSearchCandidates(
    const Graph& graph, const std::vector<std::string>& backends, const BackendRegistry& registry,
    bool strict_non_finite = false,
    const std::vector<Precision>& precisions = {Precision::kFloat32});
// The same from an index already built: every offer of every indexed backend.
std::vector<SearchCandidate> SearchCandidatesOf(const Graph& graph, const CandidateIndex& index);

// The cost of converting `value` from layout `from` to `to`; 0 when they hold the same bytes.
using TransitionCost = std::function<double(ValueId value, const Layout& from, const Layout& to)>;

// The cost of running a kernel of backend `to` right after one of backend `from`, beyond
// what it costs after one of its own: another library's thread pool winding down while this
// one's workers wake (OpenMP and an engine's own pool), and this library's code, tables and
// buffers evicted by the other's. 0 for the same backend.
using LibrarySwitchCost = std::function<double(const std::string& from, const std::string& to)>;

}  // namespace collage
