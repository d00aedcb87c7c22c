// Einsum; GridSample, RoiAlign; DepthToSpace, SpaceToDepth, ReverseSequence, EyeLike.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "collage/sdk/op_registry.h"
#include "reference_node_util.h"

namespace collage {
namespace {

using testing::ExpectError;
using testing::MakeNode;
using testing::RunOne;
using testing::RunStatus;

Node EinsumNode(const std::string& equation, size_t num_inputs) {
  Node node = MakeNode("Einsum", num_inputs);
  node.attributes.Set("equation", equation);
  return node;
}

template <typename T = float>
Tensor Iota(Shape shape) {
  std::vector<T> v(static_cast<size_t>(NumElements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(i);
  return Tensor::FromVector<T>(shape, v);
}

void ExpectFloats(const Tensor& t, const Shape& shape, const std::vector<float>& values) {
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.ToVector<float>(), values);
}

void ExpectNear(const Tensor& t, const Shape& shape, const std::vector<double>& values,
                double tolerance = 1e-5) {
  EXPECT_EQ(t.shape(), shape);
  const std::vector<double> got = t.ToVector<double>();
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], values[i], tolerance) << "at " << i;
}

// ---- Einsum ----

// x = [[0 1 2] [3 4 5]], y = iota(3x4)
TEST(EinsumTest, MatMulExplicitAndImplicit) {
  const std::vector<float> product = {20, 23, 26, 29, 56, 68, 80, 92};
  ExpectFloats(RunOne(EinsumNode("ij,jk->ik", 2), 12, {Iota({2, 3}), Iota({3, 4})}), {2, 4},
               product);
  // Implicit: the letters used once (i, k), sorted; whitespace is ignored.
  ExpectFloats(RunOne(EinsumNode(" ij , jk ", 2), 12, {Iota({2, 3}), Iota({3, 4})}), {2, 4},
               product);
  // Batched, as the spec's "bij, bjk -> bik".
  Tensor out = RunOne(EinsumNode("bij, bjk -> bik", 2), 12, {Iota({2, 2, 3}), Iota({2, 3, 4})});
  EXPECT_EQ(out.shape(), (Shape{2, 2, 4}));
  EXPECT_EQ(out.ToVector<float>()[8], 6 * 12 + 7 * 16 + 8 * 20);  // out[1][0][0]
}

TEST(EinsumTest, TransposeSumAndInnerProduct) {
  ExpectFloats(RunOne(EinsumNode("ij->ji", 1), 12, {Iota({2, 3})}), {3, 2}, {0, 3, 1, 4, 2, 5});
  // Implicit output is sorted: "ba" is the transpose.
  ExpectFloats(RunOne(EinsumNode("ba", 1), 12, {Iota({2, 3})}), {3, 2}, {0, 3, 1, 4, 2, 5});
  ExpectFloats(RunOne(EinsumNode("ij->i", 1), 12, {Iota({2, 3})}), {2}, {3, 12});
  ExpectFloats(RunOne(EinsumNode("ij->", 1), 12, {Iota({2, 3})}), {}, {15});
  ExpectFloats(RunOne(EinsumNode("i,i", 2), 12, {Iota({3}), Iota({3})}), {}, {5});
  // Outer product; three letters out of order.
  ExpectFloats(RunOne(EinsumNode("i,j", 2), 12, {Iota({2}), Iota({3})}), {2, 3},
               {0, 0, 0, 0, 1, 2});
  ExpectFloats(RunOne(EinsumNode("ijk->kj", 1), 12, {Iota({2, 2, 3})}), {3, 2},
               {6, 12, 8, 14, 10, 16});
}

TEST(EinsumTest, DiagonalsAndTrace) {
  // z = iota(3x3): diagonal 0 4 8.
  ExpectFloats(RunOne(EinsumNode("ii->i", 1), 12, {Iota({3, 3})}), {3}, {0, 4, 8});
  // Implicit: a letter repeated within one term is not "used once", so it is summed.
  ExpectFloats(RunOne(EinsumNode("ii", 1), 12, {Iota({3, 3})}), {}, {12});
  ExpectFloats(RunOne(EinsumNode("bii->b", 1), 12, {Iota({2, 3, 3})}), {2}, {12, 39});
  // The spec's batch diagonal.
  ExpectFloats(RunOne(EinsumNode("...ii ->...i", 1), 12, {Iota({2, 2, 2})}), {2, 2}, {0, 3, 4, 7});
}

TEST(EinsumTest, EllipsisAndSizeOneBroadcasting) {
  // b = iota(2x2x3) against c = [1 10 100]: "..." broadcasts (2,2) against ().
  Tensor c = Tensor::FromVector<float>({3}, {1, 10, 100});
  ExpectFloats(RunOne(EinsumNode("...i,...i->...", 2), 12, {Iota({2, 2, 3}), c}), {2, 2},
               {210, 543, 876, 1209});
  // Implicit mode puts "..." first.
  ExpectFloats(RunOne(EinsumNode("...i,...i", 2), 12, {Iota({2, 2, 3}), c}), {2, 2},
               {210, 543, 876, 1209});
  // "..." dims of size 1 broadcast: (2,1) against (3,).
  Tensor out =
      RunOne(EinsumNode("...ij,...jk->...ik", 2), 12, {Iota({2, 1, 1, 2}), Iota({3, 2, 1})});
  EXPECT_EQ(out.shape(), (Shape{2, 3, 1, 1}));
  EXPECT_EQ(out.ToVector<float>(), (std::vector<float>{1, 3, 5, 3, 13, 23}));
  // A letter of size 1 broadcasts too, as numpy does: j is 1 in the first input, 3 in the second.
  Tensor a = Tensor::FromVector<float>({2, 1}, {1, 2});
  ExpectFloats(RunOne(EinsumNode("ij,jk", 2), 12, {a, Iota({3, 4})}), {2, 4},
               {12, 15, 18, 21, 24, 30, 36, 42});
}

TEST(EinsumTest, ThreeInputsAndIntegers) {
  Tensor r = Tensor::FromVector<float>({3}, {1, 2, 3});
  ExpectFloats(RunOne(EinsumNode("ij,jk,k->i", 3), 12, {Iota({2, 2}), Iota({2, 3}), r}), {2},
               {26, 94});
  Tensor x = Tensor::FromVector<int64_t>({2, 2}, {1, -2, 3, 4});
  Tensor out = RunOne(EinsumNode("ij,jk->ik", 2), 12, {x, x});
  EXPECT_EQ(out.dtype(), DType::kInt64);
  EXPECT_EQ(out.ToVector<int64_t>(), (std::vector<int64_t>{-5, -10, 15, 10}));
  Tensor y = Tensor::FromVector<int32_t>({3}, {1, 2, 3});
  Tensor dot = RunOne(EinsumNode("i,i->", 2), 12, {y, y});
  EXPECT_EQ(dot.dtype(), DType::kInt32);
  EXPECT_EQ(dot.ToVector<int32_t>(), std::vector<int32_t>{14});
  // An empty summed dim gives zeros.
  ExpectFloats(RunOne(EinsumNode("ij->j", 1), 12, {Iota({0, 2})}), {2}, {0, 0});
}

TEST(EinsumTest, MalformedEquations) {
  struct Case {
    std::string equation;
    std::vector<Shape> shapes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{2, 2}}, "has 2 input terms for 1 inputs"},
      {"i.j", {{2, 2}}, "unexpected character '.'"},
      {"i2", {{2, 2}}, "unexpected character '2'"},
      {"......", {{2}}, "has two '...'"},
      {"i->i->i", {{2}}, "more than one '->'"},
      {"ij->kk", {{2, 2}}, "output label 'k' repeats"},
      {"ij->k", {{2, 2}}, "output label 'k' is in no input term"},
      {"ij", {{2, 2, 2}}, "term 'ij' does not fit input 0 of shape 2x2x2"},
      {"...ijk", {{2, 2}}, "term '...ijk' does not fit input 0"},
      {"i,i", {{2}, {3}}, "label 'i' has size 3 in input 1 but 2 elsewhere"},
      {"ii", {{2, 3}}, "a diagonal needs equal sizes"},
      {"...i->i", {{2, 3}}, "the output has no '...'"},
  };
  for (const Case& c : cases) {
    std::vector<Tensor> inputs;
    for (const Shape& s : c.shapes) inputs.push_back(Iota(s));
    const Status s = RunStatus(EinsumNode(c.equation, inputs.size()), 12, inputs);
    ExpectError(s, StatusCode::kInvalidModel, "equation '" + c.equation + "'");
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
  ExpectError(RunStatus(MakeNode("Einsum", 1), 12, {Iota({2})}), StatusCode::kInvalidModel,
              "'equation' attribute is missing");
}

