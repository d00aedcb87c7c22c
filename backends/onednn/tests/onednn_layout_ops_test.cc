// The ops between the convolutions of DenseNet-like and SqueezeNet-like networks on the oneDNN
// backend (Concat, BatchNormalization with a fused activation), plain and "_blocked": every
// candidate against the reference kernels, and the blocked ones in the format the blocked
// convolutions produce.
#include "backend_test_util.h"

namespace collage::testing {
namespace {

// Whether the oneDNN backend has a blocked form for an image of `shape` on this CPU: its
// eltwise_blocked rule is offered exactly then. The blocked variants' offers depend on it
// (channels-last on AVX-512, nChw8c-style blocks elsewhere).
bool HasBlockedImageForm(const Shape& shape) {
  GraphBuilder b("probe");
  b.Output(b.Node("Relu", {b.Input("x", DType::kFloat32, shape)}));
  return RuleOffers(BuildOrFail(std::move(b)), "onednn", "eltwise_blocked");
}

// A graph Concat(inputs of `shapes`) along `axis`.
Graph ConcatGraph(const std::vector<Shape>& shapes, int64_t axis) {
  GraphBuilder b("concat");
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    inputs.push_back(b.Input("x" + std::to_string(i), DType::kFloat32, shapes[i]));
  }
  b.Output(b.Node("Concat", inputs, {{"axis", axis}}));
  return BuildOrFail(std::move(b));
}

// `base` with dim `axis` (negative counts from the end) set to `extent`.
Shape WithExtent(Shape base, int64_t axis, int64_t extent) {
  if (axis < 0) axis += static_cast<int64_t>(base.size());
  base[static_cast<size_t>(axis)] = extent;
  return base;
}

TEST(OnednnConcat, EveryAxisAndInputCount) {
  const Shape base = {2, 16, 5, 6};
  const std::vector<int64_t> extents = {3, 1, 4, 2, 5};
  for (int64_t axis : {0, 1, 2, 3, -1, -3, -4}) {
    for (size_t n = 1; n <= 5; ++n) {
      std::vector<Shape> shapes;
      for (size_t i = 0; i < n; ++i) shapes.push_back(WithExtent(base, axis, extents[i]));
      SCOPED_TRACE("axis " + std::to_string(axis) + ", " + std::to_string(n) + " inputs");
      // A copy: exact up to float32 rounding of nothing.
      auto offered = CheckAllCandidates(ConcatGraph(shapes, axis), "onednn", 1e-5);
      EXPECT_TRUE(Offers(offered, "concat"));
    }
  }
}

TEST(OnednnConcat, ChannelsInAndOutOfBlockMultiples) {
  // DenseNet concatenates 64 + 32k channels; SqueezeNet's fire modules 2 x (16..256).
  const std::vector<std::vector<int64_t>> channel_lists = {
      {64, 32}, {128, 32, 32}, {16, 16}, {64, 64, 32, 32, 16}, {24, 24}, {12, 20}, {3, 5, 7}, {1}};
  for (const auto& channels : channel_lists) {
    std::vector<Shape> shapes;
    int64_t total = 0;
    bool all_multiples = true;
    for (int64_t c : channels) {
      shapes.push_back({1, c, 7, 9});
      total += c;
      all_multiples = all_multiples && c % 16 == 0;
    }
    SCOPED_TRACE("channels " + ShapeToString(channels));
    auto offered = CheckAllCandidates(ConcatGraph(shapes, 1), "onednn", 1e-5);
    EXPECT_TRUE(Offers(offered, "concat"));
    // Multiples of 16 fill whole blocks in every format oneDNN's convolutions pick, so
    // oneDNN's copying implementation runs them: the blocked variant must be offered.
    if (all_multiples && HasBlockedImageForm({1, total, 7, 9})) {
      EXPECT_TRUE(Offers(offered, "concat_blocked"));
    }
  }
  // 5-D (3-D convolutions), and the blocked variant never for a 3-D sequence.
  auto offered = CheckAllCandidates(ConcatGraph({{1, 16, 3, 4, 5}, {1, 32, 3, 4, 5}}, 1), "onednn", 1e-5);
  EXPECT_TRUE(Offers(offered, "concat"));
  EXPECT_EQ(Offers(offered, "concat_blocked"), HasBlockedImageForm({1, 48, 3, 4, 5}));
  offered = CheckAllCandidates(ConcatGraph({{1, 16, 30}, {1, 16, 30}}, 1), "onednn", 1e-5);
  EXPECT_FALSE(Offers(offered, "concat_blocked"));
}

TEST(OnednnConcat, SameInputTwiceAndConstantInput) {
  GraphBuilder b("concat_repeat");
  ValueId x = b.Input("x", DType::kFloat32, {1, 16, 4, 4});
  ValueId c = b.RandomNormal("c", {1, 8, 4, 4}, 1.0f);
  b.Output(b.Node("Concat", {x, c, x}, {{"axis", 1}}));
  auto offered = CheckAllCandidates(BuildOrFail(std::move(b)), "onednn", 1e-5);
  EXPECT_TRUE(Offers(offered, "concat"));
}

TEST(OnednnConcat, OtherDTypesAndEmptyInputsAreNotOffered) {
  {
    GraphBuilder b("concat_int");
    ValueId x = b.Input("x", DType::kInt64, {2, 3});
    ValueId y = b.Input("y", DType::kInt64, {2, 3});
    b.Output(b.Node("Concat", {x, y}, {{"axis", 0}}));
    EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(b)), "onednn", "concat"));
  }
  {
    GraphBuilder b("concat_empty");
    ValueId x = b.Input("x", DType::kFloat32, {2, 0});
    ValueId y = b.Input("y", DType::kFloat32, {2, 3});
    b.Output(b.Node("Concat", {x, y}, {{"axis", 1}}));
    EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(b)), "onednn", "concat"));
  }
}

