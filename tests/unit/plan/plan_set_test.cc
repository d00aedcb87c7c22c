// Plans of one model at several input shapes in one file, and the placement a graph at some
// shapes takes from them: its own shapes' plan, else the nearest shapes' where each group's
// rule still offers it, native where not.
#include "plan/plan_set.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"
#include "ops/graph_builder.h"

namespace collage {
namespace {

class UnusedKernel : public Kernel {
 public:
  Status Run(const KernelBuffers&) const override { return Unsupported("not for running"); }
};

StatusOr<std::unique_ptr<Kernel>> MakeKernel(const CompileRequest&) {
  return std::unique_ptr<Kernel>(new UnusedKernel());
}

// "matmul" at any shape; "relu_small" only on at most 2 rows.
class SmallBatchBackend : public Backend {
 public:
  SmallBatchBackend() {
    rules_.Add(Rule("matmul", Op("MatMul")(Any(), Const())).Compiles(MakeKernel));
    rules_.Add(Rule("relu_small", Op("Relu")(Any()))
                   .Where([](const Match& m) { return m.capture_type(0).shape.front() <= 2; })
                   .Compiles(MakeKernel));
  }
  std::string name() const override { return "test_small_batch"; }
  std::string version() const override { return "1"; }
  const RuleSet& rules() const override { return rules_; }

 private:
  RuleSet rules_;
};

const BackendRegistry& Registry() {
  BackendRegistry& registry = GlobalBackendRegistry();
  if (registry.Find("test_small_batch") == nullptr) {
    EXPECT_TRUE(registry.Register(std::make_unique<SmallBatchBackend>()).ok());
  }
  return registry;
}

// x[rows x 4] → MatMul (node 0) → Relu (node 1) → out; `name` names the MatMul node.
Graph MatMulRelu(int64_t rows, const std::string& name = "matmul") {
  GraphBuilder b("matmul_relu");
  ValueId x = b.Input("x", DType::kFloat32, {rows, 4});
  ValueId w = b.Constant("w", Shape{4, 3}, std::vector<float>(12, 0.5f));
  ValueId m = b.Node("MatMul", {x, w}, {}, name);
  b.Output(b.Node("Relu", {m}, {}, "relu"), "out");
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(*graph) : Graph();
}

Plan PlanAt(int64_t rows) {
  Graph g = MatMulRelu(rows);
  Placement placement;
  placement.groups.emplace_back("test_small_batch",
                                Candidate{"matmul", SubGraph(g.num_nodes(), {0})});
  placement.groups.emplace_back("test_small_batch",
                                Candidate{"relu_small", SubGraph(g.num_nodes(), {1})});
  return MakePlan(g, placement, Registry(), PlacementSource::OpLevel(), 1);
}

TEST(PlanSetTest, OnePlanKeepsItsFormatAndSeveralAreOneSet) {
  const std::string one = PlanSetToJson({PlanAt(2)});
  EXPECT_NE(one.find("\"format\": \"collage-plan\""), std::string::npos) << one;
  auto read_one = PlanSetFromJson(one, "one.json");
  ASSERT_TRUE(read_one.ok()) << read_one.status().ToString();
  EXPECT_EQ(read_one->size(), 1u);

  const std::string two = PlanSetToJson({PlanAt(2), PlanAt(8)});
  EXPECT_NE(two.find("\"format\": \"collage-plan-set\""), std::string::npos) << two;
  auto read_two = PlanSetFromJson(two, "two.json");
  ASSERT_TRUE(read_two.ok()) << read_two.status().ToString();
  ASSERT_EQ(read_two->size(), 2u);
  EXPECT_EQ((*read_two)[1].input_shapes.at("x"), (Shape{8, 4}));
  EXPECT_EQ((*read_two)[0].groups[1].rule, "relu_small");
}

TEST(PlanSetTest, ADamagedSetIsRefusedNamingWhere) {
  EXPECT_FALSE(PlanSetFromJson("{\"format\": \"collage-plan-set\", \"version\": 1, \"plans\": []}",
                               "empty.json")
                   .ok());
  EXPECT_FALSE(PlanSetFromJson("{\"format\": \"collage-plan-set\", \"version\": 9, \"plans\": []}",
                               "future.json")
                   .ok());
  std::string many = "{\"format\": \"collage-plan-set\", \"version\": 1, \"plans\": [";
  for (size_t i = 0; i <= kMaxPlansInSet; ++i) many += std::string(i ? "," : "") + "{}";
  EXPECT_FALSE(PlanSetFromJson(many + "]}", "many.json").ok());
  auto bad = PlanSetFromJson(
      "{\"format\": \"collage-plan-set\", \"version\": 1, \"plans\": [" +
          PlanSetToJson({PlanAt(2)}) + ", {\"format\": \"collage-plan\"}]}",
      "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.json (plan 1)"), std::string::npos)
      << bad.status().ToString();
}

TEST(PlanSetTest, AGraphTakesItsShapesPlanElseTheNearestOfTheSameModel) {
  const std::vector<Plan> plans = {PlanAt(2), PlanAt(8)};
  ChosenPlan exact = ChoosePlan(plans, MatMulRelu(8));
  EXPECT_EQ(exact.plan, &plans[1]);
  EXPECT_TRUE(exact.exact);
  ChosenPlan near_two = ChoosePlan(plans, MatMulRelu(3));
  EXPECT_EQ(near_two.plan, &plans[0]);
  EXPECT_FALSE(near_two.exact);
  EXPECT_EQ(ChoosePlan(plans, MatMulRelu(6)).plan, &plans[1]);
  // Another model (its nodes have other names): none.
  EXPECT_EQ(ChoosePlan(plans, MatMulRelu(3, "other")).plan, nullptr);
}

TEST(PlanSetTest, AGroupThatNoLongerAppliesRunsOnNativeAndIsNamed) {
  Graph g = MatMulRelu(4);
  std::vector<std::string> warnings;
  auto placement = PlacementAtOtherShapes(PlanAt(2), g, Registry(), 1, false, &warnings);
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  ASSERT_EQ(placement->groups.size(), 2u);
  EXPECT_EQ(placement->groups[0].backend, "test_small_batch");
  EXPECT_EQ(placement->groups[1].backend, "native");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("measured at input shapes x=2x4, these are x=4x4"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("relu_small on test_small_batch (relu)"), std::string::npos)
      << warnings[1];

  // Where every group still applies, nothing falls back.
  warnings.clear();
  auto kept = PlacementAtOtherShapes(PlanAt(2), MatMulRelu(1), Registry(), 1, false, &warnings);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->groups[1].backend, "test_small_batch");
  EXPECT_EQ(warnings.size(), 1u);

