// Strict NaN/Inf mode (SessionOptions::strict_non_finite): only rules declaring that they meet
// the NaN/Inf contract run, every other node on native; plans record the mode, and a strict
// session refuses a plan that uses an undeclared rule. Whether the declarations are true is
// the harness's part (backend_ops --nan-contract=enforce); here, that strict sessions honour
// them, and that NaN then comes out where the reference kernels put it.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "../search/optimize_test_util.h"
#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "collage/session.h"
#include "ops/graph_builder.h"
#include "plan/plan.h"
#include "runtime/placement.h"
#include "session/session_access.h"

namespace collage {
namespace {

using testing::TempDir;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// y = Relu(Conv(x, w) + b), x: float32[1x4x6x6]: a conv_relu group on xnnpack and openblas,
// conv_act on onednn.
Graph ConvRelu() {
  GraphBuilder b("conv_relu", 17, /*seed=*/3);
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 6, 6});
  ValueId w = b.RandomNormal("w", {8, 4, 3, 3}, 0.3f);
  ValueId bias = b.RandomNormal("b", {8}, 0.1f);
  ValueId c = b.Node("Conv", {x, w, bias}, {{"pads", {1, 1, 1, 1}}}, "conv");
  b.Output(b.Node("Relu", {c}, {}, "relu"), "y");
  auto g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return std::move(*g);
}

// y = Relu(x), x: float32[1x4x6x6].
Graph ReluOnly() {
  GraphBuilder b("relu", 17);
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 6, 6});
  b.Output(b.Node("Relu", {x}, {}, "relu"), "y");
  auto g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return std::move(*g);
}

bool Registered(const std::string& backend) {
  return GlobalBackendRegistry().Find(backend) != nullptr;
}

// Random values with a NaN every 7th element.
Tensor InputWithNaN(const Shape& shape) {
  Tensor t(DType::kFloat32, shape);
  std::mt19937 rng(5);
  std::normal_distribution<float> dist;
  float* data = t.data_as<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) data[i] = i % 7 == 3 ? kNaN : dist(rng);
  return t;
}

// Every step of a run, as "backend rule".
std::vector<std::pair<std::string, std::string>> StepsOf(Session& session, const Tensor& x) {
  RunProfile profile;
  auto out = session.Run({{"x", x}}, &profile);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  std::vector<std::pair<std::string, std::string>> steps;
  for (const NodeTiming& t : profile.nodes) {
    if (!IsConversion(t)) steps.emplace_back(t.backend, t.rule);
  }
  return steps;
}

TEST(StrictNonFiniteTest, DeclarationsDefaultToFalseAndFilterCandidates) {
  RuleSet rules;
  rules.Add(Rule("declared", Op("Relu")(Any())).PropagatesNonFinite());
  rules.Add(Rule("fast", Op("Relu")(Any())));
  rules.Add(Fusion("chain").Seed({OpKind::kElementwise}).Grow({OpKind::kElementwise}).MinOps(1));
  EXPECT_TRUE(rules.MeetsNonFiniteContract("declared"));
  EXPECT_FALSE(rules.MeetsNonFiniteContract("fast"));
  EXPECT_FALSE(rules.MeetsNonFiniteContract("chain"));
  EXPECT_FALSE(rules.MeetsNonFiniteContract("absent"));
  const Graph g = ReluOnly();
  EXPECT_EQ(EnumerateCandidates(g, rules).size(), 3u);
  const std::vector<Candidate> strict = EnumerateCandidates(g, rules, /*strict_non_finite=*/true);
  ASSERT_EQ(strict.size(), 1u);
  EXPECT_EQ(strict[0].rule, "declared");
}

TEST(StrictNonFiniteTest, NativeDeclaresEveryRule) {
  const RuleSet& rules = GlobalBackendRegistry().Find("native")->rules();
  for (const Rule& rule : rules.rules())
    EXPECT_TRUE(rule.meets_non_finite_contract()) << rule.name();
  for (const Fusion& f : rules.fusions()) EXPECT_TRUE(f.meets_non_finite_contract()) << f.name();
}

