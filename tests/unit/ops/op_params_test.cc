// The op parameter readers (collage/sdk/op_params.h) against the ONNX spec's formulas,
// worked out by hand here: every auto_pad mode (the odd pad of SAME_UPPER at the end, of
// SAME_LOWER at the beginning), dilations, 1-D to 3-D, ConvTranspose's output_shape against
// its pads, pooling's ceil_mode, Clip's bounds at opsets 6, 11 and 13, the Softmax axis before
// and from opset 13, Gemm's defaults, and the errors for bad attributes, which must name the
// node and the attribute.
#include "collage/sdk/op_params.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace collage {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

Node MakeNode(const std::string& op_type, const std::string& name,
              std::vector<std::pair<std::string, Attribute>> attributes = {}) {
  Node node;
  node.op_type = op_type;
  node.name = name;
  for (auto& [key, value] : attributes) node.attributes.Set(key, std::move(value));
  return node;
}

using Ints = std::vector<int64_t>;

// The status's message contains every one of `parts`.
void ExpectError(const Status& status, StatusCode code, const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), code) << status.ToString();
  for (const std::string& part : parts) {
    EXPECT_NE(status.message().find(part), std::string::npos)
        << "'" << part << "' not in: " << status.message();
  }
}

// ---- Conv -------------------------------------------------------------------------------

TEST(OpParamsConvTest, ExplicitPadsAndStridesIn2D) {
  const Node conv = MakeNode("Conv", "c", {{"pads", Ints{1, 2, 0, 1}}, {"strides", Ints{2, 2}}});
  StatusOr<ConvParams> p = ReadConvParams(conv, {1, 2, 7, 7}, {4, 2, 3, 3});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->spatial_rank, 2u);
  EXPECT_EQ(p->pads_begin, (Ints{1, 2}));
  EXPECT_EQ(p->pads_end, (Ints{0, 1}));
  // (7 + 1 + 0 - 3) / 2 + 1 and (7 + 2 + 1 - 3) / 2 + 1.
  EXPECT_EQ(p->out_spatial, (Shape{3, 4}));
  EXPECT_EQ(p->output_shape(), (Shape{1, 4, 3, 4}));
  EXPECT_EQ(p->kernel, (Shape{3, 3}));
  EXPECT_EQ(p->dilations, (Ints{1, 1}));
  EXPECT_EQ(p->group, 1);
}

TEST(OpParamsConvTest, SameUpperPutsTheOddPadAtTheEndSameLowerAtTheBeginning) {
  // 1-D, input 5, kernel 4, stride 1: output 5 needs 3 pads.
  StatusOr<ConvParams> upper = ReadConvParams(
      MakeNode("Conv", "c", {{"auto_pad", std::string("SAME_UPPER")}}), {1, 1, 5}, {1, 1, 4});
  ASSERT_TRUE(upper.ok()) << upper.status().ToString();
  EXPECT_EQ(upper->pads_begin, (Ints{1}));
  EXPECT_EQ(upper->pads_end, (Ints{2}));
  EXPECT_EQ(upper->out_spatial, (Shape{5}));
  StatusOr<ConvParams> lower = ReadConvParams(
      MakeNode("Conv", "c", {{"auto_pad", std::string("SAME_LOWER")}}), {1, 1, 5}, {1, 1, 4});
  ASSERT_TRUE(lower.ok()) << lower.status().ToString();
  EXPECT_EQ(lower->pads_begin, (Ints{2}));
  EXPECT_EQ(lower->pads_end, (Ints{1}));
  EXPECT_EQ(lower->out_spatial, (Shape{5}));
}

TEST(OpParamsConvTest, SameWithStridesAndDilationsIgnoresThePadsAttribute) {
  // Input 10, kernel 3 dilated by 2 (extent 5), stride 2: output ceil(10 / 2) = 5, padding
  // (5 - 1) * 2 + 5 - 10 = 3. The pads attribute does not count under auto_pad.
  const Node conv = MakeNode("Conv", "c",
                             {{"auto_pad", std::string("SAME_UPPER")},
                              {"strides", Ints{2, 2}},
                              {"dilations", Ints{2, 2}},
                              {"pads", Ints{9, 9, 9, 9}}});
  StatusOr<ConvParams> p = ReadConvParams(conv, {1, 1, 10, 10}, {1, 1, 3, 3});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->dilated_kernel(0), 5);
  EXPECT_EQ(p->pads_begin, (Ints{1, 1}));
  EXPECT_EQ(p->pads_end, (Ints{2, 2}));
  EXPECT_EQ(p->out_spatial, (Shape{5, 5}));
}

