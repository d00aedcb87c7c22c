// NonZero, Compress, Unique, NonMaxSuppression: ops whose output shape depends on input values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "collage/sdk/op_registry.h"
#include "reference_node_util.h"

namespace collage {
namespace {

using testing::Expect;
using testing::ExpectError;
using testing::Floats;
using testing::Int64s;
using testing::MakeNode;
using testing::RunAll;
using testing::RunOne;
using testing::RunStatus;

Tensor Bools(Shape shape, const std::vector<bool>& v) { return Tensor::FromVector(shape, v); }

// Type inference of `node` over inputs of these types, none of them a constant except those
// given in `values` (nullptr entries are not constant).
Status InferWithout(const Node& node, int64_t opset, const std::vector<TensorType>& types,
                    std::vector<const Tensor*> values) {
  const OpDef* def = OpRegistry::Global().Find("", node.op_type);
  EXPECT_NE(def, nullptr);
  if (def == nullptr) return Status::Ok();
  InferContext ctx{node, opset, {}, std::move(values), {}};
  for (const TensorType& t : types) ctx.input_types.push_back(&t);
  ctx.input_values.resize(types.size(), nullptr);
  return InferNodeTypes(*def, ctx);
}

void ExpectNotConstant(const Status& s, size_t input, const std::string& name) {
  ExpectError(s, StatusCode::kUnsupported,
              "its output shape depends on the values of input " + std::to_string(input) + " ('" +
                  name + "'), which are not known when the model loads");
}

// ---- NonZero ----

TEST(NonZeroTest, SpecExample) {
  // test_nonzero_example: [[1, 0], [1, 1]].
  Expect<int64_t>(RunOne(MakeNode("NonZero", 1), 13, {Bools({2, 2}, {true, false, true, true})}),
                  {2, 3}, {0, 1, 1, 0, 0, 1});
}

TEST(NonZeroTest, RowMajorCoordinatesPerDim) {
  Tensor x = Tensor::FromVector<int32_t>({2, 2, 2}, {0, 1, 1, 0, 1, 0, 1, 0});
  Expect<int64_t>(RunOne(MakeNode("NonZero", 1), 9, {x}), {3, 4},
                  {0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 0, 0});
}

TEST(NonZeroTest, FloatZerosAndNaN) {
  // -0.0 is zero; NaN is not.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Expect<int64_t>(RunOne(MakeNode("NonZero", 1), 13, {Floats({4}, {-0.0f, nan, 0.0f, 2.5f})}),
                  {1, 2}, {1, 3});
  // float16 by its bits: 0x8000 is -0, 0x3c00 is 1.
  Tensor half(DType::kFloat16, {3});
  half.data_as<uint16_t>()[0] = 0x8000;
  half.data_as<uint16_t>()[1] = 0x3c00;
  half.data_as<uint16_t>()[2] = 0x0000;
  Expect<int64_t>(RunOne(MakeNode("NonZero", 1), 13, {half}), {1, 1}, {1});
}

TEST(NonZeroTest, ScalarAndEmptyInputs) {
  // A scalar has rank 0: [0, count], as the spec's shape and ONNX Runtime give.
  Expect<int64_t>(RunOne(MakeNode("NonZero", 1), 13, {Tensor::Scalar<int32_t>(7)}), {0, 1}, {});
  Expect<int64_t>(RunOne(MakeNode("NonZero", 1), 13, {Tensor::Scalar<int32_t>(0)}), {0, 0}, {});
  Expect<int64_t>(RunOne(MakeNode("NonZero", 1), 13, {Tensor(DType::kInt32, {1, 0, 2})}), {3, 0},
                  {});
}

TEST(NonZeroTest, InputNotConstantAtLoad) {
  ExpectNotConstant(InferWithout(MakeNode("NonZero", 1), 13, {{DType::kFloat32, {2, 3}}}, {}), 0,
                    "X");
}

TEST(NonZeroTest, KernelRefusesOutputsOfAnotherShape) {
  // The kernel recomputes the shape from its inputs: outputs allocated for other values are a
  // broken invariant.
  const Node node = MakeNode("NonZero", 1);
  const OpDef* def = OpRegistry::Global().Find("", "NonZero");
  ASSERT_NE(def, nullptr);
  const std::vector<Tensor> inputs = {Floats({3}, {1, 0, 1})};
  std::vector<Tensor> outputs = {Tensor(DType::kInt64, {1, 1})};
  KernelContext ctx{node, 13, inputs, outputs};
  ExpectError(def->run(ctx), StatusCode::kInternal, "inputs now give shape 1x2");
}

// ---- Compress ----

Node CompressNode(std::optional<int64_t> axis) {
  Node node = MakeNode("Compress", 2);
  if (axis) node.attributes.Set("axis", *axis);
  return node;
}

TEST(CompressTest, SpecExamples) {
  Tensor x = Floats({3, 2}, {1, 2, 3, 4, 5, 6});
  Expect<float>(RunOne(CompressNode(0), 11, {x, Bools({3}, {false, true, true})}), {2, 2},
                {3, 4, 5, 6});
  Expect<float>(RunOne(CompressNode(1), 11, {x, Bools({2}, {false, true})}), {3, 1}, {2, 4, 6});
  Expect<float>(RunOne(CompressNode(-1), 11, {x, Bools({2}, {false, true})}), {3, 1}, {2, 4, 6});
  // Without an axis the input is flattened.
  Expect<float>(
      RunOne(CompressNode(std::nullopt), 11, {x, Bools({5}, {false, true, false, false, true})}),
      {2}, {2, 5});
}

TEST(CompressTest, ShortAndLongConditions) {
  Tensor x = Tensor::FromVector<int64_t>({2, 3}, {0, 1, 2, 3, 4, 5});
  // Shorter than the axis: the rest is dropped.
  Expect<int64_t>(RunOne(CompressNode(1), 11, {x, Bools({1}, {true})}), {2, 1}, {0, 3});
  Expect<int64_t>(RunOne(CompressNode(1), 11, {x, Bools({0}, {})}), {2, 0}, {});
  // Longer: extra false entries are fine (numpy.compress); a true one is not.
  Expect<int64_t>(RunOne(CompressNode(0), 11, {x, Bools({4}, {false, true, false, false})}), {1, 3},
                  {3, 4, 5});
  ExpectError(RunStatus(CompressNode(0), 11, {x, Bools({3}, {false, true, true})}),
              StatusCode::kInvalidArgument, "condition entry 2 is true, but the axis 0 has only 2");
  ExpectError(RunStatus(CompressNode(std::nullopt), 11,
                        {x, Bools({7}, {false, false, false, false, false, false, true})}),
              StatusCode::kInvalidArgument, "flattened input has only 6");
}

TEST(CompressTest, AnyFixedSizeDType) {
  Tensor flags = Bools({3}, {true, false, true});
  Tensor picked = RunOne(CompressNode(0), 11, {flags, Bools({3}, {false, true, true})});
  EXPECT_EQ(picked.dtype(), DType::kBool);
  EXPECT_EQ(picked.ToVector<int>(), (std::vector<int>{0, 1}));
  Tensor half(DType::kFloat16, {4});
  for (uint16_t i = 0; i < 4; ++i) half.data_as<uint16_t>()[i] = static_cast<uint16_t>(i + 1);
  Tensor out = RunOne(CompressNode(0), 11, {half, Bools({4}, {true, false, false, true})});
  ASSERT_EQ(out.shape(), Shape{2});
  EXPECT_EQ(out.data_as<uint16_t>()[0], 1);
  EXPECT_EQ(out.data_as<uint16_t>()[1], 4);
}

TEST(CompressTest, Errors) {
  Tensor x = Floats({3, 2}, {1, 2, 3, 4, 5, 6});
  ExpectError(RunStatus(CompressNode(0), 11, {x, Bools({1, 3}, {true, false, true})}),
              StatusCode::kInvalidModel, "condition must be 1-D, has shape 1x3");
  ExpectError(RunStatus(CompressNode(0), 11, {x, Int64s({3}, {1, 0, 1})}),
              StatusCode::kInvalidModel, "condition must be bool");
  ExpectError(RunStatus(CompressNode(2), 11, {x, Bools({1}, {true})}), StatusCode::kInvalidModel,
              "axis 2 is out of range");
  ExpectError(RunStatus(CompressNode(-1), 9, {x, Bools({1}, {true})}), StatusCode::kInvalidModel,
              "needs opset 11");
  ExpectError(RunStatus(CompressNode(0), 11, {Tensor::Scalar<float>(1), Bools({1}, {true})}),
              StatusCode::kInvalidModel, "out of range for rank 0");
}

TEST(CompressTest, ConditionNotConstantAtLoad) {
  const Node node = CompressNode(0);
  const std::vector<TensorType> types = {{DType::kFloat32, {3, 2}}, {DType::kBool, {3}}};
  ExpectNotConstant(InferWithout(node, 11, types, {}), 1, "condition");
  // Only the condition decides the shape: the data need not be a constant.
  Tensor condition = Bools({3}, {true, false, true});
  const OpDef* def = OpRegistry::Global().Find("", "Compress");
  ASSERT_NE(def, nullptr);
  InferContext ctx{node, 11, {&types[0], &types[1]}, {nullptr, &condition}, {}};
  ASSERT_TRUE(InferNodeTypes(*def, ctx).ok());
  EXPECT_EQ(ctx.output_types[0], (TensorType{DType::kFloat32, {2, 2}}));
  // A bad condition shape is reported whether or not its values are known.
  const std::vector<TensorType> bad = {{DType::kFloat32, {3, 2}}, {DType::kBool, {3, 1}}};
  EXPECT_EQ(InferWithout(node, 11, bad, {}).code(), StatusCode::kInvalidModel);
}

// ---- Unique ----

Node UniqueNode(std::optional<int64_t> axis, int64_t sorted, size_t outputs = 4) {
  Node node = MakeNode("Unique", 1, outputs);
  if (axis) node.attributes.Set("axis", *axis);
  node.attributes.Set("sorted", sorted);
  return node;
}

void ExpectUnique(const std::vector<Tensor>& out, const Shape& y_shape, const std::vector<float>& y,
                  const std::vector<int64_t>& indices, const std::vector<int64_t>& inverse,
                  const std::vector<int64_t>& counts) {
  ASSERT_EQ(out.size(), 4u);
  Expect<float>(out[0], y_shape, y);
  Expect<int64_t>(out[1], {static_cast<int64_t>(indices.size())}, indices);
  Expect<int64_t>(out[2], {static_cast<int64_t>(inverse.size())}, inverse);
  Expect<int64_t>(out[3], {static_cast<int64_t>(counts.size())}, counts);
}

TEST(UniqueTest, SpecExamplesWithoutAxis) {
  Tensor x = Floats({6}, {2, 1, 1, 3, 4, 3});
  ExpectUnique(RunAll(UniqueNode(std::nullopt, 1), 11, {x}), {4}, {1, 2, 3, 4}, {1, 0, 3, 4},
               {1, 0, 0, 2, 3, 2}, {2, 1, 2, 1});
  ExpectUnique(RunAll(UniqueNode(std::nullopt, 0), 11, {x}), {4}, {2, 1, 3, 4}, {0, 1, 3, 4},
               {0, 1, 1, 2, 3, 2}, {1, 2, 2, 1});
  // A multi-dim input without an axis is flattened.
  ExpectUnique(RunAll(UniqueNode(std::nullopt, 1), 11, {Floats({2, 2}, {5, 5, 0, 5})}), {2}, {0, 5},
               {2, 0}, {1, 1, 0, 1}, {1, 3});
}

TEST(UniqueTest, SpecExamplesWithAxis) {
  ExpectUnique(RunAll(UniqueNode(0, 1), 11, {Floats({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4})}), {2, 3},
               {1, 0, 0, 2, 3, 4}, {0, 2}, {0, 0, 1}, {2, 1});
  ExpectUnique(RunAll(UniqueNode(-1, 1), 11, {Floats({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 3})}), {3, 2},
               {0, 1, 0, 1, 3, 2}, {1, 0}, {1, 0, 0}, {2, 1});
  Tensor x3 = Floats({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1});
  ExpectUnique(RunAll(UniqueNode(1, 1), 11, {x3}), {2, 3, 2}, {0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1},
               {1, 0, 2}, {1, 0, 2, 0}, {2, 1, 1});
  // sorted=0 along a non-leading axis: slices in first-occurrence order, taken along the axis.
  ExpectUnique(RunAll(UniqueNode(1, 0), 11, {x3}), {2, 3, 2}, {1, 1, 0, 1, 2, 1, 1, 1, 0, 1, 2, 1},
               {0, 1, 2}, {0, 1, 2, 1}, {1, 2, 1});
}

TEST(UniqueTest, NaNsAreOneValueSortedLast) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<Tensor> out =
      RunAll(UniqueNode(std::nullopt, 1), 11, {Floats({5}, {nan, 1, nan, -0.0f, 0.0f})});
  ASSERT_EQ(out[0].shape(), Shape{3});
  const std::vector<float> y = out[0].ToVector<float>();
  EXPECT_TRUE(std::signbit(y[0]));  // the first occurrence of the zero, -0.0
  EXPECT_EQ(y[1], 1.0f);
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_EQ(out[1].ToVector<int64_t>(), (std::vector<int64_t>{3, 1, 0}));
  EXPECT_EQ(out[2].ToVector<int64_t>(), (std::vector<int64_t>{2, 1, 2, 0, 0}));
  EXPECT_EQ(out[3].ToVector<int64_t>(), (std::vector<int64_t>{2, 1, 2}));
}

