// The op-level search calibrated against runs of its plans, with synthetic costs: each
// candidate has a cost "measured alone" (what the search starts from) and a time "in a run"
// (what a profiled run of a plan containing it reports), written by the test. A run is
// simulated as the executable runs a placement: groups in order, a conversion wherever a
// value is read in another layout than its producer wrote (once per value and layout, and to
// plain for the outputs), a library switch folded into the first step of another backend.
#include "search/run_calibration.h"

#include <gtest/gtest.h>

#include <map>

#include "collage/sdk/errors.h"
#include "search/placement_estimate.h"

namespace collage {
namespace {

const Layout kBlocked = Layout::Opaque("b", "blocked", 256);

// n0 → n1 → n2 → n3 (Relu), one float32[1x4x2x2] value between each two.
Graph Chain(int length) {
  Graph g;
  const TensorType type{DType::kFloat32, {1, 4, 2, 2}};
  ValueId last = g.AddValue("x", type);
  g.AddInput(last);
  for (int i = 0; i < length; ++i) {
    Node node;
    node.name = "n" + std::to_string(i);
    node.op_type = "Relu";
    node.inputs = {last};
    last = g.AddValue("v" + std::to_string(i), type);
    node.outputs = {last};
    EXPECT_TRUE(g.AddNode(std::move(node)).ok());
  }
  g.AddOutput(last);
  return g;
}

struct Synthetic {
  std::vector<SearchCandidate> candidates;
  std::vector<double> in_run_ms;  // per candidate
  double switch_ms = 0;           // charged by the search and paid by the run alike
  double conversion_alone_ms = 0.1;
  double conversion_in_run_ms = 0.1;
  int profiles = 0;

  void Add(const Graph& g, const std::string& backend, std::vector<NodeId> nodes, double alone_ms,
           double in_run, const Layout& layout = Layout::Plain(), const std::string& rule = "") {
    SearchCandidate c = SearchCandidateOf(
        g, {backend, {rule.empty() ? backend + "_rule" : rule, SubGraph(g.num_nodes(), nodes)}});
    c.input_layouts.assign(c.inputs.size(), layout);
    c.output_layouts.assign(c.outputs.size(), layout);
    c.cost_ms = alone_ms;
    candidates.push_back(c);
    in_run_ms.push_back(in_run);
  }

  TransitionCost Transition() const {
    return [this](ValueId, const Layout& from, const Layout& to) {
      return from == to ? 0.0 : conversion_alone_ms;
    };
  }
  LibrarySwitchCost Switch() const {
    return [this](const std::string&, const std::string&) { return switch_ms; };
  }

  // A profiled run of `placement`, as the executable would report it.
  PlanInRun Run(const Graph& g, const Placement& placement) {
    ++profiles;
    PlanInRun ran;
    std::map<ValueId, std::pair<Layout, std::vector<Layout>>> held;
    for (ValueId in : g.inputs()) held[in] = {Layout::Plain(), {Layout::Plain()}};
    auto read = [&](ValueId v, const Layout& layout) {
      auto& [home, available] = held[v];
      if (std::find(available.begin(), available.end(), layout) != available.end()) return;
      available.push_back(layout);
      ran.steps.nodes.push_back(ConversionStep(g.value(v).name, "native", home.name(),
                                               layout.name(), conversion_in_run_ms));
    };
    std::string last_backend;
    for (const PlacedGroup& group : placement.groups) {
      size_t index = 0;
      while (!(candidates[index].backend == group.backend && candidates[index].rule == group.rule &&
               candidates[index].nodes == group.nodes))
        ++index;
      const SearchCandidate& c = candidates[index];
      for (size_t i = 0; i < c.inputs.size(); ++i) read(c.inputs[i], c.input_layouts[i]);
      NodeTiming step;
      step.group = static_cast<int>(&group - placement.groups.data());
      step.node_name = g.node(c.nodes.Nodes().front()).name;
      step.op_type = "Relu";
      step.backend = c.backend;
      step.rule = c.rule;
      step.milliseconds =
          in_run_ms[index] + (!last_backend.empty() && last_backend != c.backend ? switch_ms : 0);
      last_backend = c.backend;
      ran.steps.nodes.push_back(step);
      for (size_t i = 0; i < c.outputs.size(); ++i)
        held[c.outputs[i]] = {c.output_layouts[i], {c.output_layouts[i]}};
    }
    for (ValueId out : g.outputs()) read(out, Layout::Plain());
    for (const NodeTiming& step : ran.steps.nodes) ran.wall_ms += step.milliseconds;
    return ran;
  }

