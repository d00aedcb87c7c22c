// The ops between the convolutions of DenseNet-like and SqueezeNet-like networks on the oneDNN
// backend (Concat, BatchNormalization with a fused activation, Resize), plain and "_blocked": every
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
    for (int64_t c : channels) {
      shapes.push_back({1, c, 7, 9});
      total += c;
    }
    SCOPED_TRACE("channels " + ShapeToString(channels));
    auto offered = CheckAllCandidates(ConcatGraph(shapes, 1), "onednn", 1e-5);
    EXPECT_TRUE(Offers(offered, "concat"));
    // Whole blocks or not: oneDNN's concat reads any blocked format (a reorder per input into
    // a view of the output where the inputs do not fill whole blocks).
    EXPECT_EQ(Offers(offered, "concat_blocked"), HasBlockedImageForm({1, total, 7, 9}));
  }
  // 5-D (3-D convolutions), and the blocked variant never for a 3-D sequence.
  auto offered =
      CheckAllCandidates(ConcatGraph({{1, 16, 3, 4, 5}, {1, 32, 3, 4, 5}}, 1), "onednn", 1e-5);
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
  auto kernel =
      BackendNamed("onednn").Compile(CompileRequest::For(g, concat->nodes, concat->rule, 1));
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
    for (const Shape& shape :
         std::vector<Shape>{{2, 24, 5, 5}, {1, 64, 7, 7}, {2, 32, 3, 4, 5}, {4, 24}}) {
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

struct ResizeCase {
  std::string mode;
  std::string transform;
  std::string nearest_mode;
  Shape in;
  Shape out;  // by sizes; by scales out / in when `by_scales`
  bool by_scales = false;
  std::vector<float> scales = {};  // given: these scales (the output length rounds down)
};

Graph ResizeGraph(const ResizeCase& c) {
  GraphBuilder b("resize");
  ValueId x = b.Input("x", DType::kFloat32, c.in);
  NamedAttributes attrs{{"mode", c.mode},
                        {"coordinate_transformation_mode", c.transform},
                        {"nearest_mode", c.nearest_mode}};
  if (c.by_scales) {
    std::vector<float> scales = c.scales;
    for (size_t d = 0; d < c.in.size() && c.scales.empty(); ++d) {
      scales.push_back(static_cast<float>(c.out[d]) / static_cast<float>(c.in[d]));
    }
    ValueId s = b.Constant<float>("scales", {static_cast<int64_t>(scales.size())}, scales);
    b.Output(b.Node("Resize", {x, kNoValue, s}, attrs));
  } else {
    b.Output(b.Node("Resize", {x, kNoValue, kNoValue, b.Ints("sizes", c.out)}, attrs));
  }
  return BuildOrFail(std::move(b));
}

std::string Describe(const ResizeCase& c) {
  return c.mode + " " + c.transform + " " + c.nearest_mode + " " + ShapeToString(c.in) + " -> " +
         ShapeToString(c.out) + (c.by_scales ? " (scales)" : " (sizes)");
}

// The forms exporters write (PyTorch's nearest upsampling is asymmetric + floor; its bilinear
// with align_corners=False is pytorch_half_pixel) and the half_pixel forms oneDNN computes.
TEST(OnednnResize, MatchingModesAreOffered) {
  const std::vector<ResizeCase> cases = {
      {"nearest", "asymmetric", "floor", {1, 16, 5, 7}, {1, 16, 10, 14}, true},
      {"nearest", "asymmetric", "floor", {2, 8, 4, 4}, {2, 8, 12, 8}, true},
      {"nearest", "half_pixel", "round_prefer_ceil", {1, 16, 7, 5}, {1, 16, 5, 11}},
      {"nearest", "half_pixel", "round_prefer_floor", {1, 16, 5, 5}, {1, 16, 10, 15}, true},
      {"nearest", "asymmetric", "floor", {1, 4, 6}, {1, 4, 18}, true},
      {"nearest", "asymmetric", "floor", {1, 4, 2, 3, 4}, {1, 4, 4, 6, 8}, true},
      {"linear", "half_pixel", "round_prefer_floor", {1, 16, 5, 8}, {1, 16, 8, 3}},
      {"linear", "pytorch_half_pixel", "round_prefer_floor", {1, 16, 6, 6}, {1, 16, 12, 12}, true},
      {"linear", "half_pixel", "round_prefer_floor", {1, 16, 4, 4}, {1, 16, 6, 6}, true},
      {"linear", "half_pixel", "round_prefer_floor", {2, 3, 7}, {2, 3, 10}},
      {"linear", "half_pixel", "round_prefer_floor", {1, 8, 3, 4, 5}, {1, 8, 6, 8, 5}},
  };
  for (const ResizeCase& c : cases) {
    SCOPED_TRACE(Describe(c));
    // Interpolation weights computed in float by oneDNN and in double by the reference.
    auto offered = CheckAllCandidates(ResizeGraph(c), "onednn", 1e-5);
    EXPECT_TRUE(Offers(offered, "resize"));
    if (c.in.size() >= 4) {
      EXPECT_EQ(Offers(offered, "resize_blocked"), HasBlockedImageForm(c.in));
    }
  }
}

TEST(OnednnResize, UpsampleNearestIsOffered) {
  for (int64_t opset : {7, 9}) {
    GraphBuilder b("upsample", opset);
    ValueId x = b.Input("x", DType::kFloat32, {1, 16, 5, 6});
    ValueId y;
    if (opset == 7) {
      y = b.Node("Upsample", {x},
                 {{"mode", "nearest"}, {"scales", std::vector<float>{1, 1, 2, 3}}});
    } else {
      y = b.Node("Upsample", {x, b.Constant<float>("scales", {4}, {1, 1, 2, 3})},
                 {{"mode", "nearest"}});
    }
    b.Output(y);
    EXPECT_TRUE(Offers(CheckAllCandidates(BuildOrFail(std::move(b)), "onednn", 1e-5), "resize"))
        << opset;
  }
}

// Forms whose coordinates oneDNN does not compute: refused, native runs them.
TEST(OnednnResize, OtherModesAreNotOffered) {
  const std::vector<ResizeCase> cases = {
      {"linear", "align_corners", "round_prefer_floor", {1, 16, 5, 5}, {1, 16, 10, 10}, true},
      {"linear", "asymmetric", "round_prefer_floor", {1, 16, 5, 5}, {1, 16, 10, 10}, true},
      // oneDNN's index is 2o + 1 (a tie rounded up), ONNX's 2o.
      {"nearest", "asymmetric", "floor", {1, 16, 8, 8}, {1, 16, 4, 4}, true},
      {"nearest", "half_pixel", "round_prefer_floor", {1, 16, 8, 8}, {1, 16, 4, 4}},
      {"nearest", "align_corners", "round_prefer_floor", {1, 16, 5, 5}, {1, 16, 9, 9}},
      {"cubic", "half_pixel", "round_prefer_floor", {1, 16, 5, 5}, {1, 16, 10, 10}},
      // A scale whose output length is rounded down: ONNX divides by 1.5, oneDNN by 7 / 5.
      {"linear",
       "half_pixel",
       "round_prefer_floor",
       {1, 16, 5, 5},
       {1, 16, 7, 7},
       true,
       {1, 1, 1.5f, 1.5f}},
      // Channels and batch are not resampled by oneDNN.
      {"nearest", "asymmetric", "floor", {1, 4, 5, 5}, {1, 8, 5, 5}, true},
  };
  for (const ResizeCase& c : cases) {
    SCOPED_TRACE(Describe(c));
    Graph g = ResizeGraph(c);
    EXPECT_FALSE(RuleOffers(g, "onednn", "resize"));
    EXPECT_FALSE(RuleOffers(g, "onednn", "resize_blocked"));
  }
}

// Every combination of mode, coordinate transform, nearest mode and lengths: what the rule
// offers must match the reference (the reference kernel decides which ONNX modes oneDNN
// computes), and the matching forms above are among them.
TEST(OnednnResize, WhateverIsOfferedMatchesTheReference) {
  int offered = 0, total = 0;
  for (const std::string mode : {"nearest", "linear"}) {
    for (const std::string transform :
         {"half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners"}) {
      for (const std::string nearest :
           {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
        if (mode == "linear" && nearest != "round_prefer_floor") continue;
        for (int64_t in : {1, 3, 4, 5}) {
          for (int64_t out : {1, 2, 3, 6, 7, 8, 10}) {
            for (bool by_scales : {false, true}) {
              ResizeCase c{mode, transform, nearest, {1, 2, in, 3}, {1, 2, out, 3}, by_scales};
              SCOPED_TRACE(Describe(c));
              ++total;
              if (Offers(CheckAllCandidates(ResizeGraph(c), "onednn", 1e-5), "resize")) ++offered;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(offered, 0);
  EXPECT_LT(offered, total);
}

}  // namespace
}  // namespace collage::testing