TEST(OpParamsConvTest, SameNeedsNoPaddingWhenTheStrideSkipsPastTheKernel) {
  // Input 6, kernel 1, stride 3: output 2 reaches 3 + 1 = 4 <= 6, so no padding (not -2).
  StatusOr<ConvParams> p = ReadConvParams(
      MakeNode("Conv", "c", {{"auto_pad", std::string("SAME_LOWER")}, {"strides", Ints{3}}}),
      {1, 1, 6}, {1, 1, 1});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->pads_begin, (Ints{0}));
  EXPECT_EQ(p->pads_end, (Ints{0}));
  EXPECT_EQ(p->out_spatial, (Shape{2}));
}

TEST(OpParamsConvTest, Valid3DWithGroups) {
  const Node conv = MakeNode("Conv", "c",
                             {{"auto_pad", std::string("VALID")},
                              {"group", int64_t{2}},
                              {"pads", Ints{1, 1, 1, 1, 1, 1}}});
  StatusOr<ConvParams> p = ReadConvParams(conv, {2, 4, 6, 7, 8}, {6, 2, 3, 3, 3});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->spatial_rank, 3u);
  EXPECT_EQ(p->pads_begin, (Ints{0, 0, 0}));
  EXPECT_EQ(p->pads_end, (Ints{0, 0, 0}));
  EXPECT_EQ(p->out_spatial, (Shape{4, 5, 6}));
  EXPECT_EQ(p->group_in_channels(), 2);
  EXPECT_EQ(p->group_out_channels(), 3);
  EXPECT_EQ(p->output_shape(), (Shape{2, 6, 4, 5, 6}));
}

TEST(OpParamsConvTest, BadAttributesNameTheNodeAndTheAttribute) {
  const Shape x = {1, 2, 7, 7}, w = {4, 2, 3, 3};
  ExpectError(ReadConvParams(MakeNode("Conv", "c1", {{"pads", Ints{1, 1}}}), x, w).status(),
              StatusCode::kInvalidModel,
              {"Conv node 'c1'", "attribute pads has 2 values, expected 4"});
  ExpectError(ReadConvParams(MakeNode("Conv", "c2", {{"strides", Ints{1, -1}}}), x, w).status(),
              StatusCode::kInvalidModel, {"Conv node 'c2'", "attribute strides has value -1"});
  ExpectError(ReadConvParams(MakeNode("Conv", "c3", {{"dilations", Ints{0, 1}}}), x, w).status(),
              StatusCode::kInvalidModel, {"Conv node 'c3'", "attribute dilations has value 0"});
  ExpectError(ReadConvParams(MakeNode("Conv", "c4", {{"pads", Ints{0, -1, 0, 0}}}), x, w).status(),
              StatusCode::kInvalidModel, {"Conv node 'c4'", "attribute pads has value -1"});
  ExpectError(
      ReadConvParams(MakeNode("Conv", "c5", {{"auto_pad", std::string("SAME")}}), x, w).status(),
      StatusCode::kInvalidModel, {"Conv node 'c5'", "auto_pad is 'SAME'"});
  ExpectError(ReadConvParams(MakeNode("Conv", "c6", {{"group", int64_t{3}}}), x, w).status(),
              StatusCode::kInvalidModel, {"Conv node 'c6'", "group 3"});
  ExpectError(ReadConvParams(MakeNode("Conv", "c7", {{"kernel_shape", Ints{5, 5}}}), x, w).status(),
              StatusCode::kInvalidModel, {"Conv node 'c7'", "kernel_shape 5x5"});
  ExpectError(ReadConvParams(MakeNode("Conv", "c8"), {1, 2, 2, 2}, w).status(),
              StatusCode::kInvalidModel, {"Conv node 'c8'", "larger than the padded input"});
  ExpectError(ReadConvParams(MakeNode("Conv", "c9"), {1, 2}, {4, 2}).status(),
              StatusCode::kInvalidModel, {"Conv node 'c9'", "rank >= 3"});
}

// A graph of one node whose inputs are a graph input X and constants (or inputs) of `shapes`.
struct OneNodeGraph {
  Graph graph;
  NodeId node = -1;
};