  // Another model is refused.
  auto other = PlacementAtOtherShapes(PlanAt(2), MatMulRelu(4, "other"), Registry(), 1, false, nullptr);
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidArgument) << other.status().ToString();
}

// A plan measured at `rows` and declared for `min_rows` to `max_rows` rows.
Plan PlanFor(int64_t rows, int64_t min_rows, int64_t max_rows) {
  Plan plan = PlanAt(rows);
  plan.input_ranges["x"] = ShapeRange{{min_rows, 4}, {max_rows, 4}};
  return plan;
}

TEST(PlanSetTest, DeclaredRangesAreWrittenReadAndChecked) {
  auto read = PlanSetFromJson(PlanSetToJson({PlanFor(2, 1, 16)}), "ranged.json");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->front().input_ranges.count("x"), 1u);
  EXPECT_EQ(read->front().input_ranges.at("x").max, (Shape{16, 4}));
  EXPECT_EQ(DeclaredShapesText(read->front()), "x=2x4 (1x4..16x4)");

  // A range that does not hold the measured shape, of another rank, inverted, or of an input
  // the plan does not have, is refused naming the input.
  for (const Plan& bad : {PlanFor(2, 3, 16), PlanFor(2, 4, 1)}) {
    auto refused = PlanSetFromJson(PlanSetToJson({bad}), "bad.json");
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("input 'x'"), std::string::npos)
        << refused.status().ToString();
  }
  Plan other_rank = PlanAt(2);
  other_rank.input_ranges["x"] = ShapeRange{{1, 4, 1}, {8, 4, 1}};
  EXPECT_FALSE(PlanSetFromJson(PlanSetToJson({other_rank}), "rank.json").ok());
  Plan unknown = PlanAt(2);
  unknown.input_ranges["y"] = ShapeRange{{1, 4}, {8, 4}};
  auto refused = PlanSetFromJson(PlanSetToJson({unknown}), "unknown.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("input_ranges.y"), std::string::npos)
      << refused.status().ToString();
}

TEST(PlanSetTest, AShapeWithinADeclaredRangeTakesThatPlanWithoutAWarning) {
  // The plan at 8 rows is declared for 3..16 rows; the one at 2 for 2 rows only.
  const std::vector<Plan> plans = {PlanAt(2), PlanFor(8, 3, 16)};
  ChosenPlan at_three = ChoosePlan(plans, MatMulRelu(3));  // nearer 2, but declared by 8's
  EXPECT_EQ(at_three.plan, &plans[1]);
  EXPECT_TRUE(at_three.declared);
  ChosenPlan at_forty = ChoosePlan(plans, MatMulRelu(40));  // outside every range: nearest
  EXPECT_EQ(at_forty.plan, &plans[1]);
  EXPECT_FALSE(at_forty.declared);

  std::vector<std::string> warnings;
  auto placement = PlacementAtOtherShapes(plans[1], MatMulRelu(3), Registry(), 1, true, &warnings);
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  // Relu's rule takes at most 2 rows: the group still falls back, and says so; the shapes
  // themselves were declared, so nothing else is said.
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("relu_small on test_small_batch"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace collage