TEST(UniqueTest, OptionalOutputsAndDTypes) {
  Node only_y = UniqueNode(std::nullopt, 1, 1);
  Expect<int32_t>(RunOne(only_y, 11, {Tensor::FromVector<int32_t>({4}, {3, -1, 3, 3})}), {2},
                  {-1, 3});
  // indices and inverse_indices unused, counts wanted.
  Node gaps = UniqueNode(std::nullopt, 1, 4);
  gaps.outputs[1] = kNoValue;
  gaps.outputs[2] = kNoValue;
  std::vector<Tensor> out = RunAll(gaps, 11, {Bools({4}, {true, false, true, true})});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].dtype(), DType::kBool);
  EXPECT_EQ(out[0].ToVector<int>(), (std::vector<int>{0, 1}));
  EXPECT_TRUE(out[1].empty());
  EXPECT_TRUE(out[2].empty());
  Expect<int64_t>(out[3], {2}, {1, 3});
  // An empty input has no unique values.
  ExpectUnique(RunAll(UniqueNode(std::nullopt, 1), 11, {Floats({0}, {})}), {0}, {}, {}, {}, {});
}

TEST(UniqueTest, Errors) {
  Tensor x = Floats({2, 2}, {1, 2, 3, 4});
  ExpectError(RunStatus(UniqueNode(2, 1), 11, {x}), StatusCode::kInvalidModel,
              "axis 2 is out of range for rank 2");
  ExpectError(RunStatus(UniqueNode(std::nullopt, 2), 11, {x}), StatusCode::kInvalidModel,
              "sorted is 2");
  EXPECT_EQ(RunStatus(UniqueNode(std::nullopt, 1), 11, {Tensor(DType::kFloat16, {2})}).code(),
            StatusCode::kUnsupported);
  ExpectNotConstant(InferWithout(UniqueNode(0, 1), 11, {{DType::kFloat32, {2, 2}}}, {}), 0, "X");
}

