// Every backend's offers for a graph enumerated once per optimize (runtime/candidate_index.h).
#include "runtime/candidate_index.h"

#include <gtest/gtest.h>

#include <memory>

#include "collage/available_backends.h"
#include "collage/sdk/errors.h"
#include "collage/sdk/kernel.h"
#include "optimize_test_util.h"
#include "search/optimizer.h"

namespace collage {

Status RegisterNativeBackend(BackendRegistry& registry);  // backends/native

namespace {

using testing::QuickOptimize;
using testing::RepeatedBlocks;
using testing::TempDir;

// A graph-level backend whose one rule looks at every Relu and offers none of them, counting
// how often it is asked: each enumeration of its rules asks once per Relu.
class CountingBackend : public Backend {
 public:
  explicit CountingBackend(int* asked) {
    rules_.Add(
        Rule("relu_never", Op("Relu")(Any()))
            .Where([asked](const Match&) {
              ++*asked;
              return false;
            })
            .Compiles([](const CompileRequest&, const Match&) -> StatusOr<std::unique_ptr<Kernel>> {
              return Unsupported("never offered");
            }));
  }
  std::string name() const override { return "counting"; }
  std::string version() const override { return "1"; }
  bool graph_level() const override { return true; }
  const RuleSet& rules() const override { return rules_; }

 private:
  RuleSet rules_;
};

TEST(CandidateIndexTest, HoldsWhatEachBackendOffersInEveryPrecisionAsked) {
  const Graph graph = RepeatedBlocks(2);
  BackendRegistry& registry = GlobalBackendRegistry();
  auto index = CandidateIndex::Build(graph, {"onednn", "onednn"}, registry, false,
                                     {Precision::kFloat32, Precision::kBfloat16});
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  ASSERT_EQ(index->backends().size(), 2u);
  EXPECT_EQ(index->backends()[0]->name(), "native");
  EXPECT_EQ(index->backends()[1]->name(), "onednn");
  for (const Backend* backend : index->backends()) {
    const std::vector<Candidate> float32 = EnumerateCandidates(graph, backend->rules());
    const std::vector<const Candidate*> offered = index->Float32OffersOf(backend->name());
    ASSERT_EQ(offered.size(), float32.size()) << backend->name();
    for (size_t c = 0; c < offered.size(); ++c) {
      EXPECT_EQ(offered[c]->rule, float32[c].rule);
      EXPECT_EQ(offered[c]->nodes, float32[c].nodes);
    }
    EXPECT_EQ(index->OffersOf(backend->name()).size(),
              EnumerateCandidates(graph, backend->rules(), false,
                                  {Precision::kFloat32, Precision::kBfloat16})
                  .size());
  }
  EXPECT_TRUE(index->OffersOf("xnnpack_graph").empty()) << "not asked for";
  auto unknown = CandidateIndex::Build(graph, {"nobody"}, registry, false, {Precision::kFloat32});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("no backend named 'nobody'"), std::string::npos);
}

// The measured candidates, each backend alone (calibration's plans and the decision's
// finalists), the reference placement, the accuracy check and the two-level search's regions
// all come from one enumeration.
TEST(CandidateIndexTest, AnOptimizeEnumeratesEachBackendsRulesOnce) {
  TempDir dir;
  const int blocks = 3;
  const Graph graph = RepeatedBlocks(blocks);
  for (PrecisionChoice precision : {PrecisionChoice::kFloat32, PrecisionChoice::kBfloat16}) {
    for (SearchKind search : {SearchKind::kOpLevel, SearchKind::kTwoLevel}) {
      int asked = 0;
      BackendRegistry registry;
      ASSERT_TRUE(RegisterNativeBackend(registry).ok());
      ASSERT_TRUE(registry.Register(std::make_unique<CountingBackend>(&asked)).ok());
      OptimizeOptions options = QuickOptimize(dir.file("costs.sqlite"));
      options.workers = MeasureWorkers::InProcess();
      options.search = search;
      options.budget_seconds = 1;
      options.generations = 2;
      options.population = 2;
      options.precision = precision;
      auto result = OptimizePlacement(graph, registry, 1, options);
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      EXPECT_FALSE(result->report.finalists.empty()) << "the decision ran";
      EXPECT_EQ(asked, blocks) << SearchKindName(search) << ", " << PrecisionChoiceName(precision);
    }
  }
}

}  // namespace
}  // namespace collage