TEST(EinsumTest, DTypeErrors) {
  ExpectError(RunStatus(EinsumNode("i,i", 2), 12, {Iota({2}), Iota<double>({2})}),
              StatusCode::kInvalidModel, "differ in dtype");
  EXPECT_EQ(RunStatus(EinsumNode("i", 1), 12, {Iota<int8_t>({2})}).code(),
            StatusCode::kUnsupported);
}

// ---- GridSample ----

// The spec's examples: x = [[0 1] [2 3] [4 5]] (1x1x3x2) sampled at 2x4 grid points.
Tensor GridSampleX() { return Iota({1, 1, 3, 2}); }
Tensor InsideGrid() {
  return Tensor::FromVector<float>({1, 2, 4, 2}, {-1, -1, -0.5f, -0.5f, -0.2f, -0.2f, 0, 0, 0, 0,
                                                  -0.2f, -0.2f, 0.5f, 0.5f, 1, 1});
}
Tensor OutsideGrid() {
  return Tensor::FromVector<float>(
      {1, 2, 4, 2}, {-10, -10, -5, -5, -0.2f, -0.2f, 10, 10, 10, 10, -0.2f, -0.2f, 5, 5, 10, 10});
}

Tensor RunGridSample(const std::string& mode, const std::string& padding, int64_t align_corners,
                     const Tensor& grid) {
  Node node = MakeNode("GridSample", 2);
  node.attributes.Set("mode", mode);
  node.attributes.Set("padding_mode", padding);
  node.attributes.Set("align_corners", align_corners);
  return RunOne(node, 16, {GridSampleX(), grid});
}

