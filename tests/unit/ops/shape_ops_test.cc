// Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size, Constant, ConstantOfShape, Range.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

Node MakeNode(const std::string& op, size_t num_inputs, size_t num_outputs = 1) {
  Node node;
  node.name = "n1";
  node.op_type = op;
  for (size_t i = 0; i < num_inputs; ++i) node.inputs.push_back(static_cast<ValueId>(i));
  for (size_t i = 0; i < num_outputs; ++i) node.outputs.push_back(static_cast<ValueId>(100 + i));
  return node;
}

Tensor Iota(DType dtype, Shape shape) {
  Tensor t(dtype, shape);
  std::vector<float> v(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  if (dtype == DType::kFloat32) return Tensor::FromVector<float>(shape, v);
  std::vector<int64_t> iv(v.begin(), v.end());
  if (dtype == DType::kInt64) return Tensor::FromVector<int64_t>(shape, iv);
  std::vector<int32_t> i32(v.begin(), v.end());
  return Tensor::FromVector<int32_t>(shape, i32);
}

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// Runs type inference only, with the inputs whose `constant` flag is false given as
// types without values (as the frontend sees a computed input).
Status InferWithUnknownInputs(const Node& node, int64_t opset, const std::vector<Tensor>& inputs,
                              const std::vector<bool>& constant) {
  const OpDef* def = OpRegistry::Global().Find("", node.op_type);
  if (def == nullptr) return Status(StatusCode::kNotFound, node.op_type);
  std::vector<TensorType> types(inputs.size());
  InferContext ctx{node, opset, {}, {}, {}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    types[i] = {inputs[i].dtype(), inputs[i].shape()};
    ctx.input_types.push_back(&types[i]);
    ctx.input_values.push_back(constant[i] ? &inputs[i] : nullptr);
  }
  return InferNodeTypes(*def, ctx);
}

template <typename T>
void ExpectTensor(const Tensor& t, const Shape& shape, const std::vector<T>& values) {
  EXPECT_EQ(t.dtype(), DTypeOf<T>());
  EXPECT_EQ(t.shape(), shape);
  // std::vector<bool> has no data(), so bools compare as ints.
  using Element = std::conditional_t<std::is_same_v<T, bool>, int, T>;
  EXPECT_EQ(t.ToVector<Element>(), std::vector<Element>(values.begin(), values.end()));
}

// Runs the node and returns output 0 (or fails the test).
Tensor RunOne(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  auto result = RunReferenceNode(node, opset, inputs);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return Tensor();
  return result->at(0);
}

StatusCode RunCode(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  return RunReferenceNode(node, opset, inputs).status().code();
}

TEST(ShapeOpsTest, KindsAreRegistered) {
  const OpRegistry& r = OpRegistry::Global();
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice",
                         "Gather", "Concat", "Split", "Pad", "Tile"}) {
    ASSERT_NE(r.Find("", op), nullptr) << op;
    EXPECT_EQ(r.Find("", op)->kind, OpKind::kInjective) << op;
  }
  for (const char* op : {"Shape", "Size", "Constant", "ConstantOfShape", "Range"}) {
    ASSERT_NE(r.Find("", op), nullptr) << op;
    EXPECT_EQ(r.Find("", op)->kind, OpKind::kOpaque) << op;
  }
}

TEST(ReshapeTest, ZeroCopiesDimAndMinusOneIsInferred) {
  Tensor out =
      RunOne(MakeNode("Reshape", 2), 14, {Iota(DType::kFloat32, {2, 3, 4}), Ints({4, 0, -1})});
  std::vector<float> expected(24);
  for (size_t i = 0; i < 24; ++i) expected[i] = static_cast<float>(i);
  ExpectTensor<float>(out, {4, 3, 2}, expected);
}

TEST(ReshapeTest, AllowZeroKeepsZeroDims) {
  Node node = MakeNode("Reshape", 2);
  node.attributes.Set("allowzero", int64_t{1});
  Tensor out = RunOne(node, 14, {Tensor(DType::kFloat32, {0, 3}), Ints({3, 0})});
  EXPECT_EQ(out.shape(), (Shape{3, 0}));
  // Without allowzero the 0 copies input dim 1 (3): 9 elements from 0 is an error.
  EXPECT_EQ(RunCode(MakeNode("Reshape", 2), 14, {Tensor(DType::kFloat32, {0, 3}), Ints({3, 0})}),
            StatusCode::kInvalidModel);
}

