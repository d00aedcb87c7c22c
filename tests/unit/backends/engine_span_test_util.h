// Shared by the engine backends' tests: one of an engine's spans ("span",
// collage/sdk/region_engine_rules.h) of a zoo model, placed inside a mixed plan — the nodes
// before and after it on the native backend, one node each — runs as the reference kernels do.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "backend_test_util.h"
#include "collage/available_backends.h"
#include "collage/normalized_error.h"
#include "runtime/executable.h"
#include "runtime/placement.h"
#include "zoo/zoo.h"
#include "zoo_test_util.h"

namespace collage::testing {

// `tolerance`: normalized, against the reference kernels (long reductions reassociated).
inline void ExpectASpanRunsInAMixedPlan(const std::string& engine, const std::string& model,
                                        double tolerance) {
  StatusOr<Graph> graph = BuildZooModel(model);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const Graph& g = *graph;
  const std::vector<Candidate> spans = CandidatesOf(g, engine, "span");
  ASSERT_GE(spans.size(), 3u) << model << ": too few spans";
  // The second of the finest spans: nodes run before it and after it.
  const Candidate& span = spans[1];
  ASSERT_GT(span.nodes.Nodes().front(), 0);
  ASSERT_LT(span.nodes.Nodes().back(), g.num_nodes() - 1);
  Placement placement;
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    if (!span.nodes.Contains(id)) {
      placement.groups.emplace_back("native", Candidate{"op", SubGraph(g.num_nodes(), {id})});
    } else if (id == span.nodes.Nodes().front()) {
      placement.groups.emplace_back(engine, span);
    }
  }
  BackendRegistry& registry = GlobalBackendRegistry();
  ASSERT_TRUE(ValidatePlacement(g, placement, registry).ok());
  auto executable = Executable::Create(g, placement, registry, 2);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  const std::map<std::string, Tensor> named = zoo_test::RandomGraphInputs(g, 7);
  std::vector<Tensor> inputs;
  for (ValueId in : g.inputs()) inputs.push_back(named.at(g.value(in).name));
  auto outputs = (*executable)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  auto reference = zoo_test::RunWithReferenceKernels(g, named);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const std::string& name = g.value(g.outputs()[i]).name;
    EXPECT_LE(NormalizedError((*outputs)[i], reference->at(name)), tolerance) << model << " " << name;
  }
}

}  // namespace collage::testing
