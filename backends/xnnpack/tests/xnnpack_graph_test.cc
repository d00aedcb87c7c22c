// The `xnnpack_graph` backend: regions grown by its Fusion generator compile into one
// XNNPACK runtime and match the reference run node by node. Tolerance 1e-4 normalized
// (convolutions of ≤ 144 terms, products of ≤ 32).
#include <gtest/gtest.h>

#include "backend_test_util.h"
#include "collage/available_backends.h"

namespace collage {
namespace {

using namespace collage::testing;

// x → conv → relu → conv → add(x): a ResNet basic block without normalisation.
Graph ResidualBlock() {
  GraphBuilder b("residual");
  ValueId x = b.Input("x", DType::kFloat32, {1, 8, 10, 10});
  ValueId y =
      b.Node("Conv", {x, b.RandomNormal("w1", {8, 8, 3, 3}, 0.2f), b.RandomNormal("b1", {8}, 0.1f)},
             {{"pads", {1, 1, 1, 1}}}, "conv1");
  y = b.Node("Relu", {y}, {}, "relu");
  y = b.Node("Conv", {y, b.RandomNormal("w2", {8, 8, 3, 3}, 0.2f)}, {{"pads", {1, 1, 1, 1}}},
             "conv2");
  y = b.Node("Add", {y, x}, {}, "add");
  b.Output(y, "y");
  return BuildOrFail(std::move(b));
}

TEST(XnnpackGraphTest, ResidualRegionIsOneRuntime) {
  Graph g = ResidualBlock();
  ExpectRuleMatches(g, "xnnpack_graph", "region", 4);
  // Every smaller region and single op compiles and matches too.
  CheckAllCandidates(g, "xnnpack_graph");
}

TEST(XnnpackGraphTest, MobileNetStyleRegions) {
  GraphBuilder b("mobile");
  ValueId x = b.Input("x", DType::kFloat32, {1, 8, 12, 12});
  ValueId y = b.Node("Conv", {x, b.RandomNormal("w1", {16, 8, 1, 1}, 0.3f)}, {}, "expand");
  y = b.Node("Clip", {y, b.Scalar("lo", 0.0f), b.Scalar("hi", 6.0f)}, {}, "clip1");
  y = b.Node("Conv",
             {y, b.RandomNormal("w2", {16, 1, 3, 3}, 0.3f), b.RandomNormal("b2", {16}, 0.1f)},
             {{"group", 16}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}, "depthwise");
  y = b.Node("Clip", {y, b.Scalar("lo2", 0.0f), b.Scalar("hi2", 6.0f)}, {}, "clip2");
  y = b.Node("Conv", {y, b.RandomNormal("w3", {8, 16, 1, 1}, 0.3f)}, {}, "project");
  y = b.Node("MaxPool", {y}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}, "pool");
  y = b.Node("Mul", {y, b.RandomNormal("scale", {1, 8, 1, 1}, 1.0f)}, {}, "scale");
  y = b.Node("GlobalAveragePool", {y}, {}, "gap");
  b.Output(y, "y");
  Graph g = BuildOrFail(std::move(b));
  ExpectRuleMatches(g, "xnnpack_graph", "region", 8);
  CheckAllCandidates(g, "xnnpack_graph");
}

TEST(XnnpackGraphTest, MlpRegionsPlainLayout) {
  GraphBuilder b("mlp");
  ValueId a = b.Input("a", DType::kFloat32, {4, 16});
  ValueId y = b.Node("MatMul", {a, b.RandomNormal("w1", {16, 32}, 0.3f)}, {}, "fc1");
  y = b.Node("Add", {y, b.RandomNormal("b1", {32}, 0.1f)}, {}, "bias1");
  y = b.Node("Relu", {y}, {}, "relu");
  y = b.Node("Gemm", {y, b.RandomNormal("w2", {10, 32}, 0.3f), b.RandomNormal("b2", {10}, 0.1f)},
             {{"transB", 1}, {"alpha", 0.5f}}, "fc2");
  y = b.Node("Softmax", {y}, {}, "softmax");
  b.Output(y, "y");
  Graph g = BuildOrFail(std::move(b));
  ExpectRuleMatches(g, "xnnpack_graph", "region", 5);
  CheckAllCandidates(g, "xnnpack_graph");
}

TEST(XnnpackGraphTest, ClassifierHeadWithFlatten) {
  // conv → GlobalAveragePool → Flatten → Gemm: the flatten of a 1x1 image is the same bytes
  // in NHWC and plain, so it joins the region as a static reshape.
  GraphBuilder b("head");
  ValueId x = b.Input("x", DType::kFloat32, {2, 8, 5, 5});
  ValueId y = b.Node("Conv", {x, b.RandomNormal("w", {16, 8, 3, 3}, 0.2f)}, {}, "conv");
  y = b.Node("GlobalAveragePool", {y}, {}, "gap");
  y = b.Node("Flatten", {y}, {{"axis", 1}}, "flatten");
  y = b.Node("Gemm", {y, b.RandomNormal("fc", {10, 16}, 0.3f), b.RandomNormal("fcb", {10}, 0.1f)},
             {{"transB", 1}}, "gemm");
  b.Output(y, "y");
  Graph g = BuildOrFail(std::move(b));
  ExpectRuleMatches(g, "xnnpack_graph", "region", 4);
  // Flattening a 5x5 image with channels would reorder bytes: not in any region.
  GraphBuilder c("bad_flatten");
  ValueId z = c.Input("x", DType::kFloat32, {1, 8, 5, 5});
  z = c.Node("Relu", {z}, {}, "relu");
  z = c.Node("Flatten", {z}, {{"axis", 1}}, "flatten");
  c.Output(z, "y");
  Graph h = BuildOrFail(std::move(c));
  EXPECT_TRUE(CandidatesOf(h, "xnnpack_graph", "region").empty());
}

TEST(XnnpackGraphTest, RegionOutputsReadInsideAndOutside) {
  // relu's output is read by conv and add inside the group and returned by the graph: the
  // kernel has two outputs, one of them also an operand inside the runtime. (The Fusion
  // generator does not grow such a group; a placement search may still ask for it.)
  GraphBuilder b("two_outputs");
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 6, 6});
  ValueId r = b.Node("Relu", {x}, {}, "relu");
  ValueId y = b.Node("Conv", {r, b.RandomNormal("w", {4, 4, 3, 3}, 0.3f)}, {{"pads", {1, 1, 1, 1}}},
                     "conv");
  y = b.Node("Add", {y, r}, {}, "add");
  b.Output(r, "r");
  b.Output(y, "y");
  Graph g = BuildOrFail(std::move(b));
  Candidate all{"region", SubGraph(g.num_nodes(), {0, 1, 2})};
  ASSERT_EQ(CompileRequest::For(g, all.nodes, all.rule, 1).outputs.size(), 2u);
  ExpectCandidateMatches(g, "xnnpack_graph", all);
}