TEST(ReshapeTest, MovesBoolAndInt32) {
  Tensor b = Tensor::FromVector<bool>({2, 2}, {true, false, false, true});
  ExpectTensor<bool>(RunOne(MakeNode("Reshape", 2), 13, {b, Ints({4})}), {4},
                     {true, false, false, true});
  Tensor i = Tensor::FromVector<int32_t>({4}, {1, 2, 3, 4});
  Tensor shape32 = Tensor::FromVector<int32_t>({2}, {2, -1});
  ExpectTensor<int32_t>(RunOne(MakeNode("Reshape", 2), 13, {i, shape32}), {2, 2}, {1, 2, 3, 4});
}

TEST(ReshapeTest, Errors) {
  Tensor x = Iota(DType::kFloat32, {2, 3});
  EXPECT_EQ(RunCode(MakeNode("Reshape", 2), 13, {x, Ints({-1, -1})}), StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(MakeNode("Reshape", 2), 13, {x, Ints({4, 2})}), StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(MakeNode("Reshape", 2), 13, {x, Ints({4, -1})}), StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(MakeNode("Reshape", 2), 13, {x, Ints({-2, 3})}), StatusCode::kInvalidModel);
  // 0 at a position the input does not have.
  EXPECT_EQ(RunCode(MakeNode("Reshape", 2), 13, {x, Ints({6, 1, 0})}), StatusCode::kInvalidModel);
}

