// The `onnxruntime` backend: single nodes and whole regions, exported as in-memory ONNX
// models and run by ONNX Runtime's CPU execution provider, match the reference kernels.
// Tolerance 1e-4 normalized (sums of ≤ 72 terms, exp/erf approximations), 1e-3 for whole zoo
// models (long reductions reassociated). Skipped where ONNX Runtime is not installed.
#include <gtest/gtest.h>

#include <thread>

#include "backend_test_util.h"
#include "collage/available_backends.h"
#include "collage/session.h"
#include "engine_span_test_util.h"
#include "session/session_access.h"
#include "zoo/zoo.h"
#include "zoo_test_util.h"

namespace collage {
namespace {

using namespace collage::testing;

class OnnxruntimeBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (GlobalBackendRegistry().Find("onnxruntime") == nullptr) {
      GTEST_SKIP() << "the onnxruntime backend is not built (scripts/install_engines.sh)";
    }
  }
};

// x → Conv → Relu → Conv → Add(x) → Reshape (int64 shape constant) → Softmax.
Graph ConvBlock() {
  GraphBuilder b("block");
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 6, 6});
  ValueId y =
      b.Node("Conv", {x, b.RandomNormal("w1", {4, 4, 3, 3}, 0.2f), b.RandomNormal("b1", {4}, 0.1f)},
             {{"pads", {1, 1, 1, 1}}}, "conv1");
  y = b.Node("Relu", {y}, {}, "relu");
  y = b.Node("Conv", {y, b.RandomNormal("w2", {4, 4, 3, 3}, 0.2f)}, {{"pads", {1, 1, 1, 1}}},
             "conv2");
  y = b.Node("Add", {y, x}, {}, "add");
  y = b.Node("Reshape", {y, b.Constant("shape", Shape{2}, std::vector<int64_t>{4, 36})}, {},
             "reshape");
  y = b.Node("Softmax", {y}, {{"axis", 1}}, "softmax");
  b.Output(y, "y");
  return BuildOrFail(std::move(b));
}

TEST_F(OnnxruntimeBackendTest, EveryNodeAloneAndTheWholeBlockMatchTheReference) {
  Graph g = ConvBlock();
  EXPECT_EQ(CandidatesOf(g, "onnxruntime", "single").size(), 6u);
  ExpectRuleMatches(g, "onnxruntime", "whole", 6);
  CheckAllCandidates(g, "onnxruntime");
}

TEST_F(OnnxruntimeBackendTest, IntegerAndShapeOpsRunOnTheEngine) {
  GraphBuilder b("gather");
  ValueId table = b.Input("table", DType::kFloat32, {16, 8});  // the random ids are in [0, 16)
  ValueId ids = b.Input("ids", DType::kInt64, {3, 2});
  ValueId y = b.Node("Gather", {table, ids}, {{"axis", 0}}, "gather");
  ValueId shape = b.Node("Shape", {y}, {}, "shape");
  b.Output(y, "y");
  b.Output(shape, "s");
  Graph g = BuildOrFail(std::move(b));
  CheckAllCandidates(g, "onnxruntime");
}

TEST_F(OnnxruntimeBackendTest, OneKernelRunsOnTwoThreadsAtOnce) {
  Graph g = ConvBlock();
  const std::vector<Candidate> whole = CandidatesOf(g, "onnxruntime", "whole");
  ASSERT_EQ(whole.size(), 1u);
  const CompileRequest request = CompileRequest::For(g, whole[0].nodes, "whole", 1);
  auto kernel = BackendNamed("onnxruntime").Compile(request);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  const std::vector<Tensor> first = RandomInputs(request, 1), second = RandomInputs(request, 2);
  auto first_ref = RunReferenceGroup(request, first);
  auto second_ref = RunReferenceGroup(request, second);
  ASSERT_TRUE(first_ref.ok() && second_ref.ok());
  auto repeat = [&](const std::vector<Tensor>& inputs, const std::vector<Tensor>& ref) {
    for (int i = 0; i < 50; ++i) {
      auto got = RunKernel(**kernel, request, inputs);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      ExpectClose(*got, ref, 1e-4, "concurrent run");
    }
  };
  std::thread other([&] { repeat(second, *second_ref); });
  repeat(first, *first_ref);
  other.join();
}