TEST(GridSampleTest, Modes) {
  const Shape shape = {1, 1, 2, 4};
  ExpectNear(RunGridSample("bilinear", "zeros", 0, InsideGrid()), shape,
             {0, 0.5, 1.7, 2.5, 2.5, 1.7, 4.5, 1.25});
  // Defaults: bilinear, zeros, align_corners 0.
  ExpectNear(RunOne(MakeNode("GridSample", 2), 16, {GridSampleX(), InsideGrid()}), shape,
             {0, 0.5, 1.7, 2.5, 2.5, 1.7, 4.5, 1.25});
  // Nearest rounds half to even: -0.5 -> pixel (0, 0).
  ExpectNear(RunGridSample("nearest", "zeros", 0, InsideGrid()), shape, {0, 0, 2, 2, 2, 2, 5, 0});
  ExpectNear(RunGridSample("bicubic", "zeros", 0, InsideGrid()), shape,
             {-0.140625, 0.3828125, 1.7556, 2.96875, 2.96875, 1.7556, 5.14453125, 1.390625}, 1e-4);
  ExpectNear(RunGridSample("bilinear", "zeros", 1, InsideGrid()), shape,
             {0, 1.25, 2, 2.5, 2.5, 2, 3.75, 5});
}

TEST(GridSampleTest, PaddingModes) {
  const Shape shape = {1, 1, 2, 4};
  ExpectNear(RunGridSample("bilinear", "zeros", 0, OutsideGrid()), shape,
             {0, 0, 1.7, 0, 0, 1.7, 0, 0});
  ExpectNear(RunGridSample("bilinear", "border", 0, OutsideGrid()), shape,
             {0, 0, 1.7, 5, 5, 1.7, 5, 5});
  ExpectNear(RunGridSample("bilinear", "reflection", 0, OutsideGrid()), shape,
             {2.5, 0, 1.7, 2.5, 2.5, 1.7, 5, 2.5});
}