OneNodeGraph MakeGraph(Node node, const Shape& x, const std::vector<Tensor>& constants,
                       int64_t opset = 17, const std::vector<Shape>& computed = {}) {
  OneNodeGraph g;
  g.graph.set_opset(opset);
  const ValueId in = g.graph.AddValue("x", TensorType{DType::kFloat32, x});
  g.graph.AddInput(in);
  node.inputs = {in};
  for (size_t i = 0; i < constants.size(); ++i) {
    node.inputs.push_back(constants[i].empty()
                              ? kNoValue
                              : g.graph.AddConstant("k" + std::to_string(i), constants[i]));
  }
  for (size_t i = 0; i < computed.size(); ++i) {
    const ValueId v =
        g.graph.AddValue("computed" + std::to_string(i), TensorType{DType::kFloat32, computed[i]});
    g.graph.AddInput(v);
    node.inputs.push_back(v);
  }
  node.outputs = {g.graph.AddValue("y", TensorType{DType::kFloat32, {1}})};
  g.node = *g.graph.AddNode(std::move(node));
  return g;
}

TEST(OpParamsConvTest, TheGraphFormReadsTheInputShapes) {
  OneNodeGraph g = MakeGraph(MakeNode("Conv", "c", {{"pads", Ints{1, 1, 1, 1}}}), {1, 3, 8, 8},
                             {Tensor(DType::kFloat32, {5, 3, 3, 3})});
  StatusOr<ConvParams> p = ReadConvParams(g.graph, g.graph.node(g.node));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->output_shape(), (Shape{1, 5, 8, 8}));

  OneNodeGraph no_weight = MakeGraph(MakeNode("Conv", "c0"), {1, 3, 8, 8}, {});
  ExpectError(ReadConvParams(no_weight.graph, no_weight.graph.node(no_weight.node)).status(),
              StatusCode::kInvalidModel, {"Conv node 'c0'", "input 1 (W) is missing"});
}

// ---- ConvTranspose ----------------------------------------------------------------------

