#include "zoo/zoo.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <set>

#include "zoo_test_util.h"

namespace collage {
namespace {

using zoo_test::ComputeStats;
using zoo_test::PatternFloats;
using zoo_test::RunWithReferenceKernels;
using zoo_test::Stats;

std::map<std::string, int> OpHistogram(const Graph& g) {
  std::map<std::string, int> h;
  for (const Node& n : g.nodes()) ++h[n.op_type];
  return h;
}

const Value* FindValue(const Graph& g, const std::string& name) {
  std::optional<ValueId> id = g.FindValue(name);
  return id ? &g.value(*id) : nullptr;
}

// FNV-1a over every constant's name, shape and bytes: equal hashes ⇔ equal weights (for
// this purpose), without keeping two copies of a 440 MB model alive.
uint64_t WeightsHash(const Graph& g) {
  uint64_t h = 0xCBF29CE484222325ull;
  auto mix = [&h](const void* data, size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 0x100000001B3ull;
    }
  };
  for (const Value& v : g.values()) {
    if (!v.is_constant()) continue;
    mix(v.name.data(), v.name.size());
    mix(v.type.shape.data(), v.type.shape.size() * sizeof(int64_t));
    mix(v.constant->data(), v.constant->nbytes());
  }
  return h;
}

void ExpectSignature(const Graph& g, const std::string& input, TensorType input_type,
                     const std::string& output, TensorType output_type) {
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.value(g.inputs()[0]).name, input);
  EXPECT_EQ(g.value(g.inputs()[0]).type, input_type);
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.value(g.outputs()[0]).name, output);
  EXPECT_EQ(g.value(g.outputs()[0]).type, output_type);
}

TEST(ZooTest, ListsModelsWithDescriptions) {
  std::set<std::string> names;
  for (const ZooModel& m : ZooModels()) {
    EXPECT_FALSE(m.description.empty()) << m.name;
    EXPECT_EQ(m.description.find('\n'), std::string::npos) << m.name;
    EXPECT_TRUE(m.build) << m.name;
    EXPECT_TRUE(names.insert(m.name).second) << "duplicate " << m.name;
  }
  EXPECT_TRUE(names.count("resnet50"));
  EXPECT_TRUE(names.count("mobilenetv2"));
  EXPECT_TRUE(names.count("bert_base"));
}

TEST(ZooTest, UnknownNameIsNotFoundAndListsKnownNames) {
  StatusOr<Graph> g = BuildZooModel("resnet51");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kNotFound);
  for (const ZooModel& m : ZooModels()) {
    EXPECT_NE(g.status().message().find(m.name), std::string::npos) << g.status().message();
  }
  EXPECT_NE(g.status().message().find("resnet51"), std::string::npos);
}