  ProfilePlan Profile(const Graph& g) {
    return
        [this, &g](const Placement& placement) -> StatusOr<PlanInRun> { return Run(g, placement); };
  }
};

std::vector<std::string> BackendsOf(const OpLevelResult& found,
                                    const std::vector<SearchCandidate>& candidates) {
  std::vector<std::string> backends;
  for (int i : found.groups) backends.push_back(candidates[static_cast<size_t>(i)].backend);
  return backends;
}

TEST(RunCalibration, AGroupSlowerInTheRunThanAloneIsRepricedAndTheSearchMovesOffIt) {
  const Graph g = Chain(4);
  Synthetic s;
  for (NodeId n = 0; n < 4; ++n) s.Add(g, "a", {n}, 1.0, 1.0);
  s.Add(g, "b", {0, 1, 2, 3}, 2.0, 6.0);  // flattering alone, slow in a run
  CalibrationOptions options;
  auto result = SearchCalibratedOpLevel(g, s.candidates, s.Transition(), s.Switch(), s.Profile(g),
                                        nullptr, {}, options);
  ASSERT_TRUE(result.ok()) << result.status().message();
  // First the fused group (estimated 2, ran 6), then the four of "a" (estimated 4, ran 4);
  // then the search repeats that plan and calibration ends.
  ASSERT_EQ(result->rounds.size(), 2u);
  EXPECT_DOUBLE_EQ(result->rounds[0].estimated_ms, 2.0);
  EXPECT_DOUBLE_EQ(result->rounds[0].in_run_ms, 6.0);
  EXPECT_EQ(result->rounds[0].groups_repriced, 1);
  EXPECT_DOUBLE_EQ(result->rounds[1].estimated_ms, 4.0);
  EXPECT_EQ(result->rounds[1].groups_repriced, 4);
  EXPECT_EQ(result->stopped, "");
  EXPECT_EQ(BackendsOf(result->kept, s.candidates), (std::vector<std::string>{"a", "a", "a", "a"}));
  EXPECT_DOUBLE_EQ(result->kept_in_run_ms, 4.0);
  EXPECT_DOUBLE_EQ(s.candidates[4].cost_ms, 6.0);
  EXPECT_EQ(s.profiles, 2);
}

TEST(RunCalibration, AWholeGraphGroupRunsAsAPlanOfItsOwnAndTheFasterPlanStands) {
  const Graph g = Chain(3);
  Synthetic s;
  for (NodeId n = 0; n < 3; ++n) s.Add(g, "a", {n}, 1.0, 0.8);
  s.Add(g, "b", {0, 1, 2}, 3.5, 3.5);  // within 1.5x of a's 2.4 in the run: it runs
  auto result = SearchCalibratedOpLevel(g, s.candidates, s.Transition(), s.Switch(), s.Profile(g),
                                        nullptr, {}, {});
  ASSERT_TRUE(result.ok());
  // The search's plan, then the group that is the whole graph as a plan of its own; then the
  // search returns its first plan again.
  ASSERT_EQ(result->rounds.size(), 2u);
  EXPECT_EQ(result->rounds[0].origin, PlacementSource::OpLevel());
  EXPECT_EQ(result->rounds[1].origin, PlacementSource::WholeGraph("b", Precision::kFloat32));
  EXPECT_DOUBLE_EQ(result->rounds[1].estimated_ms, 3.5);
  EXPECT_EQ(BackendsOf(result->kept, s.candidates), (std::vector<std::string>{"a", "a", "a"}));
  EXPECT_NEAR(result->kept_in_run_ms, 2.4, 1e-12);
  EXPECT_DOUBLE_EQ(result->kept.cost_ms, 3.0);  // its estimate before it ran
}

// Once a plan has run, the search's estimate of that very plan is its time in the run: a
// step's time includes waking its library, so the group is re-priced net of the switch the
// search charges before it, and a conversion is priced at its time in the run.
TEST(RunCalibration, TheEstimateOfAPlanThatRanIsItsTimeInTheRunSwitchesAndConversionsIncluded) {
  const Graph g = Chain(4);
  Synthetic s;
  s.switch_ms = 0.3;
  s.conversion_alone_ms = 0.1;
  s.conversion_in_run_ms = 0.4;
  s.Add(g, "a", {0}, 1.0, 1.5);
  s.Add(g, "b", {1}, 0.2, 0.7, kBlocked);
  s.Add(g, "a", {2}, 1.0, 1.1);
  s.Add(g, "b", {3}, 0.2, 0.6, kBlocked);
  auto result = SearchCalibratedOpLevel(g, s.candidates, s.Transition(), s.Switch(), s.Profile(g),
                                        nullptr, {}, {});
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->rounds.size(), 1u);  // the only cover: the search repeats it
  EXPECT_EQ(result->stopped, "");
  const TransitionCost in_run = WithConversionTimes(s.Transition(), result->conversion_ms);
  EXPECT_EQ(result->conversion_ms.size(), 4u);  // into b twice, back to plain twice
  EXPECT_DOUBLE_EQ(in_run(g.outputs()[0], kBlocked, Layout::Plain()), 0.4);
  EXPECT_DOUBLE_EQ(in_run(g.inputs()[0], Layout::Plain(), kBlocked),
                   0.1);  // never ran: as measured
  Placement plan;
  for (int i : result->kept.groups) plan.groups.push_back(s.candidates[static_cast<size_t>(i)]);
  const std::optional<double> estimate =
      EstimatePlacement(g, plan, s.candidates, in_run, s.Switch());
  ASSERT_TRUE(estimate.has_value());
  EXPECT_NEAR(*estimate, result->kept_in_run_ms, 1e-12);
  EXPECT_NEAR(result->kept_in_run_ms, 1.5 + 0.7 + 1.1 + 0.6 + 3 * 0.3 + 4 * 0.4, 1e-12);
}

// A backend whose groups all ran 3x their time alone: its groups not run yet are priced at 3x
// theirs too, except one that is the whole graph (measured as a served run).
TEST(RunCalibration, GroupsNotRunYetTakeTheirBackendsRatioOfRunToAlone) {
  const Graph g = Chain(4);
  Synthetic s;
  s.Add(g, "b", {0}, 0.5, 1.5);
  s.Add(g, "b", {1}, 0.5, 1.5);
  s.Add(g, "b", {2}, 0.5, 1.5);  // not in the first plan
  s.Add(g, "b", {3}, 0.5, 1.5);  // not in the first plan
  s.Add(g, "b", {2, 3}, 0.5, 1.5);
  s.Add(g, "b", {0, 1, 2, 3}, 1.7, 1.7, Layout::Plain(), "b_whole");
  CalibrationOptions options;
  options.max_rounds = 1;
  auto result = SearchCalibratedOpLevel(g, s.candidates, s.Transition(), s.Switch(), s.Profile(g),
                                        nullptr, {}, options);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->rounds.size(), 2u);  // the search's plan, then the whole-graph group
  EXPECT_DOUBLE_EQ(result->rounds[0].estimated_ms, 1.5);
  EXPECT_DOUBLE_EQ(s.candidates[2].cost_ms, 1.5);
  EXPECT_DOUBLE_EQ(s.candidates[3].cost_ms, 1.5);
  EXPECT_DOUBLE_EQ(s.candidates[5].cost_ms, 1.7);
  // The whole-graph group ran in 1.7 against the first plan's 4.5.
  EXPECT_EQ(result->kept.groups, std::vector<int>{5});
}