// A fire module's expand step: two blocked convolutions feed a blocked Concat, which reads
// both in the format they write (no conversion between them) and writes that format itself.
TEST(OnednnConcat, BlockedConcatReadsWhatBlockedConvsWrite) {
  GraphBuilder b("fire");
  ValueId x = b.Input("x", DType::kFloat32, {1, 16, 9, 9});
  ValueId e1 = b.Node("Conv", {x, b.RandomNormal("w1", {32, 16, 1, 1}, 0.2f)}, {}, "expand1x1");
  ValueId e3 = b.Node("Conv", {x, b.RandomNormal("w3", {32, 16, 3, 3}, 0.1f)},
                      {{"pads", {1, 1, 1, 1}}}, "expand3x3");
  b.Output(b.Node("Concat", {e1, e3}, {{"axis", 1}}, "concat"));
  Graph g = BuildOrFail(std::move(b));
  if (!HasBlockedImageForm({1, 64, 9, 9})) GTEST_SKIP() << "no blocked form on this CPU";
  std::vector<Layout> conv_outputs;
  std::optional<Candidate> concat;
  for (const Candidate& c : EnumerateCandidates(g, BackendNamed("onednn").rules())) {
    if (c.rule == "concat_blocked") concat = c;
    if (c.rule != "conv_blocked") continue;
    auto kernel = BackendNamed("onednn").Compile(CompileRequest::For(g, c.nodes, c.rule, 1));
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    conv_outputs.push_back((*kernel)->output_layouts()[0]);
  }
  ASSERT_EQ(conv_outputs.size(), 2u);
  ASSERT_TRUE(concat.has_value());
  ExpectCandidateMatches(g, "onednn", *concat, 1e-5);
  auto kernel = BackendNamed("onednn").Compile(CompileRequest::For(g, concat->nodes, concat->rule, 1));
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  EXPECT_EQ((*kernel)->input_layouts(), conv_outputs);
  EXPECT_NE((*kernel)->output_layouts()[0], Layout::Plain());
}