TEST(OpParamsConvTransposeTest, ExplicitPadsAndOutputPadding) {
  // Input 3, kernel 3, stride 2: the scatter covers 2 * 2 + 3 = 7.
  StatusOr<ConvTransposeParams> plain = ReadConvTransposeParams(
      MakeNode("ConvTranspose", "t", {{"strides", Ints{2, 2}}}), {1, 1, 3, 3}, {1, 2, 3, 3});
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->output_shape(), (Shape{1, 2, 7, 7}));
  EXPECT_FALSE(plain->output_shape_given);

  StatusOr<ConvTransposeParams> padded = ReadConvTransposeParams(
      MakeNode(
          "ConvTranspose", "t",
          {{"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 1, 2}}, {"output_padding", Ints{1, 1}}}),
      {1, 1, 3, 3}, {1, 2, 3, 3});
  ASSERT_TRUE(padded.ok()) << padded.status().ToString();
  // 7 + output_padding 1 = 8, less the pads.
  EXPECT_EQ(padded->out_spatial, (Shape{6, 6}));
  EXPECT_EQ(padded->pads_begin, (Ints{1, 0}));
  EXPECT_EQ(padded->pads_end, (Ints{1, 2}));
  EXPECT_EQ(padded->output_padding, (Ints{1, 1}));
}

TEST(OpParamsConvTransposeTest, OutputShapeOverridesThePads) {
  // Scatter 7 (input 3, kernel 3, stride 2); output_shape 8 is one more: a total padding of
  // -1, split with the larger half (0) at the beginning for NOTSET, the end for SAME_UPPER.
  const Shape x = {1, 1, 3, 3}, w = {1, 2, 3, 3};
  StatusOr<ConvTransposeParams> notset = ReadConvTransposeParams(
      MakeNode("ConvTranspose", "t",
               {{"strides", Ints{2, 2}}, {"output_shape", Ints{8, 8}}, {"pads", Ints{1, 1, 1, 1}}}),
      x, w);
  ASSERT_TRUE(notset.ok()) << notset.status().ToString();
  EXPECT_TRUE(notset->output_shape_given);
  EXPECT_EQ(notset->out_spatial, (Shape{8, 8}));
  EXPECT_EQ(notset->pads_begin, (Ints{0, 0}));
  EXPECT_EQ(notset->pads_end, (Ints{-1, -1}));

  // The full N, C, spatial form; a smaller output: total padding 1.
  StatusOr<ConvTransposeParams> lower = ReadConvTransposeParams(
      MakeNode("ConvTranspose", "t", {{"strides", Ints{2, 2}}, {"output_shape", Ints{1, 2, 6, 6}}}),
      x, w);
  ASSERT_TRUE(lower.ok()) << lower.status().ToString();
  EXPECT_EQ(lower->pads_begin, (Ints{1, 1}));
  EXPECT_EQ(lower->pads_end, (Ints{0, 0}));
  StatusOr<ConvTransposeParams> upper =
      ReadConvTransposeParams(MakeNode("ConvTranspose", "t",
                                       {{"strides", Ints{2, 2}},
                                        {"output_shape", Ints{6, 6}},
                                        {"auto_pad", std::string("SAME_UPPER")}}),
                              x, w);
  ASSERT_TRUE(upper.ok()) << upper.status().ToString();
  EXPECT_EQ(upper->pads_begin, (Ints{0, 0}));
  EXPECT_EQ(upper->pads_end, (Ints{1, 1}));
}

TEST(OpParamsConvTransposeTest, SameOutputIsInputTimesStride) {
  const Shape x = {1, 1, 3}, w = {1, 1, 3};
  StatusOr<ConvTransposeParams> upper = ReadConvTransposeParams(
      MakeNode("ConvTranspose", "t",
               {{"strides", Ints{2}}, {"auto_pad", std::string("SAME_UPPER")}}),
      x, w);
  ASSERT_TRUE(upper.ok()) << upper.status().ToString();
  EXPECT_EQ(upper->out_spatial, (Shape{6}));  // scatter 7, total padding 1
  EXPECT_EQ(upper->pads_begin, (Ints{0}));
  EXPECT_EQ(upper->pads_end, (Ints{1}));
  StatusOr<ConvTransposeParams> lower = ReadConvTransposeParams(
      MakeNode("ConvTranspose", "t",
               {{"strides", Ints{2}}, {"auto_pad", std::string("SAME_LOWER")}}),
      x, w);
  ASSERT_TRUE(lower.ok()) << lower.status().ToString();
  EXPECT_EQ(lower->pads_begin, (Ints{1}));
  EXPECT_EQ(lower->pads_end, (Ints{0}));
}

TEST(OpParamsConvTransposeTest, Dilated3DWithGroups) {
  // Input 4, kernel 2 dilated by 2 (extent 3), stride 1: 3 + 3 = 6 per dim.
  StatusOr<ConvTransposeParams> p = ReadConvTransposeParams(
      MakeNode("ConvTranspose", "t", {{"dilations", Ints{2, 2, 2}}, {"group", int64_t{2}}}),
      {1, 4, 4, 4, 4}, {4, 3, 2, 2, 2});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->out_channels, 6);
  EXPECT_EQ(p->group_in_channels(), 2);
  EXPECT_EQ(p->output_shape(), (Shape{1, 6, 6, 6, 6}));
}

TEST(OpParamsConvTransposeTest, BadAttributesNameTheNodeAndTheAttribute) {
  const Shape x = {1, 1, 3, 3}, w = {1, 2, 3, 3};
  ExpectError(ReadConvTransposeParams(
                  MakeNode("ConvTranspose", "t1", {{"output_shape", Ints{1, 2, 3}}}), x, w)
                  .status(),
              StatusCode::kInvalidModel,
              {"ConvTranspose node 't1'", "output_shape has 3 values, expected 2"});
  ExpectError(
      ReadConvTransposeParams(MakeNode("ConvTranspose", "t2", {{"output_padding", Ints{1}}}), x, w)
          .status(),
      StatusCode::kInvalidModel,
      {"ConvTranspose node 't2'", "attribute output_padding has 1 values, expected 2"});
  ExpectError(
      ReadConvTransposeParams(MakeNode("ConvTranspose", "t3", {{"pads", Ints{2, 2, 3, 3}}}), x, w)
          .status(),
      StatusCode::kInvalidModel, {"ConvTranspose node 't3'", "output spatial dim 0 would be 0"});
  ExpectError(ReadConvTransposeParams(MakeNode("ConvTranspose", "t4"), x, {2, 2, 3, 3}).status(),
              StatusCode::kInvalidModel, {"ConvTranspose node 't4'", "W has 2 input channels"});
}

// ---- Pooling ----------------------------------------------------------------------------

TEST(OpParamsPoolTest, CeilModeAddsAWindowThatHangsPastTheEnd) {
  // Input 6, window 3, stride 2: floor (3 / 2) + 1 = 2 windows, ceil 3; the third starts at
  // 4, inside the input, and reaches one past it.
  const Node floor =
      MakeNode("MaxPool", "p", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}});
  StatusOr<PoolParams> f = ReadPoolParams(floor, {1, 1, 6, 6});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->out_spatial, (Shape{2, 2}));
  EXPECT_EQ(f->reached_pad_end(0), -1);
  Node ceil = floor;
  ceil.attributes.Set("ceil_mode", int64_t{1});
  StatusOr<PoolParams> c = ReadPoolParams(ceil, {1, 1, 6, 6});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->ceil_mode);
  EXPECT_EQ(c->out_spatial, (Shape{3, 3}));
  EXPECT_EQ(c->pads_end, (Ints{0, 0}));
  EXPECT_EQ(c->reached_pad_end(0), 1);
}