// ---- NonMaxSuppression ----

// The six boxes ([y1, x1, y2, x2]) and scores of the spec's examples: boxes 0-2 overlap
// around [0, 1], boxes 3-4 around [10, 11], box 5 stands alone.
Tensor SpecBoxes() {
  return Floats({1, 6, 4}, {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                            0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101});
}
Tensor SpecScores() { return Floats({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}); }
Tensor MaxOut(int64_t n) { return Int64s({1}, {n}); }
Tensor Threshold(float t) { return Floats({1}, {t}); }

Node NmsNode(size_t inputs, int64_t center_point_box = 0) {
  Node node = MakeNode("NonMaxSuppression", inputs);
  if (center_point_box != 0) node.attributes.Set("center_point_box", center_point_box);
  return node;
}

TEST(NonMaxSuppressionTest, SpecExamples) {
  Node node = NmsNode(5);
  const std::vector<int64_t> three = {0, 0, 3, 0, 0, 0, 0, 0, 5};
  Expect<int64_t>(
      RunOne(node, 11, {SpecBoxes(), SpecScores(), MaxOut(3), Threshold(0.5f), Threshold(0)}),
      {3, 3}, three);  // suppress_by_IOU
  Expect<int64_t>(
      RunOne(node, 11, {SpecBoxes(), SpecScores(), MaxOut(2), Threshold(0.5f), Threshold(0)}),
      {2, 3}, {0, 0, 3, 0, 0, 0});  // limit_output_size
  Expect<int64_t>(
      RunOne(node, 10, {SpecBoxes(), SpecScores(), MaxOut(3), Threshold(0.5f), Threshold(0.4f)}),
      {2, 3}, {0, 0, 3, 0, 0, 0});  // suppress_by_IOU_and_scores
  // flipped_coordinates: corners in either order.
  Tensor flipped = Floats({1, 6, 4}, {1, 1,  0, 0,  0, 0.1f,  1, 1.1f,  0, 0.9f, 1, -0.1f,
                                      0, 10, 1, 11, 1, 10.1f, 0, 11.1f, 1, 101,  0, 100});
  Expect<int64_t>(
      RunOne(node, 11, {flipped, SpecScores(), MaxOut(3), Threshold(0.5f), Threshold(0)}), {3, 3},
      three);
  // center_point_box_format: [x_center, y_center, width, height].
  Tensor centers = Floats({1, 6, 4}, {0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
                                      0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1});
  Expect<int64_t>(
      RunOne(NmsNode(5, 1), 11, {centers, SpecScores(), MaxOut(3), Threshold(0.5f), Threshold(0)}),
      {3, 3}, three);
}

