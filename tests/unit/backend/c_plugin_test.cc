// Plug-ins written against the C interface (collage/plugin_c_api.h): the example plug-in,
// built by the other compiler of this machine, loads and computes what the ONNX ops say;
// plug-ins that break the contract are refused, or their failures reported, naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>

#include "backend_test_util.h"
#include "collage/sdk/backend.h"
#include "collage/session.h"
#include "session/session_access.h"
#include "test_paths.h"

namespace collage {
namespace {

using testing::NodeOf;

constexpr int kElements = 12;

// x → Relu, LeakyRelu(alpha 0.2), Clip(-0.5, 0.25) as inputs (opset 11 on) and Clip with
// min/max attributes (opsets 6 to 10): four groups the example's rules each take.
struct Activations {
  Graph graph;
  NodeId relu, leaky, clip_inputs, clip_attributes;
};

Activations ActivationGraph() {
  Activations a;
  Graph& g = a.graph;
  const TensorType t{DType::kFloat32, {3, 4}};
  const ValueId x = g.AddValue("x", t);
  g.AddInput(x);
  const ValueId lo = g.AddConstant("lo", Tensor::Scalar<float>(-0.5f));
  const ValueId hi = g.AddConstant("hi", Tensor::Scalar<float>(0.25f));
  std::vector<ValueId> outputs;
  for (const char* name : {"relu", "leaky", "clip_inputs", "clip_attributes"}) {
    outputs.push_back(g.AddValue(std::string(name) + "_out", t));
  }
  Node leaky = NodeOf("leaky", "LeakyRelu", {x}, {outputs[1]});
  leaky.attributes.Set("alpha", 0.2f);
  Node clip_attributes = NodeOf("clip_attributes", "Clip", {x}, {outputs[3]});
  clip_attributes.attributes.Set("min", -0.75f);
  clip_attributes.attributes.Set("max", 0.5f);
  a.relu = *g.AddNode(NodeOf("relu", "Relu", {x}, {outputs[0]}));
  a.leaky = *g.AddNode(std::move(leaky));
  a.clip_inputs = *g.AddNode(NodeOf("clip_inputs", "Clip", {x, lo, hi}, {outputs[2]}));
  a.clip_attributes = *g.AddNode(std::move(clip_attributes));
  for (ValueId out : outputs) g.AddOutput(out);
  return a;
}

// Compiles `node` by `rule` of `backend` and runs it on x = -1.1, -0.9, ..., 1.1.
StatusOr<std::vector<float>> RunGroup(const Backend& backend, const Graph& graph, NodeId node,
                                      const std::string& rule) {
  const CompileRequest request =
      CompileRequest::For(graph, SubGraph(graph.num_nodes(), {node}), rule, 1);
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, backend.Compile(request));
  std::vector<float> x(kElements), y(kElements, std::nanf(""));
  for (int i = 0; i < kElements; ++i) x[i] = -1.1f + 0.2f * static_cast<float>(i);
  const void* inputs[] = {x.data()};
  void* outputs[] = {y.data()};
  COLLAGE_RETURN_IF_ERROR(kernel->Run({inputs, outputs}));
  return y;
}

float X(int i) { return -1.1f + 0.2f * static_cast<float>(i); }

// What a compiler left in a library's .comment section: "clang version ..." or "GCC: ...".
bool BuiltBy(const std::string& path, const std::string& mark) {
  std::ifstream file(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return bytes.find(mark) != std::string::npos;
}

TEST(CPluginTest, ThePluginBuiltByTheOtherCompilerLoadsAndComputesTheOps) {
  if (std::string(COLLAGE_OTHER_COMPILER_PLUGIN).empty()) {
    GTEST_SKIP() << "no second C compiler on this machine to build the plug-in with";
  }
  // The build chose the compiler collage was not built with (tests/CMakeLists.txt): the
  // library's .comment section says which compiled it (gcc's C run-time files leave "GCC: "
  // in any library linked on this system, so clang is told by its own mark alone).
  const bool by_clang = std::string(COLLAGE_C_COMPILER_ID) == "GNU";
  EXPECT_EQ(BuiltBy(COLLAGE_OTHER_COMPILER_PLUGIN, "clang version"), by_clang)
      << COLLAGE_OTHER_C_COMPILER;

  BackendRegistry registry;
  const Status loaded = registry.LoadPlugin(COLLAGE_OTHER_COMPILER_PLUGIN);
  ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  const Backend* plugin = registry.Find("plugin_example");
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->version(), "plugin_example 1.0 scalar");
  ASSERT_EQ(plugin->rules().size(), 3u);

  const Activations a = ActivationGraph();
  auto relu = RunGroup(*plugin, a.graph, a.relu, "relu");
  auto leaky = RunGroup(*plugin, a.graph, a.leaky, "leaky_relu");
  auto clip_inputs = RunGroup(*plugin, a.graph, a.clip_inputs, "clip");
  auto clip_attributes = RunGroup(*plugin, a.graph, a.clip_attributes, "clip");
  ASSERT_TRUE(relu.ok()) << relu.status().ToString();
  ASSERT_TRUE(leaky.ok()) << leaky.status().ToString();
  ASSERT_TRUE(clip_inputs.ok()) << clip_inputs.status().ToString();
  ASSERT_TRUE(clip_attributes.ok()) << clip_attributes.status().ToString();
  for (int i = 0; i < kElements; ++i) {
    EXPECT_EQ((*relu)[i], std::max(X(i), 0.0f)) << i;
    EXPECT_EQ((*leaky)[i], X(i) >= 0 ? X(i) : 0.2f * X(i)) << i;
    EXPECT_EQ((*clip_inputs)[i], std::min(std::max(X(i), -0.5f), 0.25f)) << i;
    EXPECT_EQ((*clip_attributes)[i], std::min(std::max(X(i), -0.75f), 0.5f)) << i;
  }
  // A group its rule does not take (the accept function reads the capture's dtype).
  Graph ints;
  const ValueId i = ints.AddValue("i", {DType::kInt32, {4}});
  ints.AddInput(i);
  const ValueId o = ints.AddValue("o", {DType::kInt32, {4}});
  ints.AddOutput(o);
  const NodeId int_relu = *ints.AddNode(NodeOf("relu", "Relu", {i}, {o}));
  EXPECT_FALSE(RunGroup(*plugin, ints, int_relu, "relu").ok());
}

Status LoadBroken(const std::string& fault, BackendRegistry* registry) {
  return registry->LoadPluginsFrom(std::string(COLLAGE_TEST_PLUGIN_DIR) + "/c_" + fault);
}

TEST(CPluginTest, ATableOfAnotherVersionABadPatternOrNoCompileFunctionIsRefused) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"newer_version", {"version 2 of collage's C plug-in interface", "versions 1 to 1"}},
      {"bad_pattern", {"rule 'relu'", "pattern 'Relu(any'", "at character 9"}},
      {"start_fails", {"failed to start", "no accelerator found"}},
      {"no_compile", {"rule 0 lacks a name, a pattern or a compile function"}},
  };
  for (const auto& [fault, words] : cases) {
    BackendRegistry registry;
    const Status status = LoadBroken(fault, &registry);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << fault;
    EXPECT_NE(status.message().find("libc_" + fault + "_plugin.so"), std::string::npos)
        << status.message();
    for (const std::string& word : words) {
      EXPECT_NE(status.message().find(word), std::string::npos) << status.message();
    }
    EXPECT_TRUE(registry.backends().empty()) << fault;
  }
}

TEST(CPluginTest, FailuresToCompileAndToRunAreErrorsNamingThePlugin) {
  const Activations a = ActivationGraph();
  BackendRegistry compile_fails;
  ASSERT_TRUE(LoadBroken("compile_fails", &compile_fails).ok());
  auto compiled = RunGroup(*compile_fails.Find("broken_c"), a.graph, a.relu, "relu");
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.status().message().find("no kernel for this shape"), std::string::npos)
      << compiled.status().message();
  EXPECT_NE(compiled.status().message().find("libc_compile_fails_plugin.so"), std::string::npos);

  BackendRegistry run_fails;
  ASSERT_TRUE(LoadBroken("run_fails", &run_fails).ok());
  auto ran = RunGroup(*run_fails.Find("broken_c"), a.graph, a.relu, "relu");
  ASSERT_FALSE(ran.ok());
  const std::string& message = ran.status().message();
  EXPECT_NE(message.find("the device is gone"), std::string::npos) << message;
  EXPECT_NE(message.find("rule 'relu'"), std::string::npos) << message;
  // The plug-in filled its buffer without a NUL: the message is cut at the buffer's end.
  EXPECT_LT(message.size(), 1500u);
}

}  // namespace
}  // namespace collage