TEST(OpParamsPoolTest, CeilModeDropsAWindowStartingInTheEndPadding) {
  // Input 5, pads 1 + 1, window 2, stride 2: the ceiling gives 4 windows, but the fourth would
  // start at 6 - 1 = 5, in the end padding: 3 remain.
  StatusOr<PoolParams> p = ReadPoolParams(MakeNode("AveragePool", "p",
                                                   {{"kernel_shape", Ints{2}},
                                                    {"strides", Ints{2}},
                                                    {"pads", Ints{1, 1}},
                                                    {"ceil_mode", int64_t{1}},
                                                    {"count_include_pad", int64_t{1}}}),
                                          {1, 1, 5});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->out_spatial, (Shape{3}));
  EXPECT_TRUE(p->count_include_pad);
  EXPECT_EQ(p->kind, PoolKind::kAverage);
}

TEST(OpParamsPoolTest, AutoPadDilations3DAndStorageOrder) {
  // SAME_LOWER: input 7, window 2, stride 2: output 4 needs (4 - 1) * 2 + 2 - 7 = 1 pad, at
  // the beginning.
  StatusOr<PoolParams> same = ReadPoolParams(MakeNode("MaxPool", "p",
                                                      {{"kernel_shape", Ints{2, 2, 2}},
                                                       {"strides", Ints{2, 2, 2}},
                                                       {"auto_pad", std::string("SAME_LOWER")},
                                                       {"storage_order", int64_t{1}}}),
                                             {1, 2, 7, 7, 7});
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->spatial_rank, 3u);
  EXPECT_EQ(same->pads_begin, (Ints{1, 1, 1}));
  EXPECT_EQ(same->pads_end, (Ints{0, 0, 0}));
  EXPECT_EQ(same->output_shape(), (Shape{1, 2, 4, 4, 4}));
  EXPECT_TRUE(same->column_major_indices);
  // Dilation 2 makes a window of 3 an extent of 5: input 7 gives 3 positions.
  StatusOr<PoolParams> dilated = ReadPoolParams(
      MakeNode("MaxPool", "p", {{"kernel_shape", Ints{3}}, {"dilations", Ints{2}}}), {1, 1, 7});
  ASSERT_TRUE(dilated.ok()) << dilated.status().ToString();
  EXPECT_EQ(dilated->out_spatial, (Shape{3}));
  EXPECT_EQ(dilated->dilated_kernel(0), 5);
}

TEST(OpParamsPoolTest, GlobalPoolIsOneWindowOverTheInput) {
  StatusOr<PoolParams> p = ReadPoolParams(MakeNode("GlobalAveragePool", "g"), {2, 3, 5, 6});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->is_global());
  EXPECT_FALSE(p->is_max());
  EXPECT_EQ(p->kernel, (Shape{5, 6}));
  EXPECT_EQ(p->output_shape(), (Shape{2, 3, 1, 1}));
  EXPECT_EQ(p->reached_pad_end(1), 0);
}

TEST(OpParamsPoolTest, BadAttributesNameTheNodeAndTheAttribute) {
  const Shape x = {1, 1, 6, 6};
  ExpectError(ReadPoolParams(MakeNode("MaxPool", "p1"), x).status(), StatusCode::kInvalidModel,
              {"MaxPool node 'p1'", "kernel_shape is missing"});
  ExpectError(
      ReadPoolParams(
          MakeNode("MaxPool", "p2", {{"kernel_shape", Ints{2, 2}}, {"storage_order", int64_t{2}}}),
          x)
          .status(),
      StatusCode::kInvalidModel, {"MaxPool node 'p2'", "storage_order is 2"});
  ExpectError(
      ReadPoolParams(
          MakeNode("AveragePool", "p3", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{0, 1}}}), x)
          .status(),
      StatusCode::kInvalidModel, {"AveragePool node 'p3'", "attribute strides has value 0"});
  ExpectError(ReadPoolParams(MakeNode("MaxPool", "p4", {{"kernel_shape", Ints{7, 7}}}), x).status(),
              StatusCode::kInvalidModel,
              {"MaxPool node 'p4'", "window 7 is larger than the padded input 6"});
  ExpectError(
      ReadPoolParams(
          MakeNode("MaxPool", "p5", {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{1, 1, 1}}}), x)
          .status(),
      StatusCode::kInvalidModel, {"MaxPool node 'p5'", "pads has 3 values, expected 4"});
  EXPECT_FALSE(ReadPoolParams(MakeNode("Relu", "r"), x).ok());
}

