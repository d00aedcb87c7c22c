// The native elementwise chain on channels-last images (elementwise_chain_nhwc): what it
// offers, the layouts it declares, and its outputs against the reference kernels (the test
// runner converts plain inputs to the declared layouts and the outputs back).
#include "../native_channels_last_chain.h"

#include <gtest/gtest.h>

#include "backend_test_util.h"
#include "collage/available_backends.h"
#include "runtime/placement.h"

namespace collage::testing {
namespace {

constexpr const char* kRule = "elementwise_chain_nhwc";

CompileRequest WholeGraph(const Graph& graph, int threads = 1) {
  SubGraph all(graph.num_nodes());
  for (NodeId n = 0; n < graph.num_nodes(); ++n) all.Add(n);
  return CompileRequest::For(graph, all, kRule, threads);
}

// A SiLU (x · sigmoid(x)), then a squeeze-and-excitation style scale by a [N,C,1,1] input, a
// per-channel constant bias [C,1,1] and a scalar: every operand form of a CNN's chains.
Graph SiluScaleGraph(const Shape& x_shape) {
  GraphBuilder b("silu_scale");
  const int64_t c = x_shape[1];
  ValueId x = b.Input("x", DType::kFloat32, x_shape);
  Shape scale_shape(x_shape.size(), 1);
  scale_shape[0] = x_shape[0];
  scale_shape[1] = c;
  ValueId scale = b.Input("scale", DType::kFloat32, scale_shape);
  Shape bias_shape(x_shape.size() - 1, 1);
  bias_shape[0] = c;
  ValueId s = b.Node("Sigmoid", {x});
  ValueId y = b.Node("Mul", {x, s});
  y = b.Node("Mul", {y, scale});
  y = b.Node("Add", {y, b.RandomNormal("bias", bias_shape, 1.0f)});
  b.Output(b.Node("Mul", {y, b.Scalar<float>("half", 0.5f)}));
  return BuildOrFail(std::move(b));
}

TEST(NativeChannelsLastChain, DeclaresChannelsLastAndMatchesReference) {
  for (const Shape& shape : {Shape{1, 8, 5, 7}, Shape{2, 3, 4, 4}, Shape{1, 6, 2, 3, 4}}) {
    SCOPED_TRACE(ShapeToString(shape));
    Graph g = SiluScaleGraph(shape);
    CompileRequest request = WholeGraph(g);
    auto kernel = native::CompileChannelsLastChain(request);
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    // Inputs of the chain's rank and the output are channels-last (the [N,C,1,1] scale has the
    // same bytes in both layouts, so no conversion is inserted for it).
    ASSERT_EQ((*kernel)->input_layouts().size(), 2u);
    EXPECT_EQ((*kernel)->input_layouts()[0].name(), "channels_last");
    EXPECT_EQ((*kernel)->input_layouts()[1].name(), "channels_last");
    ASSERT_EQ((*kernel)->output_layouts().size(), 1u);
    EXPECT_EQ((*kernel)->output_layouts()[0].name(), "channels_last");
    ExpectMatchesReference("native", request, 1e-5);
    ExpectMatchesReference("native", WholeGraph(g, 2), 1e-5);
  }
}

TEST(NativeChannelsLastChain, TwoFullSizeOperandsAndSmallValuesComputedFirst) {
  // A residual Add of two channels-last images, and a [1,C,1,1] value the chain computes from
  // a constant before its tiles (the prologue), read as a broadcast operand.
  GraphBuilder b("residual");
  ValueId x = b.Input("x", DType::kFloat32, {2, 5, 3, 4});
  ValueId r = b.Input("r", DType::kFloat32, {2, 5, 3, 4});
  ValueId gate = b.Node("Sigmoid", {b.RandomNormal("g", {1, 5, 1, 1}, 1.0f)});
  ValueId y = b.Node("Add", {x, r});
  y = b.Node("Mul", {y, gate});
  b.Output(b.Node("Relu", {y}));
  b.Output(b.Node("Neg", {x}));  // a second output
  Graph g = BuildOrFail(std::move(b));
  ExpectMatchesReference("native", WholeGraph(g), 1e-5);
}

TEST(NativeChannelsLastChain, RuleOffersSingleOpsOfImagesOnly) {
  GraphBuilder b("mixed");
  ValueId image = b.Input("image", DType::kFloat32, {1, 4, 3, 3});
  ValueId rows = b.Input("rows", DType::kFloat32, {6, 8});
  b.Output(b.Node("Relu", {image}));
  b.Output(b.Node("Relu", {rows}));
  b.Output(b.Node("Add", {image, b.Input("hw", DType::kFloat32, {3, 3})}));  // [H,W]: one channel
  Graph g = BuildOrFail(std::move(b));
  std::vector<Candidate> offered = CandidatesOf(g, "native", kRule);
  // The image's Relu and the Add alone (they share no value, so no pair); not the rank-2 Relu.
  ASSERT_EQ(offered.size(), 2u);
  EXPECT_EQ(offered[0].nodes.Nodes(), std::vector<NodeId>{0});
  EXPECT_EQ(offered[1].nodes.Nodes(), std::vector<NodeId>{2});
  for (const Candidate& c : offered) ExpectCandidateMatches(g, "native", c, 1e-6);
}

TEST(NativeChannelsLastChain, RefusesWhatHasNoChannelsLastForm) {
  // A rank-3 input [C, H, W] broadcast against an image has other bytes channels-last (a
  // constant would be re-laid out; an input cannot); Expand's shape operand would need
  // permuting. A rank-2 [H, W] input aligns to one channel: its bytes are the same.
  GraphBuilder b("refused");
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 3, 5});
  ValueId hw = b.Input("chw", DType::kFloat32, {4, 3, 5});
  b.Output(b.Node("Add", {x, hw}));
  b.Output(b.Node("Expand", {x, b.Ints("shape", {2, 4, 3, 5})}));
  Graph g = BuildOrFail(std::move(b));
  EXPECT_FALSE(native::IsChannelsLastChainableNode(g, g.node(0)));
  EXPECT_FALSE(native::IsChannelsLastChainableNode(g, g.node(1)));
  EXPECT_TRUE(CandidatesOf(g, "native", kRule).empty());
  auto kernel = native::CompileChannelsLastChain(WholeGraph(g));
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(kernel.status().message().find("channels-last"), std::string::npos)
      << kernel.status().ToString();
}

TEST(NativeChannelsLastChain, NativeAloneStaysPlain) {
  // Native alone is the reference placement: ties go to its first rules, never this one.
  Graph g = SiluScaleGraph({1, 8, 5, 7});
  auto placement = PlaceOnSingleBackend(g, BackendNamed("native"), GlobalBackendRegistry());
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  for (const PlacedGroup& group : placement->groups) EXPECT_NE(group.rule, kRule);
}

}  // namespace
}  // namespace collage::testing
