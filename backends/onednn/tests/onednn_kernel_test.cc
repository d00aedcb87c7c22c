// One oneDNN kernel run by several threads at once: each run binds its own buffers (one run
// reuses the kernel's memory objects, the others make their own), and every run's output is
// the reference's.
#include <gtest/gtest.h>

#include <vector>

#include "backend_test_util.h"

namespace collage::testing {
namespace {

TEST(OnednnKernel, ConcurrentRunsOnOneKernelAgreeWithTheReference) {
  GraphBuilder b("conv_relu");
  ValueId x = b.Input("x", DType::kFloat32, {1, 16, 12, 12});
  ValueId y = b.Node(
      "Conv", {x, b.RandomNormal("w", {32, 16, 3, 3}, 0.2f), b.RandomNormal("b", {32}, 0.2f)},
      {{"pads", {1, 1, 1, 1}}}, "conv");
  b.Output(b.Node("Relu", {y}));
  Graph g = BuildOrFail(std::move(b));
  // The plain variant: RunKernel binds row-major buffers.
  std::vector<Candidate> candidates = CandidatesOf(g, "onednn", "conv_act");
  ASSERT_EQ(candidates.size(), 1u);
  CompileRequest request = CompileRequest::For(g, candidates[0].nodes, "conv_act", 2);
  auto kernel = BackendNamed("onednn").Compile(request);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  constexpr int kThreads = 3;
  const std::vector<double> errors =
      WorstErrorsOfConcurrentRuns(**kernel, request, kThreads, /*runs=*/400, /*seed=*/200);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_GE(errors[static_cast<size_t>(t)], 0.0) << "thread " << t << " failed";
    EXPECT_LE(errors[static_cast<size_t>(t)], 1e-4) << "thread " << t;
  }
}

}  // namespace
}  // namespace collage::testing