// ---- Clip -------------------------------------------------------------------------------

TEST(OpParamsClipTest, Opset6ReadsTheAttributes) {
  StatusOr<ClipBounds<float>> both = ReadClipBounds<float>(
      MakeNode("Clip", "c", {{"min", -1.0f}, {"max", 2.5f}}), 6, nullptr, nullptr);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->lo, -1.0f);
  EXPECT_EQ(both->hi, 2.5f);
  StatusOr<ClipBounds<float>> min_only =
      ReadClipBounds<float>(MakeNode("Clip", "c", {{"min", 0.0f}}), 6, nullptr, nullptr);
  ASSERT_TRUE(min_only.ok());
  EXPECT_EQ(min_only->lo, 0.0f);
  EXPECT_EQ(min_only->hi, kInf);
  StatusOr<ClipBounds<double>> none =
      ReadClipBounds<double>(MakeNode("Clip", "c"), 6, nullptr, nullptr);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->lo, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(none->hi, std::numeric_limits<double>::infinity());
  // Inputs are not bounds before opset 11.
  const Tensor bound = Tensor::Scalar<float>(1.0f);
  ExpectError(ReadClipBounds<float>(MakeNode("Clip", "c6"), 6, &bound, nullptr).status(),
              StatusCode::kInvalidModel, {"Clip node 'c6'", "attributes before opset 11"});
}

TEST(OpParamsClipTest, Opset11ReadsTheInputsAndIgnoresAttributes) {
  const Tensor lo = Tensor::Scalar<float>(-0.5f);
  const Tensor hi = Tensor::FromVector<float>({1}, {6.0f});  // one element counts as a scalar
  const Node clip = MakeNode("Clip", "c", {{"min", -9.0f}, {"max", 9.0f}});
  StatusOr<ClipBounds<float>> both = ReadClipBounds<float>(clip, 11, &lo, &hi);
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->lo, -0.5f);
  EXPECT_EQ(both->hi, 6.0f);
  StatusOr<ClipBounds<float>> max_only = ReadClipBounds<float>(clip, 11, nullptr, &hi);
  ASSERT_TRUE(max_only.ok());
  EXPECT_EQ(max_only->lo, -kInf);
  EXPECT_EQ(max_only->hi, 6.0f);
  const Tensor absent;  // an empty tensor is an absent input, as kernels see one
  StatusOr<ClipBounds<float>> min_only = ReadClipBounds<float>(clip, 11, &lo, &absent);
  ASSERT_TRUE(min_only.ok());
  EXPECT_EQ(min_only->lo, -0.5f);
  EXPECT_EQ(min_only->hi, kInf);
  const Tensor pair = Tensor::FromVector<float>({2}, {0.0f, 1.0f});
  ExpectError(ReadClipBounds<float>(MakeNode("Clip", "c11"), 11, &pair, nullptr).status(),
              StatusCode::kInvalidModel, {"Clip node 'c11'", "min must be a scalar, got shape 2"});
}

TEST(OpParamsClipTest, Opset13IntegerBoundsDefaultToTheTypesLimits) {
  const Tensor hi = Tensor::Scalar<int32_t>(100);
  StatusOr<ClipBounds<int32_t>> b =
      ReadClipBounds<int32_t>(MakeNode("Clip", "c"), 13, nullptr, &hi);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->lo, std::numeric_limits<int32_t>::lowest());
  EXPECT_EQ(b->hi, 100);
  const Tensor lo = Tensor::Scalar<int64_t>(-7);
  StatusOr<ClipBounds<int64_t>> l =
      ReadClipBounds<int64_t>(MakeNode("Clip", "c"), 13, &lo, nullptr);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->lo, -7);
  EXPECT_EQ(l->hi, std::numeric_limits<int64_t>::max());
}