TEST(GridSampleTest, BicubicBorderPadsEachTapInFloat64) {
  // x = -1.1 maps to pixel coordinate -0.7 of a row [0 1 2 3]: the stencil reads pixels -2..1,
  // clamped to 0 0 0 1, so only the last weight (Keys' kernel at 1.7) survives. Padding the
  // coordinate first would give 0 (PyTorch and ONNX Runtime give this value).
  Node node = MakeNode("GridSample", 2);
  node.attributes.Set("mode", std::string("bicubic"));
  node.attributes.Set("padding_mode", std::string("border"));
  Tensor x = Tensor::FromVector<double>({1, 1, 1, 4}, {0, 1, 2, 3});
  Tensor grid = Tensor::FromVector<double>({1, 1, 1, 2}, {-1.1, 0});
  Tensor out = RunOne(node, 16, {x, grid});
  EXPECT_EQ(out.dtype(), DType::kFloat64);
  ExpectNear(out, {1, 1, 1, 1}, {-0.04725}, 1e-9);
}

TEST(GridSampleTest, OpsetTwentyNamesAndChannels) {
  Node node = MakeNode("GridSample", 2);
  node.attributes.Set("mode", std::string("linear"));
  Tensor x = Iota({1, 2, 3, 2});
  // Both channels sample the same point; the second is the first plus 6.
  Tensor grid = Tensor::FromVector<float>({1, 1, 1, 2}, {0, 0});
  ExpectNear(RunOne(node, 20, {x, grid}), {1, 2, 1, 1}, {2.5, 8.5});
  // "linear" is not an opset 16 name.
  ExpectError(RunStatus(node, 16, {x, grid}), StatusCode::kInvalidModel, "mode 'linear'");
}

TEST(GridSampleTest, Errors) {
  Node node = MakeNode("GridSample", 2);
  ExpectError(RunStatus(node, 16, {GridSampleX(), Iota({1, 2, 4, 3})}), StatusCode::kInvalidModel,
              "grid of shape 1x2x4x3");
  ExpectError(RunStatus(node, 16, {Iota({1, 3, 2}), Iota({1, 2, 2})}), StatusCode::kInvalidModel,
              "rank 4");
  EXPECT_EQ(RunStatus(node, 16, {Iota<int32_t>({1, 1, 3, 2}), InsideGrid()}).code(),
            StatusCode::kUnsupported);
  node.attributes.Set("padding_mode", std::string("mirror"));
  ExpectError(RunStatus(node, 16, {GridSampleX(), InsideGrid()}), StatusCode::kInvalidModel,
              "padding_mode 'mirror'");
}

// ---- RoiAlign ----

// x = iota(4x4): f(y, x) = 4y + x, which bilinear interpolation reproduces exactly.
Node RoiAlignNode(int64_t sampling_ratio) {
  Node node = MakeNode("RoiAlign", 3);
  node.attributes.Set("output_height", int64_t{1});
  node.attributes.Set("output_width", int64_t{1});
  node.attributes.Set("sampling_ratio", sampling_ratio);
  return node;
}