TEST(NonMaxSuppressionTest, BatchesAndClassesInOrder) {
  Tensor boxes = SpecBoxes().Reshaped({6, 4});
  std::vector<float> two(boxes.ToVector<float>());
  const std::vector<float> b = two;
  two.insert(two.end(), b.begin(), b.end());
  std::vector<float> s = SpecScores().ToVector<float>();
  std::vector<float> ss = s;
  ss.insert(ss.end(), s.begin(), s.end());
  // two_batches, then two_classes.
  Expect<int64_t>(RunOne(NmsNode(5), 11,
                         {Floats({2, 6, 4}, two), Floats({2, 1, 6}, ss), MaxOut(2), Threshold(0.5f),
                          Threshold(0)}),
                  {4, 3}, {0, 0, 3, 0, 0, 0, 1, 0, 3, 1, 0, 0});
  Expect<int64_t>(
      RunOne(NmsNode(5), 11,
             {SpecBoxes(), Floats({1, 2, 6}, ss), MaxOut(2), Threshold(0.5f), Threshold(0)}),
      {4, 3}, {0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0});
}

TEST(NonMaxSuppressionTest, TiesIdenticalBoxesAndDefaults) {
  // identical_boxes: all equal scores, the lowest index wins and suppresses the rest.
  std::vector<float> same;
  for (int i = 0; i < 10; ++i) same.insert(same.end(), {0, 0, 1, 1});
  Tensor scores = Floats({1, 1, 10}, std::vector<float>(10, 0.9f));
  Expect<int64_t>(
      RunOne(NmsNode(5), 11,
             {Floats({1, 10, 4}, same), scores, MaxOut(3), Threshold(0.5f), Threshold(0)}),
      {1, 3}, {0, 0, 0});
  // Equal scores, disjoint boxes: by box index.
  Tensor apart = Floats({1, 3, 4}, {0, 0, 1, 1, 5, 5, 6, 6, 9, 9, 10, 10});
  Tensor tied = Floats({1, 1, 3}, {0.5f, 0.7f, 0.5f});
  Expect<int64_t>(RunOne(NmsNode(3), 11, {apart, tied, MaxOut(10)}), {3, 3},
                  {0, 0, 1, 0, 0, 0, 0, 0, 2});
  // max_output_boxes_per_class absent (or 0, or negative): nothing is selected.
  Expect<int64_t>(RunOne(NmsNode(2), 11, {apart, tied}), {0, 3}, {});
  Expect<int64_t>(RunOne(NmsNode(3), 11, {apart, tied, MaxOut(-1)}), {0, 3}, {});
  // Without score_threshold even zero and negative scores are kept; with one, only scores
  // strictly above it.
  Tensor low = Floats({1, 1, 3}, {0.0f, -1.0f, 0.5f});
  Expect<int64_t>(RunOne(NmsNode(3), 11, {apart, low, MaxOut(5)}), {3, 3},
                  {0, 0, 2, 0, 0, 0, 0, 0, 1});
  Expect<int64_t>(RunOne(NmsNode(5), 11, {apart, low, MaxOut(5), Threshold(0), Threshold(0)}),
                  {1, 3}, {0, 0, 2});
  // Absent optional inputs in the middle: iou_threshold defaults to 0, so any overlap
  // suppresses.
  Tensor overlapping = Floats({1, 2, 4}, {0, 0, 2, 2, 1, 1, 3, 3});
  Expect<int64_t>(
      RunOne(NmsNode(5), 11,
             {overlapping, Floats({1, 1, 2}, {0.9f, 0.8f}), MaxOut(5), Tensor(), Tensor()}),
      {1, 3}, {0, 0, 0});
}