TEST(StrictNonFiniteTest, SingleBackendPlacementUsesOnlyDeclaredRules) {
  const Tensor x = InputWithNaN({1, 4, 6, 6});
  for (const std::string backend : {"xnnpack", "xnnpack_graph", "onednn", "openblas", "eigen"}) {
    if (!Registered(backend)) continue;
    SCOPED_TRACE(backend);
    SessionOptions options;
    options.backend = backend;
    options.num_threads = 1;
    options.strict_non_finite = true;
    auto session = SessionAccess::FromGraph(ConvRelu(), options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    for (const auto& [on, rule] : StepsOf(**session, x)) {
      EXPECT_TRUE(GlobalBackendRegistry().Find(on)->rules().MeetsNonFiniteContract(rule))
          << on << " " << rule;
    }
  }
  if (Registered("xnnpack")) {
    // XNNPACK declares nothing: strict, everything runs on native; by default it fuses the
    // pair (so the filter is what made the difference).
    SessionOptions options;
    options.backend = "xnnpack";
    options.num_threads = 1;
    auto fast = SessionAccess::FromGraph(ConvRelu(), options);
    ASSERT_TRUE(fast.ok()) << fast.status().ToString();
    const auto fast_steps = StepsOf(**fast, x);
    ASSERT_EQ(fast_steps.size(), 1u);
    EXPECT_EQ(fast_steps[0], std::make_pair(std::string("xnnpack"), std::string("conv_relu")));
    options.strict_non_finite = true;
    auto strict = SessionAccess::FromGraph(ConvRelu(), options);
    ASSERT_TRUE(strict.ok()) << strict.status().ToString();
    for (const auto& step : StepsOf(**strict, x)) EXPECT_EQ(step.first, "native");
  }
  if (Registered("openblas")) {
    // Declared: strict mode keeps OpenBLAS's fused conv_relu.
    SessionOptions options;
    options.backend = "openblas";
    options.num_threads = 1;
    options.strict_non_finite = true;
    auto strict = SessionAccess::FromGraph(ConvRelu(), options);
    ASSERT_TRUE(strict.ok()) << strict.status().ToString();
    const auto steps = StepsOf(**strict, x);
    ASSERT_EQ(steps.size(), 1u);
    EXPECT_EQ(steps[0], std::make_pair(std::string("openblas"), std::string("conv_relu")));
  }
}

// NaN where the reference kernels have NaN, the same infinities, finite values close.
void ExpectSameNonFinitePattern(const Tensor& got, const Tensor& want) {
  const std::vector<float> g = got.ToVector<float>(), w = want.ToVector<float>();
  ASSERT_EQ(g.size(), w.size());
  int nans = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      ++nans;
      EXPECT_TRUE(std::isnan(g[i])) << "at " << i << ": " << g[i];
    } else if (std::isinf(w[i])) {
      EXPECT_EQ(g[i], w[i]) << "at " << i;
    } else {
      EXPECT_NEAR(g[i], w[i], 1e-4f * (1.0f + std::fabs(w[i]))) << "at " << i;
    }
  }
  EXPECT_GT(nans, 0) << "the input's NaNs should reach the output";
}

TEST(StrictNonFiniteTest, NaNInGivesNaNOutUnderStrictMode) {
  for (const bool conv : {false, true}) {
    const Graph graph = conv ? ConvRelu() : ReluOnly();
    const Tensor x = InputWithNaN({1, 4, 6, 6});
    auto reference = SessionAccess::FromGraph(graph);
    ASSERT_TRUE(reference.ok());
    auto want = (*reference)->Run({{"x", x}});
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    for (const std::string backend : {"onednn", "xnnpack", "xnnpack_graph", "openblas"}) {
      if (!Registered(backend)) continue;
      SCOPED_TRACE(backend + (conv ? " Conv+Relu" : " Relu"));
      SessionOptions options;
      options.backend = backend;
      options.num_threads = 1;
      options.strict_non_finite = true;
      auto session = SessionAccess::FromGraph(graph, options);
      ASSERT_TRUE(session.ok()) << session.status().ToString();
      auto got = (*session)->Run({{"x", x}});
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      ExpectSameNonFinitePattern(got->at("y"), want->at("y"));
    }
  }
}

