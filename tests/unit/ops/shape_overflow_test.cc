// Shapes, counts and offsets computed from hostile attribute values and constant inputs:
// each op family either computes the exact answer (Range, whose extreme cases have one) or
// refuses with an error that names the node and says what overflowed. Before the checked
// arithmetic (util/checked_math.h) these wrapped silently: Range(-10, INT64_MAX - 5,
// INT64_MAX) came out empty, Range(0, INT64_MAX, 2) was "not constant".
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Node MakeNode(const std::string& op, size_t num_inputs, Attributes attributes = {}) {
  Node node;
  node.name = "hostile_" + op;
  node.op_type = op;
  node.attributes = std::move(attributes);
  for (size_t i = 0; i < num_inputs; ++i) node.inputs.push_back(static_cast<ValueId>(i));
  node.outputs.push_back(100);
  return node;
}

Attributes Attrs(std::initializer_list<std::pair<std::string, Attribute>> values) {
  Attributes a;
  for (const auto& [name, value] : values) a.Set(name, value);
  return a;
}

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// The node must be refused as an invalid model, with its name and `what` (e.g. "overflow")
// in the message.
void ExpectRefused(const Node& node, int64_t opset, const std::vector<Tensor>& inputs,
                   const std::string& what = "overflow") {
  auto out = RunReferenceNode(node, opset, inputs);
  ASSERT_FALSE(out.ok()) << node.op_type << " was accepted";
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel) << out.status().ToString();
  EXPECT_NE(out.status().message().find(node.name), std::string::npos) << out.status().ToString();
  EXPECT_NE(out.status().message().find(what), std::string::npos) << out.status().ToString();
}

// Type inference alone, for inputs too large to allocate: every input is a type without
// data. Fills `outputs` when given.
Status InferOnly(const Node& node, int64_t opset, const std::vector<TensorType>& types,
                 std::vector<TensorType>* outputs = nullptr) {
  const OpDef* def = OpRegistry::Global().Find("", node.op_type);
  if (def == nullptr) return Status(StatusCode::kNotFound, node.op_type);
  InferContext ctx{node, opset, {}, {}, {}};
  for (const TensorType& t : types) ctx.input_types.push_back(&t);
  ctx.input_values.assign(types.size(), nullptr);
  Status s = InferNodeTypes(*def, ctx);
  if (outputs != nullptr) *outputs = ctx.output_types;
  return s;
}

void ExpectInferRefused(const Node& node, int64_t opset, const std::vector<TensorType>& types,
                        const std::string& what = "overflow") {
  const Status s = InferOnly(node, opset, types);
  ASSERT_FALSE(s.ok()) << node.op_type << " was accepted";
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << s.ToString();
  EXPECT_NE(s.message().find(node.name), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(what), std::string::npos) << s.ToString();
}

template <typename T>
std::vector<T> RunRange(T start, T limit, T delta) {
  auto out = RunReferenceNode(
      MakeNode("Range", 3), 11,
      {Tensor::Scalar<T>(start), Tensor::Scalar<T>(limit), Tensor::Scalar<T>(delta)});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  EXPECT_EQ(out->at(0).rank(), 1);
  return out->at(0).template ToVector<T>();
}

// ---- Range ----

TEST(RangeOverflowTest, CountOfAStepLargerThanHalfTheDistance) {
  // limit - start = 2^63 + 4 does not fit in int64; the count is ceil((2^63 + 4) / (2^63 - 1)).
  EXPECT_EQ(RunRange<int64_t>(-10, kMax - 5, kMax), (std::vector<int64_t>{-10, kMax - 10}));
}

TEST(RangeOverflowTest, NegativeStepDownToInt64Min) {
  const int64_t step = -(int64_t{1} << 62);
  // start - limit = 2^63 + 5 does not fit in int64; the last element 5 - 2^63 does.
  EXPECT_EQ(RunRange<int64_t>(5, kMin, step), (std::vector<int64_t>{5, 5 + step, kMin + 5}));
}