TEST(NonMaxSuppressionTest, IouMustExceedTheThreshold) {
  // IoU of these two boxes is exactly 1/3 (intersection 1, union 3).
  Tensor boxes = Floats({1, 2, 4}, {0, 0, 1, 2, 0, 1, 1, 3});
  Tensor scores = Floats({1, 1, 2}, {0.9f, 0.8f});
  Expect<int64_t>(RunOne(NmsNode(4), 11, {boxes, scores, MaxOut(5), Threshold(0.5f)}), {2, 3},
                  {0, 0, 0, 0, 0, 1});
  Expect<int64_t>(RunOne(NmsNode(4), 11, {boxes, scores, MaxOut(5), Threshold(0.3f)}), {1, 3},
                  {0, 0, 0});
  // float64 boxes compare in float64: 1/3 is not above 1/3.
  Tensor boxes64 = Tensor::FromVector<double>({1, 2, 4}, {0, 0, 1, 2, 0, 1, 1, 3});
  Tensor scores64 = Tensor::FromVector<double>({1, 1, 2}, {0.9, 0.8});
  Tensor third = Tensor::FromVector<double>({1}, {1.0 / 3.0});
  Expect<int64_t>(RunOne(NmsNode(4), 11, {boxes64, scores64, MaxOut(5), third}), {2, 3},
                  {0, 0, 0, 0, 0, 1});
}