// After the search's first plan, each backend alone runs as a plan of its own when its
// estimate is within 1.5x of the fastest run so far: "b" priced 4.8 against "a"'s 4 runs (and
// is faster in the run), "c" priced 12 does not.
TEST(RunCalibration, ABackendAloneRunsWhenItsEstimateIsCloseToTheFastestPlan) {
  const Graph g = Chain(4);
  Synthetic s;
  std::vector<NamedPlacement> alone(2);
  alone[0].first = PlacementSource::SingleBackend("b");
  alone[1].first = PlacementSource::SingleBackend("c");
  for (NodeId n = 0; n < 4; ++n) {
    s.Add(g, "a", {n}, 1.0, 1.0);
    s.Add(g, "b", {n}, 1.2, 0.5);
    alone[0].second.groups.push_back(s.candidates.back());
    s.Add(g, "c", {n}, 3.0, 0.1);
    alone[1].second.groups.push_back(s.candidates.back());
  }
  auto result = SearchCalibratedOpLevel(g, s.candidates, s.Transition(), s.Switch(), s.Profile(g),
                                        nullptr, alone, {});
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->rounds.size(), 2u);  // then the search returns b's plan, which ran
  EXPECT_EQ(result->rounds[0].origin, PlacementSource::OpLevel());
  EXPECT_EQ(result->rounds[1].origin, PlacementSource::SingleBackend("b"));
  EXPECT_DOUBLE_EQ(result->rounds[1].estimated_ms, 4.8);
  EXPECT_DOUBLE_EQ(result->kept_in_run_ms, 2.0);
  EXPECT_EQ(BackendsOf(result->kept, s.candidates), (std::vector<std::string>{"b", "b", "b", "b"}));
  EXPECT_EQ(result->stopped, "");
}