// Boxes (x1, y1, x2, y2), in X's dtype.
template <typename T = float>
Tensor Rois(std::vector<T> boxes) {
  const int64_t n = static_cast<int64_t>(boxes.size() / 4);
  return Tensor::FromVector<T>({n, 4}, boxes);
}

// A 1-D int64 tensor: batch indices, sequence lengths.
Tensor Int64s(std::vector<int64_t> values) {
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(values.size())}, values);
}

TEST(RoiAlignTest, AverageAndCoordinateModes) {
  Tensor x = Iota({1, 1, 4, 4});
  // Box (0, 0)-(2, 2), 2x2 samples. output_half_pixel (opset 10's only behaviour) samples at
  // 0.5 and 1.5: the mean is f(1, 1) = 5.
  Node node = RoiAlignNode(2);
  ExpectNear(RunOne(node, 10, {x, Rois({0, 0, 2, 2}), Int64s({0})}), {1, 1, 1, 1}, {5});
  // Opset 16 defaults to half_pixel: the box moves by -0.5, samples at 0 and 1: f(.5, .5).
  ExpectNear(RunOne(node, 16, {x, Rois({0, 0, 2, 2}), Int64s({0})}), {1, 1, 1, 1}, {2.5});
  node.attributes.Set("coordinate_transformation_mode", std::string("output_half_pixel"));
  ExpectNear(RunOne(node, 16, {x, Rois({0, 0, 2, 2}), Int64s({0})}), {1, 1, 1, 1}, {5});
  // spatial_scale scales the box; sampling_ratio 0 picks ceil(2 / 1) = 2 samples per axis.
  Node adaptive = RoiAlignNode(0);
  adaptive.attributes.Set("spatial_scale", 0.5f);
  ExpectNear(RunOne(adaptive, 10, {x, Rois({0, 0, 4, 4}), Int64s({0})}), {1, 1, 1, 1}, {5});
}

TEST(RoiAlignTest, BinsChannelsAndBatchIndices) {
  Tensor x = Iota({2, 2, 4, 4});  // image n, channel c: f + 32n + 16c
  Node node = RoiAlignNode(1);
  node.attributes.Set("output_height", int64_t{2});
  node.attributes.Set("output_width", int64_t{2});
  node.attributes.Set("coordinate_transformation_mode", std::string("output_half_pixel"));
  // Box (0, 0)-(4, 4) in 2x2 bins, one sample at each bin centre: (1, 1), (1, 3), (3, 1), (3, 3).
  ExpectNear(RunOne(node, 16, {x, Rois({0, 0, 4, 4}), Int64s({1})}), {1, 2, 2, 2},
             {37, 39, 45, 47, 53, 55, 61, 63});
  // A box far outside samples nothing: zeros.
  ExpectNear(RunOne(node, 16, {x, Rois({10, 10, 12, 12}), Int64s({0})}), {1, 2, 2, 2},
             {0, 0, 0, 0, 0, 0, 0, 0});
}

TEST(RoiAlignTest, MaxTakesTheLargestWeightedCorner) {
  Tensor x = Iota<double>({1, 1, 4, 4});
  Node node = RoiAlignNode(2);
  node.attributes.Set("mode", std::string("max"));
  node.attributes.Set("coordinate_transformation_mode", std::string("output_half_pixel"));
  // Samples at (0.5|1.5, 0.5|1.5) each weigh their four corners by 0.25. As ONNX Runtime and
  // the official test data do, max mode keeps the largest weighted corner, 0.25 * f(2, 2) =
  // 2.5, not the largest interpolated value 7.5.
  Tensor out = RunOne(node, 16, {x, Rois<double>({0, 0, 2, 2}), Int64s({0})});
  EXPECT_EQ(out.dtype(), DType::kFloat64);
  ExpectNear(out, {1, 1, 1, 1}, {2.5});
}

