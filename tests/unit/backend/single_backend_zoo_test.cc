// Every zoo model on every built-in backend of the registry (`--backend NAME`: the backend
// where one of its rules matches, native elsewhere, layout conversions between) gives the
// outputs of the reference kernels run node by node. Tolerance 1e-3 normalized (max|a-b| / max(1, max|ref|)):
// the backends reassociate long reductions (ResNet's 4608-long convolution sums, BERT's
// 3072-long matmuls, the 3-D ResNet's 6912-long ones) and use other exp/erf approximations than the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>

#include "../zoo/zoo_test_util.h"
#include "builtin/builtin_backends.h"
#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "collage/session.h"
#include "session/session_access.h"
#include "cost/search_candidate.h"
#include "collage/normalized_error.h"
#include "collage/random_tensor.h"
#include "zoo/zoo.h"

namespace collage {
namespace {

constexpr double kTolerance = 1e-3;

class SingleBackendZooTest
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(SingleBackendZooTest, OutputsMatchTheReferenceKernels) {
  const auto& [backend, model] = GetParam();
  for (const SkippedBackend& skipped : SkippedBuiltinBackends()) {
    if (skipped.name == backend) GTEST_SKIP() << backend << " is not built: " << skipped.reason;
  }
  ASSERT_NE(GlobalBackendRegistry().Find(backend), nullptr) << backend;
  auto graph = BuildZooModel(model);
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  // Whether a rule of the backend offers a group anywhere in the model (openblas and mkl, GEMM
  // and Conv, and eigen, GEMM and elementwise chains, have nothing to offer the DCGAN
  // generator, made of ConvTranspose).
  auto candidates = EnumerateSearchCandidates(*graph, {backend}, GlobalBackendRegistry());
  ASSERT_TRUE(candidates.ok()) << candidates.status().ToString();
  // The structured binding is captured by copy: clang refuses to capture one.
  const bool backend_has_rules =
      std::any_of(candidates->begin(), candidates->end(),
                  [name = backend](const SearchCandidate& c) { return c.backend == name; });
  const std::map<std::string, Tensor> inputs = zoo_test::RandomGraphInputs(*graph, 5);
  auto reference = zoo_test::RunWithReferenceKernels(*graph, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  for (const auto& [name, expected] : *reference) {
    // The random weights keep the reference outputs finite and far from constant, so that
    // agreeing with them means something.
    const zoo_test::Stats stats = zoo_test::ComputeStats(expected);
    ASSERT_EQ(stats.non_finite, 0) << model << ", output " << name;
    ASSERT_GT(stats.stddev, 1e-2) << model << ", output " << name;
  }

  SessionOptions options;
  options.backend = backend;
  options.num_threads = 2;
  auto session = SessionAccess::FromGraph(std::move(*graph), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto outputs = (*session)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  for (const auto& [name, expected] : *reference) {
    double error = NormalizedError(outputs->at(name), expected);
    EXPECT_LE(error, kTolerance) << backend << " on " << model << ", output " << name
                                 << "; placement: " << (*session)->DescribePlacement();
  }
  if (backend != "native" && backend_has_rules) {
    // The backend took part wherever a rule of it matches.
    EXPECT_NE((*session)->DescribePlacement().find(backend + ":"), std::string::npos)
        << (*session)->DescribePlacement();
  }
}

// Every built-in backend of the registry, and each backend folder the build left out (whose
// tests skip, naming the reason).
std::vector<std::string> BackendsToTest() {
  std::vector<std::string> names = BuiltinBackendNames();
  for (const SkippedBackend& skipped : SkippedBuiltinBackends()) names.push_back(skipped.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, SingleBackendZooTest,
    ::testing::Combine(::testing::ValuesIn(BackendsToTest()),
                       ::testing::Values("resnet50", "mobilenetv2", "bert_base", "resnext50",
                                         "dcgan", "nasrnn", "nasnet_a", "resnet3d50", "gpt2")),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param); });

}  // namespace
}  // namespace collage
