// What the placement searches work on: every group some backend offers to run, with its
// measured cost and the layouts its kernel reads and writes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collage/backend.h"

namespace collage {

struct SearchCandidate {
  std::string backend;
  std::string rule;
  SubGraph nodes;
  std::vector<ValueId> inputs;   // non-constant values read (CompileRequest::inputs)
  std::vector<ValueId> outputs;  // values produced for others (CompileRequest::outputs)
  // Filled by the cost model; one per input / output.
  std::vector<Layout> input_layouts;
  std::vector<Layout> output_layouts;
  double cost_ms = 0;
  std::string thread_pool;  // Backend::thread_pool: switching pools between groups costs
};

// Every group offered by the rules and fusions of `backends` (each registered; "native" is
// always added, so that every node has a candidate), inputs and outputs filled, layouts and
// cost not yet. One entry per (backend, rule, node set). `strict_non_finite`: only the rules
// and fusions that meet the NaN/Inf contract (native's all do, so every node keeps one).
StatusOr<std::vector<SearchCandidate>> EnumerateSearchCandidates(
    const Graph& graph, const std::vector<std::string>& backends, const BackendRegistry& registry,
    bool strict_non_finite = false);

// The cost of converting `value` from layout `from` to `to`; 0 when they hold the same bytes.
using TransitionCost = std::function<double(ValueId value, const Layout& from, const Layout& to)>;

// The cost of running a kernel on thread pool `to` right after one on pool `from` (another
// library's workers waking while the last one's wind down), beyond what the two kernels cost
// alone; 0 for the same pool.
using PoolSwitchCost = std::function<double(const std::string& from, const std::string& to)>;

}  // namespace collage
