// The paper's workloads in the zoo: each has the signature, parameter count and op mix of
// the network it stands for.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "zoo/zoo.h"

namespace collage {
namespace {

std::map<std::string, int> OpHistogram(const Graph& g) {
  std::map<std::string, int> h;
  for (const Node& n : g.nodes()) ++h[n.op_type];
  return h;
}

Graph Build(const std::string& name) {
  StatusOr<Graph> g = BuildZooModel(name);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return Graph();
  EXPECT_TRUE(g->Validate().ok()) << g->Validate().ToString();
  return std::move(*g);
}

void ExpectIo(const Graph& g, TensorType input, TensorType output) {
  ASSERT_EQ(g.inputs().size(), 1u);
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.value(g.inputs()[0]).type, input);
  EXPECT_EQ(g.value(g.outputs()[0]).type, output);
}

const Shape& ShapeOf(const Graph& g, const std::string& value) {
  static const Shape kMissing;
  std::optional<ValueId> id = g.FindValue(value);
  EXPECT_TRUE(id.has_value()) << value;
  return id ? g.value(*id).type.shape : kMissing;
}

TEST(ZooWorkloadsTest, ResNeXt50) {
  Graph g = Build("resnext50");
  ExpectIo(g, {DType::kFloat32, {1, 3, 224, 224}}, {DType::kFloat32, {1, 1000}});
  // torchvision's resnext50_32x4d has 25,028,904 parameters; BatchNorm folding leaves one
  // of the two per channel (34,112 channels).
  EXPECT_EQ(g.NumParameters(), 25028904 - 34112);
  int grouped = 0;
  for (const Node& n : g.nodes()) {
    if (n.op_type == "Conv" && n.attributes.GetInt("group", 1) != 1) {
      EXPECT_EQ(n.attributes.GetInt("group", 1), 32) << n.name;
      ++grouped;
    }
  }
  EXPECT_EQ(grouped, 16);  // every bottleneck's 3x3
  EXPECT_EQ(ShapeOf(g, "layer1.0.conv2.weight"), (Shape{128, 4, 3, 3}));
  EXPECT_EQ(ShapeOf(g, "layer4.2.conv2.weight"), (Shape{1024, 32, 3, 3}));
}

TEST(ZooWorkloadsTest, DcganGenerator) {
  Graph g = Build("dcgan");
  ExpectIo(g, {DType::kFloat32, {1, 100, 1, 1}}, {DType::kFloat32, {1, 3, 64, 64}});
  // PyTorch's DCGAN example generator has 3,576,704 parameters; folding BatchNorm's 960
  // channels leaves one per channel.
  EXPECT_EQ(g.NumParameters(), 3576704 - 960);
  std::map<std::string, int> ops = OpHistogram(g);
  EXPECT_EQ(ops["ConvTranspose"], 5);
  EXPECT_EQ(ops["Relu"], 4);
  EXPECT_EQ(ops["Tanh"], 1);
  EXPECT_EQ(ops.size(), 3u);
  EXPECT_EQ(ShapeOf(g, "main.3"), (Shape{1, 256, 8, 8}));
}

TEST(ZooWorkloadsTest, NasRnn) {
  Graph g = Build("nasrnn");
  ExpectIo(g, {DType::kFloat32, {1, 8, 512}}, {DType::kFloat32, {1, 512}});
  // Sixteen 512x512 maps shared by all steps (and eight scalar step indices).
  EXPECT_EQ(g.NumParameters(), 16 * 512 * 512 + 8);
  std::map<std::string, int> ops = OpHistogram(g);
  EXPECT_EQ(ops["Gather"], 8);
  EXPECT_EQ(ops["MatMul"], 8 * 8 + 7 * 8);  // step 0 has no hidden-state terms
  EXPECT_EQ(ops["Tanh"], 8 * 8);
  EXPECT_EQ(ops["Sigmoid"], 8 * 5);
  EXPECT_EQ(ops["Relu"], 8 * 2);
  // The weights are shared: every step's branch 0 reads the same constant.
  std::optional<ValueId> w0 = g.FindValue("cell.w0");
  ASSERT_TRUE(w0.has_value());
  int readers = 0;
  for (const Node& n : g.nodes()) {
    for (ValueId in : n.inputs) readers += in == *w0;
  }
  EXPECT_EQ(readers, 8);
}

TEST(ZooWorkloadsTest, NasNetAMobile) {
  Graph g = Build("nasnet_a");
  ExpectIo(g, {DType::kFloat32, {1, 3, 224, 224}}, {DType::kFloat32, {1, 1000}});
  std::map<std::string, int> ops = OpHistogram(g);
  // 12 normal cells (5 separable convs each) and 4 reduction cells (5 each), each separable
  // conv two depthwise + pointwise pairs.
  int depthwise = 0;
  for (const Node& n : g.nodes()) {
    depthwise += n.op_type == "Conv" && n.attributes.GetInt("group", 1) > 1;
  }
  EXPECT_EQ(depthwise, (12 * 5 + 4 * 5) * 2);
  EXPECT_EQ(ops["Concat"], 16);
  EXPECT_EQ(ops["Add"], 16 * 5);
  EXPECT_EQ(ops["MaxPool"], 4 * 2);
  EXPECT_EQ(ops["AveragePool"], 12 * 3 + 4 * 2);
  // The Mobile 4@1056 geometry: 1056 channels at 7x7 before the classifier.
  EXPECT_EQ(ShapeOf(g, "relu"), (Shape{1, 1056, 7, 7}));
  EXPECT_EQ(ShapeOf(g, "cell_0.concat"), (Shape{1, 264, 28, 28}));
}

TEST(ZooWorkloadsTest, ResNet3d50) {
  Graph g = Build("resnet3d50");
  ExpectIo(g, {DType::kFloat32, {1, 3, 16, 112, 112}}, {DType::kFloat32, {1, 400}});
  std::map<std::string, int> ops = OpHistogram(g);
  EXPECT_EQ(ops["Conv"], 1 + 16 * 3 + 4);
  EXPECT_EQ(ops["Add"], 16);
  for (const Node& n : g.nodes()) {
    if (n.op_type == "Conv") {
      EXPECT_EQ(n.attributes.GetInts("kernel_shape").size(), 3u) << n.name;
    }
  }
  EXPECT_EQ(ShapeOf(g, "conv1.weight"), (Shape{64, 3, 7, 7, 7}));
  EXPECT_EQ(ShapeOf(g, "layer3.0.conv2.weight"), (Shape{256, 256, 3, 3, 3}));
  // The stem keeps all 16 frames; the max pool and each later stage halve every dim.
  EXPECT_EQ(ShapeOf(g, "relu"), (Shape{1, 64, 16, 56, 56}));
  EXPECT_EQ(ShapeOf(g, "layer4.2.relu3"), (Shape{1, 2048, 1, 4, 4}));
}

TEST(ZooWorkloadsTest, Gpt2Small) {
  Graph g = Build("gpt2");
  ExpectIo(g, {DType::kInt64, {1, 128}}, {DType::kFloat32, {1, 128, 768}});
  std::map<std::string, int> ops = OpHistogram(g);
  EXPECT_EQ(ops["Gemm"], 12 * 4);
  EXPECT_EQ(ops["LayerNormalization"], 12 * 2 + 1);
  EXPECT_EQ(ops["Split"], 12);
  EXPECT_EQ(ops["Where"], 12);
  EXPECT_EQ(ops["Softmax"], 12);
  EXPECT_EQ(ops["Pow"], 12);
  EXPECT_EQ(ops["Tanh"], 12);
  EXPECT_EQ(ShapeOf(g, "h.11.attn.causal_scores"), (Shape{1, 12, 128, 128}));
  EXPECT_EQ(ShapeOf(g, "h.0.mlp.c_fc.weight"), (Shape{768, 3072}));
  // The causal mask: a position sees itself and the ones before it.
  std::optional<ValueId> mask = g.FindValue("attn.bias");
  ASSERT_TRUE(mask.has_value());
  ASSERT_EQ(g.value(*mask).type.dtype, DType::kBool);
  const bool* causal = g.value(*mask).constant->data_as<bool>();
  EXPECT_TRUE(causal[0 * 128 + 0]);
  EXPECT_FALSE(causal[0 * 128 + 1]);
  EXPECT_TRUE(causal[127 * 128 + 126]);
}

}  // namespace
}  // namespace collage
