#include <gtest/gtest.h>

#include "collage/sdk/graph.h"

namespace collage {
namespace {

TensorType F32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

Node MakeNode(std::string name, std::string op, std::vector<ValueId> in, std::vector<ValueId> out) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

TEST(GraphTest, TracksProducersAndConsumers) {
  Graph g;
  ValueId x = g.AddValue("x", F32({2}));
  ValueId y = g.AddValue("y", F32({2}));
  ValueId z = g.AddValue("z", F32({2}));
  g.AddInput(x);
  ASSERT_TRUE(g.AddNode(MakeNode("a", "Relu", {x}, {y})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("b", "Add", {x, y}, {z})).ok());
  g.AddOutput(z);
  EXPECT_EQ(g.value(y).producer, 0);
  EXPECT_EQ(g.value(x).consumers, (std::vector<NodeId>{0, 1}));
  EXPECT_TRUE(g.Validate().ok()) << g.Validate().ToString();
  EXPECT_EQ(g.FindValue("z"), z);
  EXPECT_FALSE(g.FindValue("nope").has_value());
}

TEST(GraphTest, RefusesSecondProducer) {
  Graph g;
  ValueId x = g.AddValue("x", F32({1}));
  ValueId y = g.AddValue("y", F32({1}));
  g.AddInput(x);
  ASSERT_TRUE(g.AddNode(MakeNode("a", "Relu", {x}, {y})).ok());
  auto second = g.AddNode(MakeNode("b", "Relu", {x}, {y}));
  EXPECT_EQ(second.status().code(), StatusCode::kInvalidModel);
}

TEST(GraphTest, ValidateFindsUseBeforeDefinitionAndDynamicTypes) {
  Graph g;
  ValueId x = g.AddValue("x", F32({1}));
  ValueId y = g.AddValue("y", F32({1}));
  ValueId z = g.AddValue("z", F32({1}));
  g.AddInput(x);
  ASSERT_TRUE(g.AddNode(MakeNode("uses_z", "Relu", {z}, {y})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("makes_z", "Relu", {x}, {z})).ok());
  g.AddOutput(y);
  Status s = g.Validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidModel);
  EXPECT_NE(s.message().find("uses_z"), std::string::npos) << s.message();

  Graph h;
  ValueId d = h.AddValue("d", F32({-1, 3}));
  h.AddInput(d);
  h.AddOutput(d);
  EXPECT_EQ(h.Validate().code(), StatusCode::kInvalidModel);
}

TEST(GraphTest, RemoveDeadCodeKeepsOnlyWhatReachesOutputs) {
  Graph g;
  ValueId x = g.AddValue("x", F32({2}));
  ValueId dead = g.AddValue("dead", F32({2}));
  ValueId y = g.AddValue("y", F32({2}));
  ValueId w = g.AddConstant("unused_weight", Tensor(DType::kFloat32, {4}));
  (void)w;
  g.AddInput(x);
  ASSERT_TRUE(g.AddNode(MakeNode("dead_node", "Relu", {x}, {dead})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("live_node", "Relu", {x}, {y})).ok());
  g.AddOutput(y);
  g.RemoveDeadCode();
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).name, "live_node");
  EXPECT_EQ(g.num_values(), 2);
  EXPECT_FALSE(g.FindValue("dead").has_value());
  EXPECT_FALSE(g.FindValue("unused_weight").has_value());
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs()[0]).producer, 0);
  EXPECT_TRUE(g.Validate().ok());
}

TEST(GraphTest, UniqueNamesNeverCollide) {
  Graph g;
  g.AddValue("t_0", F32({1}));
  std::string name = g.UniqueName("t");
  EXPECT_NE(name, "t_0");
  ValueId a = g.AddValue("same", F32({1}));
  ValueId b = g.AddValue("same", F32({1}));
  EXPECT_NE(g.value(a).name, g.value(b).name);
}

TEST(TensorTest, OwnsViewsClonesAndConverts) {
  Tensor t = Tensor::FromVector<float>({2, 2}, {1.5f, -2.f, 3.f, 4.f});
  EXPECT_EQ(t.num_elements(), 4);
  EXPECT_EQ(t.nbytes(), 16u);
  EXPECT_EQ(t.ToVector<int64_t>(), (std::vector<int64_t>{1, -2, 3, 4}));
  Tensor view = Tensor::View(DType::kFloat32, {4}, t.data());
  view.data_as<float>()[0] = 7.f;
  EXPECT_EQ(t.data_as<float>()[0], 7.f);
  Tensor copy = t.Clone();
  copy.data_as<float>()[0] = 9.f;
  EXPECT_EQ(t.data_as<float>()[0], 7.f);
  EXPECT_EQ(Tensor::Scalar<int64_t>(5).shape(), Shape{});
  EXPECT_EQ(ShapeToString({1, 3, 224, 224}), "1x3x224x224");
  EXPECT_EQ(ShapeToString({}), "scalar");
  EXPECT_TRUE(Tensor().empty());
}

}  // namespace
}  // namespace collage