TEST(RangeOverflowTest, ElementsWhoseStepMultipleOverflows) {
  // 3 * 2^62 overflows, start + 3 * 2^62 = 2^62 + 1 does not.
  const int64_t step = int64_t{1} << 62;
  EXPECT_EQ(RunRange<int64_t>(kMin + 1, kMax, step),
            (std::vector<int64_t>{kMin + 1, kMin + 1 + step, 1, step + 1}));
  EXPECT_EQ(RunRange<int64_t>(kMax, kMin, kMin), (std::vector<int64_t>{kMax, -1}));
  EXPECT_EQ(RunRange<int32_t>(INT32_MIN, INT32_MAX, INT32_MAX),
            (std::vector<int32_t>{INT32_MIN, -1, INT32_MAX - 1}));
}

TEST(RangeOverflowTest, CountBeyondInt64IsRefused) {
  // 2^64 - 1 elements: no tensor can have them, and the count must not wrap to 0 or -1.
  ExpectRefused(
      MakeNode("Range", 3), 11,
      {Tensor::Scalar<int64_t>(kMin), Tensor::Scalar<int64_t>(kMax), Tensor::Scalar<int64_t>(1)});
  ExpectRefused(
      MakeNode("Range", 3), 11,
      {Tensor::Scalar<int64_t>(kMax), Tensor::Scalar<int64_t>(kMin), Tensor::Scalar<int64_t>(-1)});
}

TEST(RangeOverflowTest, CountThatFitsButIsTooLargeIsRefused) {
  // Used to compute (2^63 - 1 + 1) / 2 in int64, a negative count reported as "depends on data
  // that is not constant".
  ExpectRefused(
      MakeNode("Range", 3), 11,
      {Tensor::Scalar<int64_t>(0), Tensor::Scalar<int64_t>(kMax), Tensor::Scalar<int64_t>(2)},
      "too large");
}

TEST(RangeOverflowTest, FloatBounds) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto range = [](double s, double l, double d) {
    return std::vector<Tensor>{Tensor::Scalar<double>(s), Tensor::Scalar<double>(l),
                               Tensor::Scalar<double>(d)};
  };
  ExpectRefused(MakeNode("Range", 3), 11, range(0, inf, 1));
  ExpectRefused(MakeNode("Range", 3), 11, range(-inf, 0, 1));
  ExpectRefused(MakeNode("Range", 3), 11, range(0, 1e300, 1e-300));
  // limit - start is inf in double although both bounds are finite.
  ExpectRefused(MakeNode("Range", 3), 11, range(-1.7e308, 1.7e308, 1e300));
  ExpectRefused(MakeNode("Range", 3), 11, range(nan, 1, 1), "NaN");
  ExpectRefused(MakeNode("Range", 3), 11, range(0, nan, 1), "NaN");
  ExpectRefused(MakeNode("Range", 3), 11, range(0, 1, nan), "NaN");
  ExpectRefused(MakeNode("Range", 3), 11, range(0, 1, 0), "delta is 0");
  ExpectRefused(
      MakeNode("Range", 3), 11,
      {Tensor::Scalar<float>(0), Tensor::Scalar<float>(1e30f), Tensor::Scalar<float>(1e-30f)});
  // Bounds that go the other way, an infinite step: the spec's formula gives no elements.
  EXPECT_EQ(RunRange<double>(0, -inf, 1), std::vector<double>{});
  EXPECT_EQ(RunRange<double>(0, 10, inf), std::vector<double>{});
  EXPECT_EQ(RunRange<float>(1, 2, 0.5f), (std::vector<float>{1, 1.5f}));
}

// ---- Reshape, ConstantOfShape ----

TEST(ShapeProductOverflowTest, ReshapeTargetWhoseProductOverflows) {
  const int64_t big = int64_t{1} << 32;
  ExpectRefused(MakeNode("Reshape", 2), 13, {Tensor(DType::kFloat32, {4}), Ints({big, big, -1})});
  ExpectRefused(MakeNode("Reshape", 2), 13, {Tensor(DType::kFloat32, {4}), Ints({kMax, 2})});
  // An empty target: the product is 0 whatever the other dims are.
  auto out = RunReferenceNode(MakeNode("Reshape", 2, Attrs({{"allowzero", int64_t{1}}})), 14,
                              {Tensor(DType::kFloat32, {0}), Ints({big, big, 0})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).shape(), (Shape{big, big, 0}));
}