TEST(RoiAlignTest, Errors) {
  Tensor x = Iota({1, 1, 4, 4});
  Node node = RoiAlignNode(2);
  ExpectError(RunStatus(node, 16, {x, Rois({0, 0, 2, 2}), Int64s({1})}),
              StatusCode::kInvalidArgument, "batch_indices[0] = 1 is out of range");
  EXPECT_EQ(RunStatus(node, 16, {x, Rois({0, 0, 2, 2}), Int64s({-1})}).code(),
            StatusCode::kInvalidArgument);
  ExpectError(RunStatus(node, 16, {x, Tensor::FromVector<float>({1, 3}, {0, 0, 2}), Int64s({0})}),
              StatusCode::kInvalidModel, "(num_rois, 4)");
  Node bad_mode = RoiAlignNode(2);
  bad_mode.attributes.Set("mode", std::string("min"));
  ExpectError(RunStatus(bad_mode, 16, {x, Rois({0, 0, 2, 2}), Int64s({0})}),
              StatusCode::kInvalidModel, "mode 'min'");
  Node bad_size = RoiAlignNode(2);
  bad_size.attributes.Set("output_height", int64_t{0});
  EXPECT_EQ(RunStatus(bad_size, 16, {x, Rois({0, 0, 2, 2}), Int64s({0})}).code(),
            StatusCode::kInvalidModel);
}

// ---- DepthToSpace, SpaceToDepth ----

Node BlockNode(const std::string& op, int64_t blocksize) {
  Node node = MakeNode(op, 1);
  node.attributes.Set("blocksize", blocksize);
  return node;
}

// The spec's input: 1x8x2x3, channel c holding 9c .. 9c + 5.
Tensor DepthToSpaceInput() {
  std::vector<float> v;
  for (int c = 0; c < 8; ++c) {
    for (int i = 0; i < 6; ++i) v.push_back(static_cast<float>(9 * c + i));
  }
  return Tensor::FromVector<float>({1, 8, 2, 3}, v);
}

TEST(DepthToSpaceTest, SpecExamples) {
  Node dcr = BlockNode("DepthToSpace", 2);
  dcr.attributes.Set("mode", std::string("DCR"));
  ExpectFloats(RunOne(dcr, 13, {DepthToSpaceInput()}), {1, 2, 4, 6},
               {0,  18, 1,  19, 2,  20, 36, 54, 37, 55, 38, 56, 3,  21, 4,  22,
                5,  23, 39, 57, 40, 58, 41, 59, 9,  27, 10, 28, 11, 29, 45, 63,
                46, 64, 47, 65, 12, 30, 13, 31, 14, 32, 48, 66, 49, 67, 50, 68});
  Node crd = BlockNode("DepthToSpace", 2);
  crd.attributes.Set("mode", std::string("CRD"));
  ExpectFloats(RunOne(crd, 13, {DepthToSpaceInput()}), {1, 2, 4, 6},
               {0,  9,  1,  10, 2,  11, 18, 27, 19, 28, 20, 29, 3,  12, 4,  13,
                5,  14, 21, 30, 22, 31, 23, 32, 36, 45, 37, 46, 38, 47, 54, 63,
                55, 64, 56, 65, 39, 48, 40, 49, 41, 50, 57, 66, 58, 67, 59, 68});
}