TEST(OpParamsClipTest, TheGraphFormTakesTheOpsetFromTheGraphAndRefusesComputedBounds) {
  OneNodeGraph v6 = MakeGraph(MakeNode("Clip", "c", {{"max", 6.0f}}), {4}, {}, /*opset=*/6);
  StatusOr<ClipBounds<float>> attrs = ReadClipBounds(v6.graph, v6.graph.node(v6.node));
  ASSERT_TRUE(attrs.ok()) << attrs.status().ToString();
  EXPECT_EQ(attrs->lo, -kInf);
  EXPECT_EQ(attrs->hi, 6.0f);

  // Opset 13: min absent (kNoValue), max a constant.
  OneNodeGraph v13 =
      MakeGraph(MakeNode("Clip", "c"), {4}, {Tensor(), Tensor::Scalar<float>(1.5f)}, /*opset=*/13);
  StatusOr<ClipBounds<float>> inputs = ReadClipBounds(v13.graph, v13.graph.node(v13.node));
  ASSERT_TRUE(inputs.ok()) << inputs.status().ToString();
  EXPECT_EQ(inputs->lo, -kInf);
  EXPECT_EQ(inputs->hi, 1.5f);

  // One constant as both bounds: each is read by its position.
  Graph same;
  same.set_opset(13);
  const ValueId x = same.AddValue("x", TensorType{DType::kFloat32, {4}});
  same.AddInput(x);
  const ValueId c = same.AddConstant("c", Tensor::Scalar<float>(0.25f));
  Node clip = MakeNode("Clip", "shared");
  clip.inputs = {x, c, c};
  clip.outputs = {same.AddValue("y", TensorType{DType::kFloat32, {4}})};
  const NodeId id = *same.AddNode(std::move(clip));
  StatusOr<ClipBounds<float>> shared = ReadClipBounds(same, same.node(id));
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  EXPECT_EQ(shared->lo, 0.25f);
  EXPECT_EQ(shared->hi, 0.25f);

  OneNodeGraph computed = MakeGraph(MakeNode("Clip", "cc"), {4}, {}, /*opset=*/13, {{}});
  ExpectError(ReadClipBounds(computed.graph, computed.graph.node(computed.node)).status(),
              StatusCode::kUnsupported,
              {"Clip node 'cc'", "min (input 1, 'computed0') is computed by the graph"});
}

// ---- Softmax ----------------------------------------------------------------------------

TEST(OpParamsSoftmaxTest, BeforeOpset13TheInputIsAMatrixAtAxisOne) {
  const Shape x = {2, 3, 4};
  StatusOr<SoftmaxAxis> d = ReadSoftmaxAxis(MakeNode("Softmax", "s"), 11, x);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->flatten);
  EXPECT_EQ(d->axis, 1);
  EXPECT_EQ(d->outer, 2);
  EXPECT_EQ(d->n, 12);
  EXPECT_EQ(d->inner, 1);
  StatusOr<SoftmaxAxis> last =
      ReadSoftmaxAxis(MakeNode("LogSoftmax", "s", {{"axis", int64_t{-1}}}), 11, x);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->axis, 2);
  EXPECT_EQ(last->outer, 6);
  EXPECT_EQ(last->n, 4);
  StatusOr<SoftmaxAxis> first =
      ReadSoftmaxAxis(MakeNode("Softmax", "s", {{"axis", int64_t{-3}}}), 11, x);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->axis, 0);
  EXPECT_EQ(first->outer, 1);
  EXPECT_EQ(first->n, 24);
}

TEST(OpParamsSoftmaxTest, FromOpset13OneAxisDefaultingToTheLast) {
  const Shape x = {2, 3, 4};
  StatusOr<SoftmaxAxis> d = ReadSoftmaxAxis(MakeNode("Softmax", "s"), 13, x);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(d->flatten);
  EXPECT_EQ(d->axis, 2);
  EXPECT_EQ(d->outer, 6);
  EXPECT_EQ(d->n, 4);
  EXPECT_EQ(d->inner, 1);
  StatusOr<SoftmaxAxis> middle =
      ReadSoftmaxAxis(MakeNode("Softmax", "s", {{"axis", int64_t{-2}}}), 13, x);
  ASSERT_TRUE(middle.ok());
  EXPECT_EQ(middle->axis, 1);
  EXPECT_EQ(middle->outer, 2);
  EXPECT_EQ(middle->n, 3);
  EXPECT_EQ(middle->inner, 4);
  OneNodeGraph g = MakeGraph(MakeNode("Softmax", "s"), {5, 7}, {}, /*opset=*/12);
  StatusOr<SoftmaxAxis> graph_form = ReadSoftmaxAxis(g.graph, g.graph.node(g.node));
  ASSERT_TRUE(graph_form.ok());
  EXPECT_TRUE(graph_form->flatten);
  EXPECT_EQ(graph_form->axis, 1);
}