TEST(ShapeProductOverflowTest, ConstantOfShapeWhoseElementCountOverflows) {
  ExpectRefused(MakeNode("ConstantOfShape", 1), 13, {Ints({kMax, kMax})});
  ExpectRefused(MakeNode("ConstantOfShape", 1), 13, {Ints({int64_t{1} << 40, int64_t{1} << 40})});
  ExpectRefused(MakeNode("ConstantOfShape", 1), 13, {Ints({int64_t{1} << 50})}, "too large");
}

// ---- Conv, ConvTranspose, pools ----

TEST(ConvOverflowTest, DilatedKernelOfAHugeWeight) {
  // Attributes are bounded to 2^31, but W's kernel dims are a shape: (2^40 - 1) * 2^31.
  ExpectInferRefused(MakeNode("Conv", 2, Attrs({{"dilations", std::vector<int64_t>{1 << 30}}})), 13,
                     {{DType::kFloat32, {1, 1, 10}}, {DType::kFloat32, {1, 1, int64_t{1} << 40}}});
}

TEST(ConvOverflowTest, GroupTimesWeightChannels) {
  // Any group divides 0 channels; W[1] * group = 2^40 * 2^40 used to wrap.
  const int64_t big = int64_t{1} << 40;
  auto out =
      RunReferenceNode(MakeNode("Conv", 2, Attrs({{"group", big}})), 13,
                       {Tensor(DType::kFloat32, {1, 0, 4}), Tensor(DType::kFloat32, {0, big, 1})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel) << out.status().ToString();
  EXPECT_NE(out.status().message().find("group"), std::string::npos) << out.status().ToString();
}

TEST(ConvOverflowTest, PaddedInputOfAHugeInput) {
  ExpectInferRefused(MakeNode("Conv", 2, Attrs({{"pads", std::vector<int64_t>{1 << 30, 1 << 30}}})),
                     13, {{DType::kFloat32, {1, 1, kMax - 10}}, {DType::kFloat32, {1, 1, 1}}});
}

TEST(ConvTransposeOverflowTest, StrideTimesAHugeInput) {
  ExpectInferRefused(
      MakeNode("ConvTranspose", 2, Attrs({{"strides", std::vector<int64_t>{1 << 30}}})), 13,
      {{DType::kFloat32, {1, 1, int64_t{1} << 40}}, {DType::kFloat32, {1, 1, 2}}});
  ExpectInferRefused(MakeNode("ConvTranspose", 2,
                              Attrs({{"strides", std::vector<int64_t>{1 << 30}},
                                     {"auto_pad", std::string("SAME_UPPER")}})),
                     13,
                     {{DType::kFloat32, {1, 1, int64_t{1} << 40}}, {DType::kFloat32, {1, 1, 2}}});
}

TEST(ConvTransposeOverflowTest, HostileOutputShape) {
  // total padding = full - output_shape, with output_shape an unbounded attribute.
  ExpectRefused(MakeNode("ConvTranspose", 2, Attrs({{"output_shape", std::vector<int64_t>{kMin}}})),
                13, {Tensor(DType::kFloat32, {1, 1, 3}), Tensor(DType::kFloat32, {1, 1, 2})});
}

TEST(ConvTransposeOverflowTest, GroupTimesWeightChannels) {
  const int64_t big = int64_t{1} << 40;
  ExpectRefused(MakeNode("ConvTranspose", 2, Attrs({{"group", big}})), 13,
                {Tensor(DType::kFloat32, {1, 0, 3}), Tensor(DType::kFloat32, {0, big, 2})});
}

TEST(PoolOverflowTest, PaddedInputOfAHugeInput) {
  for (const char* op : {"MaxPool", "AveragePool"}) {
    // The window wider than the pads (pads as wide as the window are refused first).
    ExpectInferRefused(MakeNode(op, 1,
                                Attrs({{"kernel_shape", std::vector<int64_t>{int64_t{1} << 31}},
                                       {"pads", std::vector<int64_t>{1 << 30, 1 << 30}}})),
                       13, {{DType::kFloat32, {1, 1, kMax - 10}}});
  }
}

TEST(PoolOverflowTest, CeilModeAtTheEdgeOfInt64) {
  // The ceil-mode window past the last floor-mode one would start at 2^32 * 2^31 = 2^63,
  // beyond int64: it starts past the input, so it is dropped rather than computed.
  std::vector<TensorType> out;
  const Status s = InferOnly(MakeNode("MaxPool", 1,
                                      Attrs({{"kernel_shape", std::vector<int64_t>{1}},
                                             {"strides", std::vector<int64_t>{int64_t{1} << 31}},
                                             {"ceil_mode", int64_t{1}}})),
                             13, {{DType::kFloat32, {1, 1, kMax - (int64_t{1} << 30)}}}, &out);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(out.at(0).shape, (Shape{1, 1, int64_t{1} << 32}));
}

// ---- Pad, Tile, Expand ----

TEST(PadOverflowTest, HugePads) {
  ExpectRefused(MakeNode("Pad", 2), 13, {Tensor(DType::kFloat32, {3}), Ints({kMax, 0})});
  ExpectRefused(MakeNode("Pad", 2), 13, {Tensor(DType::kFloat32, {3}), Ints({1, kMax})});
  ExpectRefused(MakeNode("Pad", 2), 13, {Tensor(DType::kFloat32, {3}), Ints({kMin, 0})}, "below 0");
  // 1 + INT64_MIN + INT64_MAX = 0 fits, the crop -INT64_MIN does not.
  ExpectRefused(MakeNode("Pad", 2), 13, {Tensor(DType::kFloat32, {1}), Ints({kMin, kMax})});
  ExpectRefused(MakeNode("Pad", 1, Attrs({{"pads", std::vector<int64_t>{kMax, kMax}}})), 2,
                {Tensor(DType::kFloat32, {3})});
}

TEST(PadOverflowTest, CropAndPadThatCancelStillWork) {
  // Crop 2^62 from the front and pad 2^62 + 1 at the back of a length-1 axis: one fill value.
  const int64_t big = int64_t{1} << 62;
  auto out = RunReferenceNode(MakeNode("Pad", 2), 13,
                              {Tensor::FromVector<float>({1}, {5}), Ints({-big, big})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).ToVector<float>(), std::vector<float>{0});
}

TEST(TileOverflowTest, HugeRepeats) {
  ExpectRefused(MakeNode("Tile", 2), 13, {Tensor(DType::kFloat32, {4}), Ints({int64_t{1} << 62})});
  ExpectRefused(MakeNode("Tile", 2), 13, {Tensor(DType::kFloat32, {2, 3}), Ints({kMax, kMax})});
  // Each dim fits, the element count does not.
  ExpectRefused(MakeNode("Tile", 2), 13,
                {Tensor(DType::kFloat32, {1, 1}), Ints({int64_t{1} << 40, int64_t{1} << 40})});
}

TEST(ExpandOverflowTest, HugeTargetShape) {
  ExpectRefused(MakeNode("Expand", 2), 13,
                {Tensor(DType::kFloat32, {1}), Ints({int64_t{1} << 40, int64_t{1} << 40})});
  ExpectRefused(MakeNode("Expand", 2), 13, {Tensor(DType::kFloat32, {1}), Ints({kMax})},
                "too large");
}

// ---- Slice, Concat ----

TEST(SliceOverflowTest, ExtremeStartsEndsAndSteps) {
  const Tensor data = Tensor::FromVector<int64_t>({5}, {0, 1, 2, 3, 4});
  auto slice = [&](std::vector<int64_t> starts, std::vector<int64_t> ends,
                   std::vector<int64_t> steps, const Tensor& x) {
    auto out = RunReferenceNode(MakeNode("Slice", 5), 13,
                                {x, Ints(starts), Ints(ends), Ints({0}), Ints(steps)});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? out->at(0) : Tensor();
  };
  EXPECT_EQ(slice({kMin}, {kMax}, {1}, data).ToVector<int64_t>(),
            (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(slice({kMax}, {kMin}, {-1}, data).ToVector<int64_t>(),
            (std::vector<int64_t>{4, 3, 2, 1, 0}));
  // -INT64_MIN does not exist: the length used to be computed with it.
  EXPECT_EQ(slice({kMax}, {kMin}, {kMin}, data).ToVector<int64_t>(), std::vector<int64_t>{4});
  EXPECT_EQ(slice({0}, {kMax}, {kMax}, data).ToVector<int64_t>(), std::vector<int64_t>{0});
  EXPECT_EQ(slice({-1}, {kMin}, {kMin + 1}, data).ToVector<int64_t>(), std::vector<int64_t>{4});
  // On axis 0 of a 3 x 2 tensor the step multiplies a stride of 2: INT64_MIN * 2 wrapped.
  const Tensor rows = Tensor::FromVector<int64_t>({3, 2}, {0, 1, 2, 3, 4, 5});
  const Tensor last_row = slice({-1}, {kMin}, {kMin}, rows);
  EXPECT_EQ(last_row.shape(), (Shape{1, 2}));
  EXPECT_EQ(last_row.ToVector<int64_t>(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(slice({0}, {kMax}, {kMax / 2 + 1}, rows).ToVector<int64_t>(),
            (std::vector<int64_t>{0, 1}));
}

TEST(ConcatOverflowTest, LengthsWhoseSumOverflows) {
  const int64_t big = int64_t{1} << 62;
  const TensorType t{DType::kFloat32, {1, big}};
  ExpectInferRefused(MakeNode("Concat", 3, Attrs({{"axis", int64_t{1}}})), 13, {t, t, t});
}

// ---- Resize ----

Tensor Scales(std::vector<float> s) {
  return Tensor::FromVector<float>({static_cast<int64_t>(s.size())}, s);
}

TEST(ResizeOverflowTest, HostileScales) {
  const Tensor x(DType::kFloat32, {1, 1, 4, 4});
  const Node resize = MakeNode("Resize", 3);
  // floor(4 * 1e30) is a float far beyond int64.
  ExpectRefused(resize, 13, {x, Tensor(), Scales({1, 1, 1e30f, 1})});
  const float inf = std::numeric_limits<float>::infinity();
  ExpectRefused(resize, 13, {x, Tensor(), Scales({1, 1, inf, 1})}, "finite");
  ExpectRefused(resize, 13, {x, Tensor(), Scales({1, 1, std::nanf(""), 1})}, "positive");
  ExpectRefused(resize, 13, {x, Tensor(), Scales({1, 1, -2, 1})}, "positive");
  ExpectRefused(resize, 13, {x, Tensor(), Scales({1, 1, 0, 1})}, "positive");
  // Each length fits, the element count does not.
  ExpectRefused(resize, 13, {x, Tensor(), Scales({1, 1, 1e15f, 1e15f})});
  ExpectRefused(MakeNode("Resize", 4), 13,
                {x, Tensor(), Tensor(), Ints({1, 1, int64_t{1} << 40, int64_t{1} << 40})});
}

TEST(ResizeOverflowTest, AntialiasedFilterOfATinyScale) {
  // The filter widens by 1 / scale: 2e30 taps per output.
  ExpectRefused(
      MakeNode("Resize", 3, Attrs({{"mode", std::string("linear")}, {"antialias", int64_t{1}}})),
      18, {Tensor(DType::kFloat32, {1, 1, 4, 4}), Tensor(), Scales({1, 1, 1e-30f, 1})});
}

// ---- LRN ----

TEST(LrnOverflowTest, HugeSizeIsAWindowOverEveryChannel) {
  // size * inner (the work estimate) used to overflow; the window is simply all channels.
  auto out = RunReferenceNode(MakeNode("LRN", 1, Attrs({{"size", kMax}, {"bias", 2.0f}})), 13,
                              {Tensor::FromVector<float>({1, 3, 1}, {1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // alpha / size is ~1e-23: y = x / bias^0.75.
  const std::vector<float> y = out->at(0).ToVector<float>();
  ASSERT_EQ(y.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(y[i], (i + 1) / std::pow(2.0f, 0.75f));
}

}  // namespace
}  // namespace collage