TEST(NonMaxSuppressionTest, Errors) {
  Tensor scores = SpecScores();
  ExpectError(
      RunStatus(NmsNode(3), 11, {Floats({1, 6, 3}, std::vector<float>(18)), scores, MaxOut(3)}),
      StatusCode::kInvalidModel, "boxes must have shape [batches, boxes, 4]");
  ExpectError(
      RunStatus(NmsNode(3), 11, {Floats({6, 4}, std::vector<float>(24)), scores, MaxOut(3)}),
      StatusCode::kInvalidModel, "boxes must have shape");
  ExpectError(
      RunStatus(NmsNode(3), 11, {SpecBoxes(), Floats({1, 1, 5}, {1, 1, 1, 1, 1}), MaxOut(3)}),
      StatusCode::kInvalidModel, "scores must have shape [1, classes, 6]");
  ExpectError(RunStatus(NmsNode(3, 2), 11, {SpecBoxes(), scores, MaxOut(3)}),
              StatusCode::kInvalidModel, "center_point_box is 2");
  ExpectError(RunStatus(NmsNode(3), 11, {SpecBoxes(), scores, Int64s({2}, {3, 3})}),
              StatusCode::kInvalidModel, "max_output_boxes_per_class must be a scalar");
  ExpectError(RunStatus(NmsNode(3), 11, {SpecBoxes(), scores, Floats({1}, {3})}),
              StatusCode::kInvalidModel, "max_output_boxes_per_class has dtype float32");
  EXPECT_EQ(RunStatus(NmsNode(2), 11,
                      {Tensor(DType::kFloat16, {1, 6, 4}), Tensor(DType::kFloat16, {1, 1, 6})})
                .code(),
            StatusCode::kUnsupported);
}

TEST(NonMaxSuppressionTest, InputsNotConstantAtLoad) {
  const std::vector<TensorType> types = {
      {DType::kFloat32, {1, 6, 4}}, {DType::kFloat32, {1, 1, 6}}, {DType::kInt64, {1}}};
  ExpectNotConstant(InferWithout(NmsNode(3), 11, types, {}), 0, "boxes");
  // Constant boxes and scores, a count computed by the graph.
  Tensor boxes = SpecBoxes();
  Tensor scores = SpecScores();
  ExpectNotConstant(InferWithout(NmsNode(3), 11, types, {&boxes, &scores, nullptr}), 2,
                    "max_output_boxes_per_class");
  // A bad box shape is reported first, values or not.
  const std::vector<TensorType> bad = {{DType::kFloat32, {1, 6, 5}}, {DType::kFloat32, {1, 1, 6}}};
  ExpectError(InferWithout(NmsNode(2), 11, bad, {}), StatusCode::kInvalidModel,
              "boxes must have shape");
}

}  // namespace
}  // namespace collage