TEST(ZooTest, ResNet50Structure) {
  StatusOr<Graph> built = BuildZooModel("resnet50");
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const Graph& g = *built;
  ASSERT_TRUE(g.Validate().ok()) << g.Validate().ToString();
  EXPECT_EQ(g.opset(), 17);
  ExpectSignature(g, "input", {DType::kFloat32, {1, 3, 224, 224}}, "logits",
                  {DType::kFloat32, {1, 1000}});
  // torchvision's 25,557,032 parameters, less one of BatchNorm's two per channel (gamma
  // folds into the weights; beta and the running stats into the bias): 26,560 channels.
  EXPECT_EQ(g.NumParameters(), 25557032 - 26560);

  std::map<std::string, int> ops = OpHistogram(g);
  EXPECT_EQ(ops["Conv"], 1 + 16 * 3 + 4);  // stem, 16 bottlenecks, 4 projection shortcuts
  EXPECT_EQ(ops["Relu"], 1 + 16 * 3);
  EXPECT_EQ(ops["Add"], 16);
  EXPECT_EQ(ops["MaxPool"], 1);
  EXPECT_EQ(ops["GlobalAveragePool"], 1);
  EXPECT_EQ(ops["Flatten"], 1);
  EXPECT_EQ(ops["Gemm"], 1);
  EXPECT_EQ(ops.size(), 7u);

  // v1.5: the stride of a downsampling block is on its 3x3 conv, not the first 1x1.
  for (const Node& n : g.nodes()) {
    const std::vector<int64_t> strides = n.attributes.GetInts("strides");
    if (n.name == "layer2.0.conv1") {
      EXPECT_EQ(strides, (std::vector<int64_t>{1, 1}));
    } else if (n.name == "layer2.0.conv2" || n.name == "layer2.0.downsample.0") {
      EXPECT_EQ(strides, (std::vector<int64_t>{2, 2}));
    }
  }
  int checked = 0;
  for (const Node& n : g.nodes()) {
    checked += n.name == "layer2.0.conv1" || n.name == "layer2.0.conv2" ||
               n.name == "layer2.0.downsample.0";
  }
  EXPECT_EQ(checked, 3);
  const Value* w = FindValue(g, "layer1.0.conv1.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->type.shape, (Shape{64, 64, 1, 1}));
  w = FindValue(g, "layer4.2.conv3.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->type.shape, (Shape{2048, 512, 1, 1}));
  w = FindValue(g, "fc.weight");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->type.shape, (Shape{1000, 2048}));
  const Value* stage = FindValue(g, "layer3.5.relu3");
  ASSERT_NE(stage, nullptr);
  EXPECT_EQ(stage->type.shape, (Shape{1, 1024, 14, 14}));
}

TEST(ZooTest, MobileNetV2Structure) {
  StatusOr<Graph> built = BuildZooModel("mobilenetv2");
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const Graph& g = *built;
  ASSERT_TRUE(g.Validate().ok()) << g.Validate().ToString();
  ExpectSignature(g, "input", {DType::kFloat32, {1, 3, 224, 224}}, "logits",
                  {DType::kFloat32, {1, 1000}});
  // torchvision's 3,504,872 less one per BatchNorm channel (17,056), plus Clip's two bounds.
  EXPECT_EQ(g.NumParameters(), 3504872 - 17056 + 2);

  std::map<std::string, int> ops = OpHistogram(g);
  EXPECT_EQ(ops["Conv"], 1 + 2 + 16 * 3 + 1);
  EXPECT_EQ(ops["Clip"], 1 + 1 + 16 * 2 + 1);
  EXPECT_EQ(ops["Add"], 10);  // stride-1 blocks whose width does not change
  EXPECT_EQ(ops["GlobalAveragePool"], 1);
  EXPECT_EQ(ops["Flatten"], 1);
  EXPECT_EQ(ops["Gemm"], 1);
  EXPECT_EQ(ops.size(), 6u);

  int depthwise = 0;
  for (const Node& n : g.nodes()) {
    if (n.op_type == "Clip") {
      // ReLU6 as opset-11+ Clip: bounds are constant inputs 0 and 6.
      ASSERT_EQ(n.inputs.size(), 3u);
      EXPECT_EQ(g.value(n.inputs[1]).constant->ToVector<float>(), (std::vector<float>{0.0f}));
      EXPECT_EQ(g.value(n.inputs[2]).constant->ToVector<float>(), (std::vector<float>{6.0f}));
    }
    if (n.op_type != "Conv" || n.attributes.GetInt("group", 1) == 1) continue;
    ++depthwise;
    const Shape& in = g.value(n.inputs[0]).type.shape;
    EXPECT_EQ(n.attributes.GetInt("group", 1), in[1]) << n.name;
    EXPECT_EQ(g.value(n.inputs[1]).type.shape, (Shape{in[1], 1, 3, 3})) << n.name;
  }
  EXPECT_EQ(depthwise, 17);
  const Value* last = FindValue(g, "features.17.project");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->type.shape, (Shape{1, 320, 7, 7}));
}