// Plans that ran within 25% of the fastest are timed again side by side, and the fastest
// there is kept: each profile was taken at another moment.
TEST(RunCalibration, PlansCloseToTheFastestAreTimedAgainSideBySide) {
  const Graph g = Chain(3);
  Synthetic s;
  for (NodeId n = 0; n < 3; ++n) s.Add(g, "a", {n}, 1.0, 0.8);
  s.Add(g, "b", {0, 1, 2}, 3.1, 2.6);  // run after a's plan (within 1.5x of its 2.4)
  std::vector<size_t> sizes;
  RetimePlans retime = [&](const std::vector<Placement>& plans) -> StatusOr<std::vector<double>> {
    sizes.push_back(plans.size());
    return std::vector<double>{2.5, 2.0};  // a's plan first: the faster in its profile
  };
  auto result = SearchCalibratedOpLevel(g, s.candidates, s.Transition(), s.Switch(), s.Profile(g),
                                        retime, {}, {});
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->rounds.size(), 2u);
  EXPECT_EQ(sizes, std::vector<size_t>{2});
  EXPECT_EQ(result->plans_retimed, 2);
  EXPECT_EQ(result->kept.groups, std::vector<int>{3});
  EXPECT_DOUBLE_EQ(result->kept_in_run_ms, 2.0);
  EXPECT_DOUBLE_EQ(result->kept.cost_ms, 3.1);  // its estimate before it ran

  // A plan beyond 25% of the fastest is not timed again; alone, nothing is.
  Synthetic far;
  for (NodeId n = 0; n < 3; ++n) far.Add(g, "a", {n}, 1.0, 0.8);
  far.Add(g, "b", {0, 1, 2}, 3.1, 3.1);
  sizes.clear();
  auto alone = SearchCalibratedOpLevel(g, far.candidates, far.Transition(), far.Switch(),
                                       far.Profile(g), retime, {}, {});
  ASSERT_TRUE(alone.ok());
  EXPECT_TRUE(sizes.empty());
  EXPECT_EQ(alone->plans_retimed, 0);
}