TEST(ReshapeTest, NonConstantShapeIsUnsupported) {
  Status s = InferWithUnknownInputs(MakeNode("Reshape", 2), 13,
                                    {Iota(DType::kFloat32, {2, 3}), Ints({3, 2})}, {true, false});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("shape"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("not constant"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'n1'"), std::string::npos) << s.message();
}

TEST(ReshapeTest, Opset1ShapeAttribute) {
  Node node = MakeNode("Reshape", 1);
  node.attributes.Set("shape", std::vector<int64_t>{3, 2});
  EXPECT_EQ(RunOne(node, 1, {Iota(DType::kFloat32, {6})}).shape(), (Shape{3, 2}));
}

TEST(FlattenTest, Axes) {
  Tensor x = Iota(DType::kInt64, {2, 3, 4, 5});
  const std::vector<std::pair<int64_t, Shape>> cases = {
      {0, {1, 120}}, {1, {2, 60}}, {2, {6, 20}}, {4, {120, 1}}, {-1, {24, 5}}, {-4, {1, 120}}};
  for (const auto& [axis, shape] : cases) {
    Node node = MakeNode("Flatten", 1);
    node.attributes.Set("axis", axis);
    Tensor out = RunOne(node, 13, {x});
    EXPECT_EQ(out.shape(), shape) << "axis " << axis;
    EXPECT_EQ(out.ToVector<int64_t>(), x.ToVector<int64_t>());
  }
  // Default axis 1.
  EXPECT_EQ(RunOne(MakeNode("Flatten", 1), 13, {x}).shape(), (Shape{2, 60}));
}

TEST(FlattenTest, AxisOutOfRangeNamesNode) {
  Node node = MakeNode("Flatten", 1);
  node.attributes.Set("axis", int64_t{5});
  auto r = RunReferenceNode(node, 13, {Iota(DType::kFloat32, {2, 3, 4, 5})});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(r.status().message().find("Flatten node 'n1'"), std::string::npos);
  node.attributes.Set("axis", int64_t{-5});
  EXPECT_EQ(RunCode(node, 13, {Iota(DType::kFloat32, {2, 3, 4, 5})}), StatusCode::kInvalidModel);
}

TEST(SqueezeTest, AttributeBeforeOpset13) {
  Node node = MakeNode("Squeeze", 1);
  node.attributes.Set("axes", std::vector<int64_t>{0, -1});
  Tensor out = RunOne(node, 11, {Iota(DType::kFloat32, {1, 3, 1})});
  ExpectTensor<float>(out, {3}, {0, 1, 2});
}

TEST(SqueezeTest, InputFromOpset13) {
  Tensor x = Iota(DType::kFloat32, {1, 3, 1, 2});
  EXPECT_EQ(RunOne(MakeNode("Squeeze", 2), 13, {x, Ints({2})}).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(RunOne(MakeNode("Squeeze", 2), 13, {x, Ints({-2, 0})}).shape(), (Shape{3, 2}));
  // No axes: every 1-dim goes.
  EXPECT_EQ(RunOne(MakeNode("Squeeze", 1), 13, {x}).shape(), (Shape{3, 2}));
  EXPECT_EQ(RunOne(MakeNode("Squeeze", 1), 11, {x}).shape(), (Shape{3, 2}));
  EXPECT_EQ(RunOne(MakeNode("Squeeze", 1), 13, {Iota(DType::kFloat32, {1, 1})}).shape(), Shape{});
}

TEST(SqueezeTest, Errors) {
  Tensor x = Iota(DType::kFloat32, {1, 3, 1});
  EXPECT_EQ(RunCode(MakeNode("Squeeze", 2), 13, {x, Ints({1})}), StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(MakeNode("Squeeze", 2), 13, {x, Ints({3})}), StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(MakeNode("Squeeze", 2), 13, {x, Ints({0, -3})}), StatusCode::kInvalidModel);
  Status s = InferWithUnknownInputs(MakeNode("Squeeze", 2), 13, {x, Ints({0})}, {true, false});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("axes"), std::string::npos) << s.message();
}

TEST(UnsqueezeTest, AttributeAndInput) {
  Tensor x = Iota(DType::kFloat32, {2, 3});
  Node attr = MakeNode("Unsqueeze", 1);
  attr.attributes.Set("axes", std::vector<int64_t>{0, 3});
  EXPECT_EQ(RunOne(attr, 11, {x}).shape(), (Shape{1, 2, 3, 1}));
  // Axes index the output (rank 4): -1 is 3.
  Tensor out = RunOne(MakeNode("Unsqueeze", 2), 13, {x, Ints({-1, 1})});
  ExpectTensor<float>(out, {2, 1, 3, 1}, {0, 1, 2, 3, 4, 5});
  // Unsorted axes.
  EXPECT_EQ(RunOne(MakeNode("Unsqueeze", 2), 13, {x, Ints({4, 0, 2})}).shape(),
            (Shape{1, 2, 1, 3, 1}));
  // Scalar to 1-D.
  EXPECT_EQ(RunOne(MakeNode("Unsqueeze", 2), 13, {Tensor::Scalar<float>(5), Ints({0})}).shape(),
            (Shape{1}));
}

TEST(UnsqueezeTest, Errors) {
  Tensor x = Iota(DType::kFloat32, {2, 3});
  auto r = RunReferenceNode(MakeNode("Unsqueeze", 2), 13, {x, Ints({3})});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(r.status().message().find("Unsqueeze node 'n1'"), std::string::npos);
  EXPECT_EQ(RunCode(MakeNode("Unsqueeze", 2), 13, {x, Ints({1, 1})}), StatusCode::kInvalidModel);
  EXPECT_EQ(RunCode(MakeNode("Unsqueeze", 1), 11, {x}), StatusCode::kInvalidModel);
}

TEST(ShapeOpTest, StartAndEnd) {
  Tensor x(DType::kFloat32, {2, 3, 4, 5});
  ExpectTensor<int64_t>(RunOne(MakeNode("Shape", 1), 13, {x}), {4}, {2, 3, 4, 5});
  Node node = MakeNode("Shape", 1);
  node.attributes.Set("start", int64_t{1});
  node.attributes.Set("end", int64_t{-1});
  ExpectTensor<int64_t>(RunOne(node, 15, {x}), {2}, {3, 4});
  node.attributes.Set("start", int64_t{-10});
  node.attributes.Set("end", int64_t{10});
  ExpectTensor<int64_t>(RunOne(node, 15, {x}), {4}, {2, 3, 4, 5});
  node.attributes.Set("start", int64_t{3});
  node.attributes.Set("end", int64_t{1});
  ExpectTensor<int64_t>(RunOne(node, 15, {x}), {0}, {});
  ExpectTensor<int64_t>(RunOne(MakeNode("Shape", 1), 15, {Tensor::Scalar<bool>(true)}), {0}, {});
}

TEST(SizeTest, CountsElements) {
  ExpectTensor<int64_t>(RunOne(MakeNode("Size", 1), 13, {Tensor(DType::kUInt8, {2, 3, 4})}), {},
                        {24});
  ExpectTensor<int64_t>(RunOne(MakeNode("Size", 1), 13, {Tensor(DType::kFloat32, {2, 0})}), {},
                        {0});
}

TEST(ConstantTest, ValueForms) {
  Node node = MakeNode("Constant", 0);
  node.attributes.Set("value", Tensor::FromVector<int32_t>({2}, {7, -8}));
  ExpectTensor<int32_t>(RunOne(node, 13, {}), {2}, {7, -8});

  node = MakeNode("Constant", 0);
  node.attributes.Set("value_float", 2.5f);
  ExpectTensor<float>(RunOne(node, 13, {}), {}, {2.5f});

  node = MakeNode("Constant", 0);
  node.attributes.Set("value_floats", std::vector<float>{1.5f, -2.0f});
  ExpectTensor<float>(RunOne(node, 13, {}), {2}, {1.5f, -2.0f});

  node = MakeNode("Constant", 0);
  node.attributes.Set("value_int", int64_t{-3});
  ExpectTensor<int64_t>(RunOne(node, 13, {}), {}, {-3});

  node = MakeNode("Constant", 0);
  node.attributes.Set("value_ints", std::vector<int64_t>{4, 5, 6});
  ExpectTensor<int64_t>(RunOne(node, 13, {}), {3}, {4, 5, 6});
}

TEST(ConstantTest, Errors) {
  Node node = MakeNode("Constant", 0);
  node.attributes.Set("value_string", std::string("hello"));
  auto r = RunReferenceNode(node, 13, {});
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("value_string"), std::string::npos);
  EXPECT_EQ(RunCode(MakeNode("Constant", 0), 13, {}), StatusCode::kInvalidModel);
  node = MakeNode("Constant", 0);
  node.attributes.Set("value_int", int64_t{1});
  node.attributes.Set("value_float", 1.0f);
  EXPECT_EQ(RunCode(node, 13, {}), StatusCode::kInvalidModel);
}

TEST(ConstantOfShapeTest, FillsValue) {
  ExpectTensor<float>(RunOne(MakeNode("ConstantOfShape", 1), 13, {Ints({2, 3})}), {2, 3},
                      std::vector<float>(6, 0.0f));
  Node node = MakeNode("ConstantOfShape", 1);
  node.attributes.Set("value", Tensor::FromVector<int64_t>({1}, {7}));
  ExpectTensor<int64_t>(RunOne(node, 13, {Ints({3})}), {3}, {7, 7, 7});
  node.attributes.Set("value", Tensor::FromVector<bool>({1}, {true}));
  ExpectTensor<bool>(RunOne(node, 13, {Ints({2, 1})}), {2, 1}, {true, true});
  // Empty shape: a scalar. A zero dim: no elements.
  ExpectTensor<bool>(RunOne(node, 13, {Ints({})}), {}, {true});
  ExpectTensor<bool>(RunOne(node, 13, {Ints({0, 4})}), {0, 4}, {});
}

TEST(ConstantOfShapeTest, Errors) {
  EXPECT_EQ(RunCode(MakeNode("ConstantOfShape", 1), 13, {Ints({2, -1})}),
            StatusCode::kInvalidModel);
  Status s = InferWithUnknownInputs(MakeNode("ConstantOfShape", 1), 13, {Ints({2})}, {false});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

TEST(RangeTest, FloatAndIntTypes) {
  ExpectTensor<float>(
      RunOne(MakeNode("Range", 3), 11,
             {Tensor::Scalar<float>(1), Tensor::Scalar<float>(5), Tensor::Scalar<float>(2)}),
      {2}, {1, 3});
  ExpectTensor<float>(
      RunOne(MakeNode("Range", 3), 11,
             {Tensor::Scalar<float>(0), Tensor::Scalar<float>(1), Tensor::Scalar<float>(0.25f)}),
      {4}, {0, 0.25f, 0.5f, 0.75f});
  ExpectTensor<int32_t>(RunOne(MakeNode("Range", 3), 11,
                               {Tensor::Scalar<int32_t>(10), Tensor::Scalar<int32_t>(4),
                                Tensor::Scalar<int32_t>(-3)}),
                        {2}, {10, 7});
  ExpectTensor<int64_t>(
      RunOne(MakeNode("Range", 3), 11,
             {Tensor::Scalar<int64_t>(0), Tensor::Scalar<int64_t>(-5), Tensor::Scalar<int64_t>(1)}),
      {0}, {});
  ExpectTensor<int16_t>(
      RunOne(MakeNode("Range", 3), 11,
             {Tensor::Scalar<int16_t>(-2), Tensor::Scalar<int16_t>(5), Tensor::Scalar<int16_t>(3)}),
      {3}, {-2, 1, 4});
  ExpectTensor<double>(
      RunOne(MakeNode("Range", 3), 11,
             {Tensor::Scalar<double>(3), Tensor::Scalar<double>(1), Tensor::Scalar<double>(-0.5)}),
      {4}, {3, 2.5, 2, 1.5});
}

TEST(RangeTest, Errors) {
  EXPECT_EQ(
      RunCode(MakeNode("Range", 3), 11,
              {Tensor::Scalar<int64_t>(0), Tensor::Scalar<int64_t>(5), Tensor::Scalar<int64_t>(0)}),
      StatusCode::kInvalidModel);
  EXPECT_EQ(
      RunCode(MakeNode("Range", 3), 11,
              {Tensor::Scalar<int64_t>(0), Tensor::Scalar<int32_t>(5), Tensor::Scalar<int64_t>(1)}),
      StatusCode::kInvalidModel);
  Status s = InferWithUnknownInputs(
      MakeNode("Range", 3), 11,
      {Tensor::Scalar<float>(0), Tensor::Scalar<float>(5), Tensor::Scalar<float>(1)},
      {true, false, true});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("limit"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace collage
