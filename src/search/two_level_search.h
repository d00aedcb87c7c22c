// The graph-level search (the paper's second level, DESIGN.md 1.5): op-level costs are
// measured one group at a time and added up, but a whole plan is not the sum of its parts —
// a graph-level backend compiling a region whole keeps tensors in its own layout and fuses
// across groups, caches warm and cool, and libraries' thread pools slow each other down.
// This search measures whole plans end to end and improves on the op-level result.
//
// Genome: one gene per op-level group. 0 keeps the op-level choice; 1 + b moves the group
// into graph-level backend b (adjacent groups moved to the same one become one region,
// compiled together); the last value merges the group with the next one when both are on
// the same backend and one of its rules offers the merged nodes (so the merge compiles). Fitness:
// the compiled plan's median latency, after its outputs are checked against the reference kernels;
// a plan that fails to compile or disagrees is invalid, with its reason. The first population holds
// the op-level result, each graph-level backend taking every group it can, and random genomes. The
// best genome then becomes a finalist of the end-to-end decision (search/final_decision.h).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collage/optimize.h"
#include "collage/sdk/backend.h"
#include "runtime/candidate_index.h"
#include "runtime/placement.h"
#include "search/evolutionary_search.h"
#include "search/plan_bench.h"

namespace collage {

// Turns genomes into placements over one op-level placement.
class GenomeDecoder {
 public:
  // `graph_level`: the graph-level backends the search may move groups to. Regions and merges
  // are the float32 offers of `index`, which holds these backends and those of `op_level`.
  GenomeDecoder(const Graph& graph, const Placement& op_level,
                const std::vector<const Backend*>& graph_level, const CandidateIndex& index);

  // Per gene, the values it may take (0 first).
  const std::vector<std::vector<int>>& gene_values() const { return gene_values_; }
  // The genome where graph-level backend `b` takes every group it can (0 elsewhere).
  Genome EverythingOn(size_t b) const;
  Placement Decode(const Genome& genome) const;

 private:
  const Graph& graph_;
  const Placement& op_level_;
  std::vector<const Backend*> graph_level_;
  std::vector<std::string> region_rule_;           // per graph-level backend
  std::vector<std::vector<bool>> can_take_group_;  // [backend][group]
  std::vector<std::vector<int>> gene_values_;
  int merge_gene_ = 0;
  // (backend, node set) → the rule offering exactly those nodes, for merges.
  std::map<std::pair<std::string, std::string>, std::string> offered_;
  const std::string* OfferedRule(const std::string& backend, const SubGraph& nodes) const;
};

// What the graph-level search found, and how it went (for the optimize's report).
struct TwoLevelResult {
  Placement best;  // the op-level placement when nothing measured faster
  int generations = 0;
  int evaluations = 0;  // distinct placements measured
  int genome_cache_hits = 0;
  int invalid_genomes = 0;
  std::vector<std::string> invalid_genome_reasons;  // a few
  double evolve_seconds = 0;
};

// The best genome's placement, timed on `bench` (prepared); the end-to-end decision against
// the op-level plan and every backend alone follows (search/final_decision.h). The graph-level
// backends are those among `index`'s.
StatusOr<TwoLevelResult> SearchTwoLevel(const Graph& graph, const PlanBench& bench,
                                        const Placement& op_level, const CandidateIndex& index,
                                        const OptimizeOptions& options);

}  // namespace collage