TEST(RunCalibration, TheRoundCapEndsCalibrationSayingSo) {
  const Graph g = Chain(4);
  Synthetic s;
  for (NodeId n = 0; n < 4; ++n) s.Add(g, "a", {n}, 1.0, 1.0);
  s.Add(g, "b", {0, 1, 2, 3}, 2.0, 6.0);
  CalibrationOptions options;
  options.max_rounds = 1;
  auto result = SearchCalibratedOpLevel(g, s.candidates, s.Transition(), s.Switch(), s.Profile(g),
                                        nullptr, {}, options);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->rounds.size(), 1u);
  EXPECT_EQ(result->stopped, "stopped after 1 plans of the search");
  EXPECT_EQ(BackendsOf(result->kept, s.candidates),
            std::vector<std::string>{"b"});  // the only one run
}

TEST(RunCalibration, NoRoundsRunsNothingAndKeepsTheSearchsPlan) {
  const Graph g = Chain(2);
  Synthetic s;
  s.Add(g, "a", {0}, 1.0, 9.0);
  s.Add(g, "a", {1}, 1.0, 9.0);
  CalibrationOptions options;
  options.max_rounds = 0;
  auto result = SearchCalibratedOpLevel(g, s.candidates, s.Transition(), s.Switch(), s.Profile(g),
                                        nullptr, {}, options);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->rounds.empty());
  EXPECT_EQ(s.profiles, 0);
  EXPECT_DOUBLE_EQ(result->kept.cost_ms, 2.0);
  EXPECT_DOUBLE_EQ(s.candidates[0].cost_ms, 1.0);
}

TEST(RunCalibration, APlanThatFailsToRunEndsCalibrationAndTheEarlierPlansStand) {
  const Graph g = Chain(2);
  Synthetic s;
  s.Add(g, "a", {0, 1}, 1.0, 5.0);
  s.Add(g, "b", {0}, 1.0, 1.0);
  s.Add(g, "b", {1}, 1.0, 1.0);
  int calls = 0;
  ProfilePlan profile = [&](const Placement& placement) -> StatusOr<PlanInRun> {
    if (++calls == 2) return Internal("the library aborted");
    return s.Run(g, placement);
  };
  auto result = SearchCalibratedOpLevel(g, s.candidates, s.Transition(), s.Switch(), profile,
                                        nullptr, {}, {});
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->rounds.size(), 1u);
  EXPECT_NE(result->stopped.find("the library aborted"), std::string::npos);
  EXPECT_EQ(BackendsOf(result->kept, s.candidates), std::vector<std::string>{"a"});
  EXPECT_DOUBLE_EQ(result->kept_in_run_ms, 5.0);
}

TEST(RunCalibration, AProfileOfAnotherPlacementRepricesNothing) {
  const Graph g = Chain(2);
  Synthetic s;
  s.Add(g, "a", {0}, 1.0, 7.0);
  s.Add(g, "a", {1}, 1.0, 7.0);
  ProfilePlan profile = [&](const Placement& placement) -> StatusOr<PlanInRun> {
    PlanInRun ran = s.Run(g, placement);
    // A placement of one group fewer: its last group step is missing.
    for (size_t i = ran.steps.nodes.size(); i-- > 0;) {
      if (!IsConversion(ran.steps.nodes[i])) {
        ran.steps.nodes.erase(ran.steps.nodes.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    return ran;
  };
  auto result = SearchCalibratedOpLevel(g, s.candidates, s.Transition(), s.Switch(), profile,
                                        nullptr, {}, {});
  ASSERT_TRUE(result.ok());
  EXPECT_NE(result->stopped.find("has no step of the plan's group 1"), std::string::npos);
  EXPECT_DOUBLE_EQ(s.candidates[0].cost_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.candidates[1].cost_ms, 1.0);
}

}  // namespace
}  // namespace collage
