// Every zoo model optimized by the op-level and by the two-level search (every backend,
// measured on this machine) gives the outputs of the reference kernels run node by node,
// within 1e-3 normalized (the tolerance of the single-backend runs: libraries reassociate
// long reductions).
#include <gtest/gtest.h>

#include <random>

#include "../search/optimize_test_util.h"
#include "collage/session.h"
#include "session/session_access.h"
#include "collage/normalized_error.h"
#include "collage/random_tensor.h"
#include "zoo/zoo.h"
#include "zoo_test_util.h"

namespace collage {
namespace {

class OptimizedZooTest : public ::testing::TestWithParam<std::string> {};

// Op-level first (every candidate measured), then two-level on the same cost database (it
// measures nothing again): the outputs of both plans against the reference kernels.
// The op-level search ends in the end-to-end decision, whose kept finalist is installed; the
// two-level search skips it, so that its own plan is the one run and checked (the decision
// could keep a backend alone). The decision and calibration run at their fewest rounds:
// these models are optimized at every backend, which is most of the test suite's time.
TEST_P(OptimizedZooTest, BothSearchesGiveTheReferenceOutputs) {
  const std::string& model = GetParam();
  testing::TempDir dir;
  auto graph = BuildZooModel(model);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const std::map<std::string, Tensor> inputs = zoo_test::RandomGraphInputs(*graph, 5);
  auto reference = zoo_test::RunWithReferenceKernels(*graph, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  // One thread: ctest runs two of these at once on two cores.
  SessionOptions one_thread;
  one_thread.num_threads = 1;
  auto session = SessionAccess::FromGraph(std::move(*graph), one_thread);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  OptimizeOptions options = testing::QuickOptimize(dir.file("costs.sqlite"));
  options.min_runs = 1;
  options.max_runs = 2;
  options.budget_seconds = 5;
  options.population = 4;
  options.generations = 2;
  options.calibration_rounds = 1;
  options.max_final_rounds = 2;
  for (SearchKind search : {SearchKind::kOpLevel, SearchKind::kTwoLevel}) {
    options.search = search;
    const bool decide = search == SearchKind::kOpLevel;
    options.final_rounds = decide ? 2 : 0;
    OptimizeReport report;
    ASSERT_TRUE((*session)->Optimize(options, &report).ok()) << SearchKindName(search);
    EXPECT_EQ(report.search, search);
    if (decide) {
      // The plan says which finalist of the end-to-end decision it is.
      ASSERT_TRUE(report.kept_finalist.has_value());
      EXPECT_EQ((*session)->placement_source(), *report.kept_finalist);
    } else {
      EXPECT_FALSE(report.kept_finalist.has_value());
      EXPECT_EQ((*session)->placement_source(), PlacementSource::TwoLevel());
    }
    auto outputs = (*session)->Run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
    for (const auto& [name, expected] : *reference) {
      EXPECT_LE(NormalizedError(outputs->at(name), expected), 1e-3)
          << model << " (" << SearchKindName(search) << "), output " << name
          << "; placement: " << (*session)->DescribePlacement();
    }
    // Repeated blocks were measured once (every model but the DCGAN generator, whose layers
    // all differ, has some); the second search found every cost stored.
    if (model != "dcgan") {
      EXPECT_LT(report.distinct_candidates, report.candidates);
    }
    if (search == SearchKind::kTwoLevel) {
      EXPECT_EQ(report.measured, 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Zoo, OptimizedZooTest,
                         ::testing::Values("resnet50", "mobilenetv2", "bert_base", "resnext50",
                                           "dcgan", "nasrnn", "nasnet_a", "resnet3d50", "gpt2"));

}  // namespace
}  // namespace collage