// A region compiled for 1 thread (no pool) or 2 (the shared 2-thread pool) runs on it.
TEST(XnnpackGraphTest, RunsOnThePoolOfItsThreadCount) {
  Graph g = ResidualBlock();
  std::vector<Candidate> regions = CandidatesOf(g, "xnnpack_graph", "region");
  ASSERT_FALSE(regions.empty());
  const Candidate& region = regions.back();
  for (int threads : {2, 1}) {
    CompileRequest request = CompileRequest::For(g, region.nodes, region.rule, threads);
    auto runner =
        KernelRunner::Create(BackendNamed("xnnpack_graph"), request, GlobalBackendRegistry());
    ASSERT_TRUE(runner.ok()) << runner.status().ToString();
    std::vector<Tensor> inputs = RandomInputs(request, 11 + threads);
    auto got = (*runner)->Run(inputs);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    auto ref = RunReferenceGroup(request, inputs);
    ASSERT_TRUE(ref.ok());
    EXPECT_LE(NormalizedError((*got)[0], (*ref)[0]), 1e-4) << threads << " threads";
  }
}

TEST(XnnpackGraphTest, RefusesLayoutBreakingOps) {
  // A MatMul on a 4-D value (NHWC inside a region) and a 4-D softmax are not offered.
  GraphBuilder b("refuse");
  ValueId x = b.Input("x", DType::kFloat32, {1, 2, 3, 8});
  ValueId y = b.Node("MatMul", {x, b.RandomNormal("w", {8, 4}, 0.3f)}, {}, "mm");
  y = b.Node("Softmax", {y}, {}, "softmax");
  b.Output(y, "y");
  Graph g = BuildOrFail(std::move(b));
  EXPECT_TRUE(EnumerateCandidates(g, BackendNamed("xnnpack_graph").rules()).empty());
  // The operator backend runs both (plain layout).
  EXPECT_TRUE(RuleOffers(g, "xnnpack", "matmul"));
  EXPECT_TRUE(RuleOffers(g, "xnnpack", "softmax"));
}

}  // namespace
}  // namespace collage