TEST_F(OnnxruntimeBackendTest, AModelTheEngineRefusesIsAnErrorNotACrash) {
  // An op ONNX does not define (collage's own graph is edited by hand to get one): the
  // backend refuses the group its rules do not offer, and the "single" fusion's compile
  // function, called on it anyway, gets ONNX Runtime's refusal as a Status naming the engine.
  GraphBuilder b("bad");
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 6, 6});
  ValueId y = b.Node("Relu", {x}, {}, "relu");
  b.Output(y, "y");
  Graph g = BuildOrFail(std::move(b));
  g.mutable_node(0).op_type = "NoSuchOnnxOp";
  CompileRequest request = CompileRequest::For(g, SubGraph(g.num_nodes(), {0}), "single", 1);
  auto refused = BackendNamed("onnxruntime").Compile(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("does not admit"), std::string::npos)
      << refused.status().ToString();
  const Fusion* single = BackendNamed("onnxruntime").rules().FindFusion("single");
  ASSERT_NE(single, nullptr);
  auto kernel = single->compiler()(request);
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("onnxruntime"), std::string::npos)
      << kernel.status().ToString();
}

TEST_F(OnnxruntimeBackendTest, BatchMajorRecurrencesAreNotOffered) {
  // ONNX Runtime's CPU LSTM refuses `layout` 1 when its session is created: the rules leave
  // such a node to other backends; the time-major one is offered and matches the reference.
  for (int64_t layout : {0, 1}) {
    SCOPED_TRACE("layout " + std::to_string(layout));
    GraphBuilder b("lstm", 14);
    const Shape x_shape = layout == 0 ? Shape{5, 2, 3} : Shape{2, 5, 3};
    ValueId x = b.Input("x", DType::kFloat32, x_shape);
    ValueId y = b.Node(
        "LSTM", {x, b.RandomNormal("w", {1, 16, 3}, 0.3f), b.RandomNormal("r", {1, 16, 4}, 0.3f)},
        {{"hidden_size", int64_t{4}}, {"layout", layout}}, "lstm");
    b.Output(y, "y");
    Graph g = BuildOrFail(std::move(b));
    const auto offered = CandidatesOf(g, "onnxruntime", "single");
    EXPECT_EQ(offered.size(), layout == 0 ? 1u : 0u);
    CheckAllCandidates(g, "onnxruntime");
  }
}

TEST_F(OnnxruntimeBackendTest, MobileNetV2IsOneRegionAndMatchesTheReference) {
  auto graph = BuildZooModel("mobilenetv2");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_EQ(CandidatesOf(*graph, "onnxruntime", "whole").size(), 1u);
  const std::map<std::string, Tensor> inputs = zoo_test::RandomGraphInputs(*graph, 5);
  auto reference = zoo_test::RunWithReferenceKernels(*graph, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  SessionOptions options;
  options.backend = "onnxruntime";
  options.num_threads = 2;
  auto session = SessionAccess::FromGraph(std::move(*graph), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ((*session)->DescribePlacement().find("native"), std::string::npos)
      << (*session)->DescribePlacement();
  auto outputs = (*session)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  for (const auto& [name, expected] : *reference) {
    EXPECT_LE(NormalizedError(outputs->at(name), expected), 1e-3) << name;
  }
}

TEST_F(OnnxruntimeBackendTest, ASpanOfMobileNetV2RunsInsideAMixedPlan) {
  ExpectASpanRunsInAMixedPlan("onnxruntime", "mobilenetv2", 1e-3);
}

}  // namespace
}  // namespace collage