TEST(SpaceToDepthTest, SpecExampleAndRoundTrip) {
  Tensor x = Tensor::FromVector<float>({1, 1, 4, 6}, {0, 6, 1, 7,  2, 8,  12, 18, 13, 19, 14, 20,
                                                      3, 9, 4, 10, 5, 11, 15, 21, 16, 22, 17, 23});
  ExpectFloats(
      RunOne(BlockNode("SpaceToDepth", 2), 13, {x}), {1, 4, 2, 3},
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
  // SpaceToDepth undoes DCR DepthToSpace, for any element size (int8, float16 bits, int64).
  for (DType dtype : {DType::kInt8, DType::kFloat16, DType::kInt64}) {
    Tensor typed(dtype, {2, 9, 2, 1});
    for (size_t i = 0; i < typed.nbytes(); ++i) {
      static_cast<uint8_t*>(typed.data())[i] = static_cast<uint8_t>(i % 251);
    }
    Tensor space = RunOne(BlockNode("DepthToSpace", 3), 13, {typed});
    EXPECT_EQ(space.shape(), (Shape{2, 1, 6, 3}));
    Tensor back = RunOne(BlockNode("SpaceToDepth", 3), 13, {space});
    ASSERT_EQ(back.nbytes(), typed.nbytes());
    EXPECT_EQ(std::memcmp(back.data(), typed.data(), typed.nbytes()), 0) << DTypeName(dtype);
  }
}

TEST(DepthToSpaceTest, Errors) {
  ExpectError(RunStatus(BlockNode("DepthToSpace", 0), 13, {DepthToSpaceInput()}),
              StatusCode::kInvalidModel, "blocksize 0");
  ExpectError(RunStatus(BlockNode("DepthToSpace", 3), 13, {DepthToSpaceInput()}),
              StatusCode::kInvalidModel, "channels 8 are not a multiple");
  ExpectError(RunStatus(MakeNode("DepthToSpace", 1), 13, {DepthToSpaceInput()}),
              StatusCode::kInvalidModel, "'blocksize' attribute is missing");
  Node bad_mode = BlockNode("DepthToSpace", 2);
  bad_mode.attributes.Set("mode", std::string("RCD"));
  ExpectError(RunStatus(bad_mode, 13, {DepthToSpaceInput()}), StatusCode::kInvalidModel,
              "mode 'RCD'");
  ExpectError(RunStatus(BlockNode("SpaceToDepth", -1), 13, {Iota({1, 1, 4, 6})}),
              StatusCode::kInvalidModel, "blocksize -1");
  ExpectError(RunStatus(BlockNode("SpaceToDepth", 4), 13, {Iota({1, 1, 4, 6})}),
              StatusCode::kInvalidModel, "not multiples of blocksize 4");
  EXPECT_EQ(RunStatus(BlockNode("SpaceToDepth", 2), 13, {Iota({4, 6})}).code(),
            StatusCode::kInvalidModel);
}

// ---- ReverseSequence ----

Node ReverseNode(int64_t batch_axis, int64_t time_axis) {
  Node node = MakeNode("ReverseSequence", 2);
  node.attributes.Set("batch_axis", batch_axis);
  node.attributes.Set("time_axis", time_axis);
  return node;
}

TEST(ReverseSequenceTest, SpecExamples) {
  // Time-major: column b is sequence b.
  Tensor x =
      Tensor::FromVector<float>({4, 4}, {0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15});
  ExpectFloats(RunOne(ReverseNode(1, 0), 10, {x, Int64s({4, 3, 2, 1})}), {4, 4},
               {3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15});
  // Batch-major: row b is sequence b.
  ExpectFloats(RunOne(ReverseNode(0, 1), 10, {Iota({4, 4}), Int64s({1, 2, 3, 4})}), {4, 4},
               {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12});
}

TEST(ReverseSequenceTest, InnerDimsDefaultsAndZeroLength) {
  // Defaults: batch_axis 1, time_axis 0. x is (time 3, batch 2, 2); a step is a pair.
  Tensor x = Iota<int64_t>({3, 2, 2});
  Tensor out = RunOne(MakeNode("ReverseSequence", 2), 10, {x, Int64s({3, 0})});
  EXPECT_EQ(out.ToVector<int64_t>(), (std::vector<int64_t>{8, 9, 2, 3, 4, 5, 6, 7, 0, 1, 10, 11}));
}

TEST(ReverseSequenceTest, Errors) {
  ExpectError(RunStatus(ReverseNode(0, 1), 10, {Iota({2, 4}), Int64s({5, 1})}),
              StatusCode::kInvalidArgument, "sequence_lens[0] = 5 is out of range [0, 4]");
  EXPECT_EQ(RunStatus(ReverseNode(0, 1), 10, {Iota({2, 4}), Int64s({1, -1})}).code(),
            StatusCode::kInvalidArgument);
  ExpectError(RunStatus(ReverseNode(0, 0), 10, {Iota({2, 4}), Int64s({1, 1})}),
              StatusCode::kInvalidModel, "batch_axis 0 and time_axis 0");
  ExpectError(RunStatus(ReverseNode(0, 1), 10, {Iota({2, 4}), Int64s({1, 1, 1})}),
              StatusCode::kInvalidModel, "does not match the batch size 2");
  EXPECT_EQ(
      RunStatus(ReverseNode(0, 1), 10, {Iota({2, 4}), Tensor::FromVector<int32_t>({2}, {1, 1})})
          .code(),
      StatusCode::kUnsupported);
}

// ---- EyeLike ----

TEST(EyeLikeTest, DTypesAndDiagonals) {
  Tensor same = RunOne(MakeNode("EyeLike", 1), 9, {Iota<int32_t>({3, 3})});
  EXPECT_EQ(same.dtype(), DType::kInt32);
  EXPECT_EQ(same.ToVector<int32_t>(), (std::vector<int32_t>{1, 0, 0, 0, 1, 0, 0, 0, 1}));

  Node upper = MakeNode("EyeLike", 1);
  upper.attributes.Set("dtype", int64_t{11});  // float64
  upper.attributes.Set("k", int64_t{1});
  Tensor out = RunOne(upper, 9, {Iota<int32_t>({3, 4})});
  EXPECT_EQ(out.dtype(), DType::kFloat64);
  EXPECT_EQ(out.ToVector<double>(), (std::vector<double>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));

  Node lower = MakeNode("EyeLike", 1);
  lower.attributes.Set("dtype", int64_t{9});  // bool
  lower.attributes.Set("k", int64_t{-1});
  Tensor b = RunOne(lower, 9, {Iota({3, 2})});
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(b.ToVector<int>(), (std::vector<int>{0, 0, 1, 0, 0, 1}));

  // float16 1.0 is 0x3C00; a k past the matrix leaves it all zero.
  Node half = MakeNode("EyeLike", 1);
  half.attributes.Set("dtype", int64_t{10});
  Tensor h = RunOne(half, 9, {Iota({2, 2})});
  const uint16_t* bits = h.data_as<uint16_t>();
  EXPECT_EQ((std::vector<uint16_t>(bits, bits + 4)), (std::vector<uint16_t>{0x3C00, 0, 0, 0x3C00}));
  Node far = MakeNode("EyeLike", 1);
  far.attributes.Set("k", int64_t{INT64_MAX});
  ExpectFloats(RunOne(far, 9, {Iota({2, 2})}), {2, 2}, {0, 0, 0, 0});
}

TEST(EyeLikeTest, Errors) {
  ExpectError(RunStatus(MakeNode("EyeLike", 1), 9, {Iota({2, 2, 2})}), StatusCode::kInvalidModel,
              "rank 2");
  Node string_dtype = MakeNode("EyeLike", 1);
  string_dtype.attributes.Set("dtype", int64_t{8});
  EXPECT_EQ(RunStatus(string_dtype, 9, {Iota({2, 2})}).code(), StatusCode::kUnsupported);
  Node complex_dtype = MakeNode("EyeLike", 1);
  complex_dtype.attributes.Set("dtype", int64_t{14});
  EXPECT_EQ(RunStatus(complex_dtype, 9, {Iota({2, 2})}).code(), StatusCode::kUnsupported);
  Node no_dtype = MakeNode("EyeLike", 1);
  no_dtype.attributes.Set("dtype", int64_t{0});
  EXPECT_EQ(RunStatus(no_dtype, 9, {Iota({2, 2})}).code(), StatusCode::kInvalidModel);
}

}  // namespace
}  // namespace collage