// The layout eltwise_blocked reads a tensor of `shape` in: the blocked form of that shape.
Layout BlockedFormOf(const Shape& shape) {
  GraphBuilder b("probe");
  b.Output(b.Node("Relu", {b.Input("x", DType::kFloat32, shape)}));
  Graph g = BuildOrFail(std::move(b));
  for (const Candidate& c : CandidatesOf(g, "onednn", "eltwise_blocked")) {
    auto kernel = BackendNamed("onednn").Compile(CompileRequest::For(g, c.nodes, c.rule, 1));
    if (kernel.ok()) return (*kernel)->input_layouts()[0];
  }
  return Layout::Plain();
}

// Concat of tensors whose blocked forms may differ (on AVX2, a 3-channel image has no
// blocked convolution form where a 32-channel one has nChw8c): each input is read in its own
// shape's form, so that every producer's output is taken as it is.
TEST(OnednnConcat, EachInputInItsOwnBlockedForm) {
  const std::vector<Shape> shapes = {{1, 3, 8, 8}, {1, 32, 8, 8}, {1, 12, 8, 8}};
  Graph g = ConcatGraph(shapes, 1);
  auto offered = CheckAllCandidates(g, "onednn", 1e-5);
  EXPECT_TRUE(Offers(offered, "concat"));
  for (const Candidate& c : CandidatesOf(g, "onednn", "concat_blocked")) {
    auto kernel = BackendNamed("onednn").Compile(CompileRequest::For(g, c.nodes, c.rule, 1));
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    for (size_t i = 0; i < shapes.size(); ++i) {
      EXPECT_EQ((*kernel)->input_layouts()[i], BlockedFormOf(shapes[i])) << i;
    }
  }
}

// BatchNormalization followed by `activation` (Clip with bounds [0, 6]).
Graph BatchNormActGraph(const Shape& shape, const std::string& activation) {
  GraphBuilder b("bn_act");
  const int64_t c = shape[1];
  ValueId x = b.Input("x", DType::kFloat32, shape);
  ValueId s = b.RandomNormal("s", {c}, 0.5f, 1.0f);
  ValueId bias = b.RandomNormal("b", {c}, 0.5f);
  ValueId mean = b.RandomNormal("m", {c}, 0.5f);
  ValueId var = b.RandomUniform("v", {c}, 0.5f, 2.0f);
  ValueId y = b.Node("BatchNormalization", {x, s, bias, mean, var}, {{"epsilon", 1e-5f}});
  if (activation == "Clip") {
    y = b.Node("Clip", {y, b.Scalar<float>("lo", 0.0f), b.Scalar<float>("hi", 6.0f)});
  } else if (activation == "LeakyRelu") {
    y = b.Node("LeakyRelu", {y}, {{"alpha", 0.1f}});
  } else {
    y = b.Node(activation, {y});
  }
  b.Output(y);
  return BuildOrFail(std::move(b));
}

TEST(OnednnBatchNormAct, ReluAndLeakyReluFuse) {
  for (const std::string activation : {"Relu", "LeakyRelu"}) {
    for (const Shape& shape : std::vector<Shape>{{2, 24, 5, 5}, {1, 64, 7, 7}, {2, 32, 3, 4, 5}, {4, 24}}) {
      SCOPED_TRACE(activation + " " + ShapeToString(shape));
      auto offered = CheckAllCandidates(BatchNormActGraph(shape, activation), "onednn", 1e-5);
      EXPECT_TRUE(Offers(offered, "batch_norm_act"));
      EXPECT_EQ(Offers(offered, "batch_norm_act_blocked"), HasBlockedImageForm(shape));
    }
  }
}

// oneDNN 2.6's batch normalization creates no primitive with these post-ops: the fused rule
// is not offered, BatchNormalization and the activation run as two groups.
TEST(OnednnBatchNormAct, OtherActivationsAreNotFused) {
  for (const std::string activation : {"Clip", "Sigmoid", "Tanh", "HardSwish"}) {
    SCOPED_TRACE(activation);
    auto offered = CheckAllCandidates(BatchNormActGraph({2, 24, 5, 5}, activation), "onednn", 1e-4);
    EXPECT_FALSE(Offers(offered, "batch_norm_act"));
    EXPECT_FALSE(Offers(offered, "batch_norm_act_blocked"));
    EXPECT_TRUE(Offers(offered, "batch_norm"));
  }
}

}  // namespace
}  // namespace collage::testing
