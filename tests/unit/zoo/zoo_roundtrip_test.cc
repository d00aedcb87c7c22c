// The zoo's models survive ONNX export → import unchanged: same signature, same ops and
// attributes, bit-identical weights, and a Session on the imported model computes what a
// Session on the in-memory graph computes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <type_traits>
#include <variant>

#include "collage/session.h"
#include "session/session_access.h"
#include "collage/sdk/graph.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"
#include "zoo/zoo.h"
#include "zoo_test_util.h"

namespace collage {
namespace {

using zoo_test::MaxRelativeDifference;

std::map<std::string, int> OpHistogram(const Graph& g) {
  std::map<std::string, int> h;
  for (const Node& n : g.nodes()) ++h[n.op_type];
  return h;
}

// Every weight of `original` is in `imported` under the same name, bit for bit.
void ExpectSameWeights(const Graph& original, const Graph& imported) {
  int64_t compared = 0;
  for (const Value& v : original.values()) {
    if (!v.is_constant()) continue;
    std::optional<ValueId> id = imported.FindValue(v.name);
    ASSERT_TRUE(id.has_value()) << "constant '" << v.name << "' lost in the round trip";
    const Value& w = imported.value(*id);
    ASSERT_TRUE(w.is_constant()) << v.name;
    ASSERT_EQ(w.type, v.type) << v.name;
    EXPECT_EQ(std::memcmp(w.constant->data(), v.constant->data(), v.constant->nbytes()), 0)
        << v.name;
    ++compared;
  }
  EXPECT_GT(compared, 0);
  EXPECT_EQ(imported.NumParameters(), original.NumParameters());
}

// Attribute values are compared by type and value; the zoo uses no tensor attributes.
void ExpectSameAttributes(const Attributes& a, const Attributes& b, const std::string& node) {
  ASSERT_EQ(a.all().size(), b.all().size()) << node;
  for (const auto& entry : a.all()) {
    // Named copies: clang 14 cannot capture structured bindings in the lambda below.
    const std::string& name = entry.first;
    const Attribute& value = entry.second;
    const Attribute* other = b.Find(name);
    ASSERT_NE(other, nullptr) << node << ": attribute " << name << " lost";
    ASSERT_EQ(value.index(), other->index()) << node << "." << name;
    ASSERT_FALSE(std::holds_alternative<Tensor>(value)) << node << "." << name;
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (!std::is_same_v<T, Tensor>) {
            EXPECT_EQ(x, std::get<T>(*other)) << node << "." << name;
          }
        },
        value);
  }
}

// The imported graph has the same nodes (type, attributes, input and output names) in the
// same order.
void ExpectSameNodes(const Graph& original, const Graph& imported) {
  ASSERT_EQ(imported.num_nodes(), original.num_nodes());
  EXPECT_EQ(OpHistogram(imported), OpHistogram(original));
  for (NodeId n = 0; n < original.num_nodes(); ++n) {
    const Node& a = original.node(n);
    const Node& b = imported.node(n);
    ASSERT_EQ(b.op_type, a.op_type) << a.name;
    EXPECT_EQ(b.name, a.name);
    ExpectSameAttributes(a.attributes, b.attributes, a.name);
    ASSERT_EQ(b.inputs.size(), a.inputs.size()) << a.name;
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      EXPECT_EQ(imported.value(b.inputs[i]).name, original.value(a.inputs[i]).name) << a.name;
    }
    ASSERT_EQ(b.outputs.size(), a.outputs.size()) << a.name;
    for (size_t i = 0; i < a.outputs.size(); ++i) {
      EXPECT_EQ(imported.value(b.outputs[i]).type, original.value(a.outputs[i]).type) << a.name;
    }
  }
}

void ExpectSameTensorInfos(const std::vector<TensorInfo>& a, const std::vector<TensorInfo>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].dtype, b[i].dtype);
    EXPECT_EQ(a[i].shape, b[i].shape);
  }
}

// `max_abs` bounds the outputs: the random weights must keep activations in a sane range
// through the whole depth (finite, not exploding, not collapsing to a constant).
void RoundTrip(const std::string& model, const std::map<std::string, Tensor>& inputs,
               double max_abs) {
  StatusOr<Graph> built = BuildZooModel(model);
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  StatusOr<std::string> bytes = ExportOnnxBytes(*built);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();

  StatusOr<Graph> imported = ImportOnnxBytes(*bytes, {}, model + ".onnx");
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  EXPECT_EQ(imported->opset(), built->opset());
  ExpectSameNodes(*built, *imported);
  ExpectSameWeights(*built, *imported);

  auto in_memory = SessionAccess::FromGraph(*built);  // a copy: tensors are shared handles
  ASSERT_TRUE(in_memory.ok()) << in_memory.status().ToString();
  auto loaded = Session::LoadBytes(*bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  bytes = std::string();  // BERT's are 440 MB
  ExpectSameTensorInfos((*loaded)->inputs(), (*in_memory)->inputs());
  ExpectSameTensorInfos((*loaded)->outputs(), (*in_memory)->outputs());

  auto start = std::chrono::steady_clock::now();
  auto expected = (*in_memory)->Run(inputs);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  std::cout << model << ": one run took "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            << " s\n";
  auto actual = (*loaded)->Run(inputs);
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  ASSERT_EQ(actual->size(), expected->size());
  for (const auto& [name, tensor] : *expected) {
    ASSERT_TRUE(actual->count(name)) << name;
    const zoo_test::Stats stats = zoo_test::ComputeStats(tensor);
    EXPECT_EQ(stats.non_finite, 0) << name;
    EXPECT_GT(stats.stddev, 0.1) << name;
    EXPECT_LT(stats.max_abs, max_abs) << name;
    std::cout << model << " " << name << ": mean " << stats.mean << " stddev " << stats.stddev
              << " max|x| " << stats.max_abs << "\n";
    // Same graph, same kernels: only a different reduction order could make them differ.
    EXPECT_LE(MaxRelativeDifference(actual->at(name), tensor), 1e-5) << name;
  }
}

TEST(ZooRoundTripTest, MobileNetV2) {
  RoundTrip("mobilenetv2", {{"input", zoo_test::PatternFloats({1, 3, 224, 224}, 3)}}, 100.0);
}

TEST(ZooRoundTripTest, ResNet50) {
  RoundTrip("resnet50", {{"input", zoo_test::PatternFloats({1, 3, 224, 224}, 4)}}, 100.0);
}

// About 10 s of CPU on the reference kernels (one run each for the two sessions).
TEST(ZooRoundTripTest, BertBase) {
  RoundTrip("bert_base", {{"input_ids", zoo_test::PatternIds({1, 128}, 30522, 5)}}, 20.0);
}

}  // namespace
}  // namespace collage
