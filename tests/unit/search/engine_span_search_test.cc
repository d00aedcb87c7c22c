// An engine's spans (collage/sdk/region_engine_rules.h, "span") in the op-level search: on
// ResNet-50's graph, with synthetic costs standing in for measurements, an engine that is the
// cheaper choice on the first half of the model only gets a span there — neither the whole
// model nor nothing — and a library runs the rest.
#include <gtest/gtest.h>

#include <map>

#include "collage/sdk/errors.h"
#include "collage/sdk/region_engine_rules.h"
#include "search/op_level_search.h"
#include "zoo/zoo.h"

namespace collage {
namespace {

SearchCandidate Priced(const Graph& g, const std::string& backend, const Candidate& candidate,
                       double cost_ms) {
  SearchCandidate c = SearchCandidateOf(g, {backend, candidate});
  c.input_layouts.assign(c.inputs.size(), Layout::Plain());
  c.output_layouts.assign(c.outputs.size(), Layout::Plain());
  c.cost_ms = cost_ms;
  return c;
}

TEST(EngineSpanSearchTest, AnEngineCheaperOnPartOfTheModelGetsASpanThere) {
  StatusOr<Graph> model = BuildZooModel("resnet50");
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Graph& g = *model;
  const int n = g.num_nodes();
  // The library: 1.0 per node in the first half, 0.1 in the second. The engine: 0.3 per node
  // in any region, 2.0 for a node alone (a session per node).
  auto library_ms = [&](NodeId id) { return id < n / 2 ? 1.0 : 0.1; };
  const RuleSet engine_rules = MakeRegionEngineRules(
      [](const Graph&, const Node&) { return true; },
      FusionCompiler([](const CompileRequest&) -> StatusOr<std::unique_ptr<Kernel>> {
        return Unsupported("never compiled: the costs are synthetic");
      }));
  std::vector<SearchCandidate> candidates;
  int spans = 0;
  for (const Candidate& c : EnumerateCandidates(g, engine_rules, false, {Precision::kFloat32})) {
    const bool alone = c.nodes.size() == 1;
    candidates.push_back(Priced(g, "engine", c, alone ? 2.0 : 0.3 * c.nodes.size()));
    if (c.rule == "span") ++spans;
  }
  ASSERT_GE(spans, 6);
  double all_library_ms = 0;
  for (NodeId id = 0; id < n; ++id) {
    candidates.push_back(Priced(g, "library", {"single", SubGraph(n, {id})}, library_ms(id)));
    all_library_ms += library_ms(id);
  }
  auto found = SearchOpLevel(
      g, candidates, [](ValueId, const Layout&, const Layout&) { return 0.0; }, {});
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->states_cut, 0);
  std::map<std::string, int> rules;  // "backend/rule" → groups
  int engine_nodes = 0;
  for (int index : found->groups) {
    const SearchCandidate& c = candidates[static_cast<size_t>(index)];
    ++rules[c.backend + "/" + c.rule];
    if (c.backend == "engine") {
      engine_nodes += c.nodes.size();
      // Spans the engine is given lie in the first half, where it is the cheaper.
      EXPECT_LT(c.nodes.Nodes().front(), n / 2);
    }
  }
  EXPECT_GE(rules["engine/span"], 1);
  EXPECT_EQ(rules["engine/whole"], 0);
  EXPECT_EQ(rules["engine/single"], 0);
  EXPECT_GT(engine_nodes, n / 4);
  EXPECT_LT(found->cost_ms, all_library_ms);
  EXPECT_LT(found->cost_ms, 0.3 * n);  // the engine's whole model
}

}  // namespace
}  // namespace collage
