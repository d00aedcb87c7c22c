// Every zoo model optimized by the op-level search (every backend, measured on this machine)
// gives the outputs of the reference kernels run node by node, within 1e-3 normalized (the
// tolerance of the single-backend runs: libraries reassociate long reductions).
#include <gtest/gtest.h>

#include <random>

#include "../search/optimize_test_util.h"
#include "collage/session.h"
#include "util/normalized_error.h"
#include "util/random_tensor.h"
#include "zoo/zoo.h"
#include "zoo_test_util.h"

namespace collage {
namespace {

class OptimizedZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OptimizedZooTest, OptimizedPlanMatchesTheReferenceKernels) {
  testing::TempDir dir;
  auto graph = BuildZooModel(GetParam());
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  std::mt19937 rng(5);
  std::map<std::string, Tensor> inputs;
  for (ValueId in : graph->inputs()) {
    const Value& value = graph->value(in);
    inputs[value.name] = RandomTensor(value.type.dtype, value.type.shape, rng);
  }
  auto reference = zoo_test::RunWithReferenceKernels(*graph, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  auto session = Session::FromGraph(std::move(*graph), {.num_threads = 2});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  OptimizeOptions options = testing::QuickOptimize(dir.file("costs.sqlite"));
  options.min_runs = 1;
  options.max_runs = 2;
  OptimizeReport report;
  ASSERT_TRUE((*session)->Optimize(options, &report).ok());
  auto outputs = (*session)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  for (const auto& [name, expected] : *reference) {
    EXPECT_LE(NormalizedError(outputs->at(name), expected), 1e-3)
        << GetParam() << ", output " << name << "; placement: " << (*session)->DescribePlacement();
  }
  // More than one backend takes part in every zoo model.
  std::set<std::string> used;
  for (const GroupReport& group : report.groups) used.insert(group.backend);
  EXPECT_GE(used.size(), 2u) << (*session)->DescribePlacement();
}

INSTANTIATE_TEST_SUITE_P(Zoo, OptimizedZooTest, ::testing::Values("resnet50", "mobilenetv2", "bert_base"));

}  // namespace
}  // namespace collage