TEST(OpParamsSoftmaxTest, AnAxisOutOfRangeIsAnError) {
  ExpectError(
      ReadSoftmaxAxis(MakeNode("Softmax", "s1", {{"axis", int64_t{3}}}), 13, {2, 3, 4}).status(),
      StatusCode::kInvalidModel, {"Softmax node 's1'", "axis 3 is out of range for rank 3"});
  ExpectError(
      ReadSoftmaxAxis(MakeNode("Softmax", "s2", {{"axis", int64_t{-4}}}), 11, {2, 3, 4}).status(),
      StatusCode::kInvalidModel, {"Softmax node 's2'", "axis -4"});
  EXPECT_FALSE(ReadSoftmaxAxis(MakeNode("Softmax", "s3"), 13, {}).ok());
}

// ---- Gemm -------------------------------------------------------------------------------

TEST(OpParamsGemmTest, Defaults) {
  StatusOr<GemmParams> p = ReadGemmParams(MakeNode("Gemm", "g"), 13, {3, 4}, {4, 5}, nullptr);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->m, 3);
  EXPECT_EQ(p->k, 4);
  EXPECT_EQ(p->n, 5);
  EXPECT_FALSE(p->trans_a);
  EXPECT_FALSE(p->trans_b);
  EXPECT_EQ(p->alpha, 1.0f);
  EXPECT_EQ(p->beta, 1.0f);
  EXPECT_FALSE(p->has_c);
}

TEST(OpParamsGemmTest, TransposesScalesAndTheBroadcastOfC) {
  const Node gemm =
      MakeNode("Gemm", "g",
               {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}});
  const Shape row = {5};
  StatusOr<GemmParams> p = ReadGemmParams(gemm, 13, {4, 3}, {5, 4}, &row);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->m, 3);
  EXPECT_EQ(p->k, 4);
  EXPECT_EQ(p->n, 5);
  EXPECT_TRUE(p->trans_a);
  EXPECT_TRUE(p->trans_b);
  EXPECT_EQ(p->alpha, 0.5f);
  EXPECT_EQ(p->beta, 2.0f);
  EXPECT_TRUE(p->has_c);
  EXPECT_EQ(p->c_rows, 1);
  EXPECT_EQ(p->c_cols, 5);
  const Shape column = {3, 1};
  StatusOr<GemmParams> c = ReadGemmParams(gemm, 13, {4, 3}, {5, 4}, &column);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->c_rows, 3);
  EXPECT_EQ(c->c_cols, 1);

  OneNodeGraph g = MakeGraph(MakeNode("Gemm", "g"), {2, 3},
                             {Tensor(DType::kFloat32, {3, 4}), Tensor::Scalar<float>(1.0f)});
  StatusOr<GemmParams> graph_form = ReadGemmParams(g.graph, g.graph.node(g.node));
  ASSERT_TRUE(graph_form.ok()) << graph_form.status().ToString();
  EXPECT_EQ(graph_form->m, 2);
  EXPECT_EQ(graph_form->n, 4);
  EXPECT_TRUE(graph_form->has_c);
  EXPECT_EQ(graph_form->c_rows, 1);
  EXPECT_EQ(graph_form->c_cols, 1);
}

TEST(OpParamsGemmTest, BadShapesNameTheNode) {
  const Node gemm = MakeNode("Gemm", "g1");
  ExpectError(ReadGemmParams(gemm, 13, {3, 4}, {5, 6}, nullptr).status(), StatusCode::kInvalidModel,
              {"Gemm node 'g1'", "inner dimensions differ"});
  ExpectError(ReadGemmParams(gemm, 13, {2, 3, 4}, {4, 5}, nullptr).status(),
              StatusCode::kInvalidModel, {"Gemm node 'g1'", "must be 2-D"});
  ExpectError(ReadGemmParams(gemm, 9, {3, 4}, {4, 5}, nullptr).status(), StatusCode::kInvalidModel,
              {"Gemm node 'g1'", "C is required before opset 11"});
  const Shape wrong = {2, 5};
  ExpectError(ReadGemmParams(gemm, 13, {3, 4}, {4, 5}, &wrong).status(), StatusCode::kInvalidModel,
              {"Gemm node 'g1'", "C of shape 2x5 cannot be broadcast to 3x5"});
  const Shape three_d = {1, 3, 5};
  EXPECT_FALSE(ReadGemmParams(gemm, 13, {3, 4}, {4, 5}, &three_d).ok());
}

}  // namespace
}  // namespace collage