TEST(ZooTest, BertBaseStructure) {
  auto start = std::chrono::steady_clock::now();
  StatusOr<Graph> built = BuildZooModel("bert_base");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  std::cout << "bert_base built in " << seconds << " s\n";
  const Graph& g = *built;
  ASSERT_TRUE(g.Validate().ok()) << g.Validate().ToString();
  ExpectSignature(g, "input_ids", {DType::kInt64, {1, 128}}, "last_hidden_state",
                  {DType::kFloat32, {1, 128, 768}});
  const int64_t embeddings = 30522 * 768 + 128 * 768 + 768 + 2 * 768;
  const int64_t per_layer = 4 * (768 * 768 + 768) + 2 * 768 + (768 * 3072 + 3072) +
                            (3072 * 768 + 768) + 2 * 768;
  EXPECT_EQ(per_layer, 7087872);
  const int64_t shared = 4 + 3 + 4;  // two shape tensors, four scalars
  EXPECT_EQ(g.NumParameters(), embeddings + 12 * per_layer + shared);

  std::map<std::string, int> ops = OpHistogram(g);
  EXPECT_EQ(ops["Gather"], 1);
  EXPECT_EQ(ops["MatMul"], 12 * 8);  // 6 linears + Q·K^T + P·V
  EXPECT_EQ(ops["Add"], 2 + 12 * 9);
  EXPECT_EQ(ops["LayerNormalization"], 1 + 12 * 2);
  EXPECT_EQ(ops["Reshape"], 12 * 4);
  EXPECT_EQ(ops["Transpose"], 12 * 4);
  EXPECT_EQ(ops["Softmax"], 12);
  EXPECT_EQ(ops["Div"], 12 * 2);
  EXPECT_EQ(ops["Erf"], 12);
  EXPECT_EQ(ops["Mul"], 12 * 2);
  EXPECT_EQ(ops.size(), 10u);

  const Value* scores = FindValue(g, "encoder.layer.11.attention.self.scores");
  ASSERT_NE(scores, nullptr);
  EXPECT_EQ(scores->type.shape, (Shape{1, 12, 128, 128}));
  const Value* ffn = FindValue(g, "encoder.layer.0.intermediate.dense.weight");
  ASSERT_NE(ffn, nullptr);
  EXPECT_EQ(ffn->type.shape, (Shape{768, 3072}));
  for (const Node& n : g.nodes()) {
    if (n.op_type == "Softmax" || n.op_type == "LayerNormalization") {
      EXPECT_EQ(n.attributes.GetInt("axis", 0), -1) << n.name;
    }
  }
}

TEST(ZooTest, BuildingTwiceGivesIdenticalWeights) {
  for (const ZooModel& m : ZooModels()) {
    uint64_t first = 0;
    int64_t num_nodes = 0;
    {
      StatusOr<Graph> g = m.build();
      ASSERT_TRUE(g.ok()) << g.status().ToString();
      first = WeightsHash(*g);
      num_nodes = g->num_nodes();
    }
    StatusOr<Graph> g = m.build();
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ(WeightsHash(*g), first) << m.name;
    EXPECT_EQ(g->num_nodes(), num_nodes) << m.name;
  }
}

TEST(ZooTest, WeightsDifferAcrossTensors) {
  // Each tensor has its own random stream: no two weights of the same shape are equal.
  StatusOr<Graph> g = BuildZooModel("resnet50");
  ASSERT_TRUE(g.ok());
  const Value* a = FindValue(*g, "layer1.1.conv2.weight");
  const Value* b = FindValue(*g, "layer1.2.conv2.weight");
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->type, b->type);
  EXPECT_NE(std::memcmp(a->constant->data(), b->constant->data(), a->constant->nbytes()), 0);
}

// The random weights keep activations in a sane range through the whole depth: logits are
// finite, neither exploding nor collapsing, and depend on the input. Run on the reference
// kernels directly (not the runtime); ResNet-50 and BERT get the same checks in
// zoo_roundtrip_test.cc through Session, where they cost one run instead of two.
TEST(ZooTest, MobileNetV2ActivationsStaySane) {
  StatusOr<Graph> g = BuildZooModel("mobilenetv2");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::map<std::string, Tensor> results[2];
  for (uint32_t seed = 0; seed < 2; ++seed) {
    auto out = RunWithReferenceKernels(*g, {{"input", PatternFloats({1, 3, 224, 224}, seed)}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    results[seed] = std::move(*out);
  }
  const Tensor& logits = results[0].at("logits");
  ASSERT_EQ(logits.shape(), (Shape{1, 1000}));
  Stats s = ComputeStats(logits);
  EXPECT_EQ(s.non_finite, 0);
  EXPECT_GT(s.stddev, 0.1);
  EXPECT_LT(s.max_abs, 100.0);
  EXPECT_GT(zoo_test::MaxRelativeDifference(results[1].at("logits"), logits), 1e-3);
}

}  // namespace
}  // namespace collage