TEST(StrictNonFiniteTest, PlansRecordTheModeAndStrictSessionsRefuseUndeclaredRules) {
  if (!Registered("xnnpack")) GTEST_SKIP() << "xnnpack is not in this build";
  TempDir dir;
  SessionOptions fast_options;
  fast_options.backend = "xnnpack";
  fast_options.num_threads = 1;
  auto fast = SessionAccess::FromGraph(ConvRelu(), fast_options);
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  const std::string fast_plan = dir.file("fast.json");
  ASSERT_TRUE((*fast)->SavePlan(fast_plan).ok());
  auto read = ReadPlanFile(fast_plan);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_FALSE(read->strict_non_finite);

  // A strict session refuses it, naming the group, the rule and the way out.
  SessionOptions strict_options;
  strict_options.num_threads = 1;
  strict_options.strict_non_finite = true;
  strict_options.plan_path = fast_plan;
  auto refused = SessionAccess::FromGraph(ConvRelu(), strict_options);
  ASSERT_FALSE(refused.ok());
  const std::string message = refused.status().message();
  for (const char* part : {"fast.json", "group 0", "Conv+Relu", "'conv_relu'", "'xnnpack'",
                           "re-optimize with --strict-nan"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
  }
  // The same session without a plan, or a default one with the plan, is fine.
  strict_options.plan_path.clear();
  auto strict = SessionAccess::FromGraph(ConvRelu(), strict_options);
  ASSERT_TRUE(strict.ok()) << strict.status().ToString();
  EXPECT_FALSE((*strict)->LoadPlan(fast_plan).ok());
  fast_options.plan_path = fast_plan;
  ASSERT_TRUE(SessionAccess::FromGraph(ConvRelu(), fast_options).ok());

  // A strict session's plan says so, and a strict session loads it.
  const std::string strict_plan = dir.file("strict.json");
  ASSERT_TRUE((*strict)->SavePlan(strict_plan).ok());
  read = ReadPlanFile(strict_plan);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->strict_non_finite);
  EXPECT_TRUE((*strict)->LoadPlan(strict_plan).ok());

  // Plans written before the field existed read as not strict; a wrong type is refused.
  nlohmann::json j = nlohmann::json::parse(PlanToJson(*read));
  j.erase("strict_non_finite");
  auto old = PlanFromJson(j.dump(), "old.json");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_FALSE(old->strict_non_finite);
  j["strict_non_finite"] = 1;
  EXPECT_FALSE(PlanFromJson(j.dump(), "typed.json").ok());

  // A plan claiming strict mode whose rules are not declared (edited, or a declaration since
  // withdrawn) still runs in a default session, with a warning.
  auto claimed = ReadPlanFile(fast_plan);
  ASSERT_TRUE(claimed.ok());
  claimed->strict_non_finite = true;
  const std::string claimed_plan = dir.file("claimed.json");
  ASSERT_TRUE(WritePlanFile(*claimed, claimed_plan).ok());
  fast_options.plan_path = claimed_plan;
  auto warned = SessionAccess::FromGraph(ConvRelu(), fast_options);
  ASSERT_TRUE(warned.ok()) << warned.status().ToString();
  bool found = false;
  for (const std::string& w : (*warned)->warnings())
    found |= w.find("strict NaN/Inf mode") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST(StrictNonFiniteTest, OptimizeOnAStrictSessionSearchesOnlyDeclaredRules) {
  TempDir dir;
  SessionOptions options;
  options.num_threads = 1;
  options.strict_non_finite = true;
  auto session = SessionAccess::FromGraph(testing::RepeatedBlocks(2), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  OptimizeReport report;
  ASSERT_TRUE((*session)->Optimize(testing::QuickOptimize(dir.file("costs.sqlite")), &report).ok());
  ASSERT_FALSE(report.groups.empty());
  for (const GroupReport& group : report.groups) {
    EXPECT_TRUE(
        GlobalBackendRegistry().Find(group.backend)->rules().MeetsNonFiniteContract(group.rule))
        << group.backend << " " << group.rule;
    for (const GroupAlternative& rival : group.alternatives) {
      EXPECT_TRUE(
          GlobalBackendRegistry().Find(rival.backend)->rules().MeetsNonFiniteContract(rival.rule))
          << "rival " << rival.backend << " " << rival.rule;
    }
  }
  const std::string plan = dir.file("plan.json");
  ASSERT_TRUE((*session)->SavePlan(plan).ok());
  auto read = ReadPlanFile(plan);
  ASSERT_TRUE(read.ok());
  EXPECT_TRUE(read->strict_non_finite);

  // OptimizeOptions::strict_non_finite makes one search of a default session strict too.
  SessionOptions defaults;
  defaults.num_threads = 1;
  auto other = SessionAccess::FromGraph(testing::RepeatedBlocks(2), defaults);
  ASSERT_TRUE(other.ok());
  OptimizeOptions strict_search = testing::QuickOptimize(dir.file("costs.sqlite"));
  strict_search.strict_non_finite = true;
  OptimizeReport other_report;
  ASSERT_TRUE((*other)->Optimize(strict_search, &other_report).ok());
  for (const GroupReport& group : other_report.groups) {
    EXPECT_TRUE(
        GlobalBackendRegistry().Find(group.backend)->rules().MeetsNonFiniteContract(group.rule))
        << group.backend << " " << group.rule;
  }
}

}  // namespace
}  // namespace collage
