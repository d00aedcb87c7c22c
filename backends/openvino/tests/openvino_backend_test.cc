// The `openvino` backend: regions compiled by OpenVINO's ONNX frontend and CPU plug-in match
// the reference kernels run node by node. Tolerance 1e-4 normalized for small groups (sums of
// at most 144 terms, exp in Softmax); 1e-3 for the whole MobileNetV2 (as every backend on the
// zoo, single_backend_zoo_test.cc). Skipped where the backend is not built.
#include <gtest/gtest.h>

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

class OpenvinoBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (GlobalBackendRegistry().Find("openvino") == nullptr) {
      GTEST_SKIP() << "the openvino backend is not built";
    }
  }
};

// x → conv → relu → add(x): the region the "whole" rule offers.
Graph ConvReluAdd() {
  GraphBuilder b("conv_relu_add");
  ValueId x = b.Input("x", DType::kFloat32, {1, 8, 10, 10});
  ValueId y =
      b.Node("Conv", {x, b.RandomNormal("w", {8, 8, 3, 3}, 0.2f), b.RandomNormal("b", {8}, 0.1f)},
             {{"pads", {1, 1, 1, 1}}}, "conv");
  y = b.Node("Relu", {y}, {}, "relu");
  y = b.Node("Add", {y, x}, {}, "add");
  b.Output(y, "y");
  return BuildOrFail(std::move(b));
}

TEST_F(OpenvinoBackendTest, DescribesItself) {
  const Backend& backend = BackendNamed("openvino");
  EXPECT_TRUE(backend.graph_level());
  EXPECT_EQ(backend.version().rfind("OpenVINO 20", 0), 0u) << backend.version();
  EXPECT_NE(backend.version().find("CPU f32"), std::string::npos) << backend.version();
}

TEST_F(OpenvinoBackendTest, SingleConv) {
  GraphBuilder b("conv");
  ValueId x = b.Input("x", DType::kFloat32, {2, 3, 9, 9});
  ValueId y = b.Node("Conv", {x, b.RandomNormal("w", {5, 3, 3, 3}, 0.3f)},
                     {{"strides", {2, 2}}, {"pads", {1, 0, 1, 0}}}, "conv");
  b.Output(y, "y");
  Graph g = BuildOrFail(std::move(b));
  ExpectRuleMatches(g, "openvino", "single", 1);
  EXPECT_FALSE(RuleOffers(g, "openvino", "whole"));  // "whole" is for two nodes or more
}

TEST_F(OpenvinoBackendTest, ConvReluAddRegion) {
  Graph g = ConvReluAdd();
  ExpectRuleMatches(g, "openvino", "whole", 3);
  // The singles match too.
  std::set<std::string> offered = CheckAllCandidates(g, "openvino");
  EXPECT_TRUE(Offers(offered, "single"));
}

TEST_F(OpenvinoBackendTest, MatMulSoftmaxRegion) {
  GraphBuilder b("attention_scores");
  ValueId q = b.Input("q", DType::kFloat32, {2, 4, 16});
  ValueId k = b.Input("k", DType::kFloat32, {2, 16, 4});
  ValueId y = b.Node("MatMul", {q, k}, {}, "scores");
  y = b.Node("Softmax", {y}, {{"axis", -1}}, "softmax");
  b.Output(y, "y");
  Graph g = BuildOrFail(std::move(b));
  ExpectRuleMatches(g, "openvino", "whole", 2);
}

TEST_F(OpenvinoBackendTest, Int64GatherReshape) {
  // Token-id-like int64 data: Gather rows by int64 indices (random in [0, 16), all valid
  // for 16 rows), then Reshape. Integers must be identical.
  GraphBuilder b("int64");
  ValueId table = b.Input("table", DType::kInt64, {16, 6});
  ValueId ids = b.Input("ids", DType::kInt64, {5});
  ValueId y = b.Node("Gather", {table, ids}, {{"axis", 0}}, "gather");
  y = b.Node("Reshape", {y, b.Ints("shape", {3, 10})}, {}, "reshape");
  b.Output(y, "y");
  Graph g = BuildOrFail(std::move(b));
  ExpectRuleMatches(g, "openvino", "whole", 2, /*tolerance=*/0.0);
  EXPECT_EQ(CandidatesOf(g, "openvino", "single").size(), 2u);
  CheckAllCandidates(g, "openvino", /*tolerance=*/0.0);
}

TEST_F(OpenvinoBackendTest, InputRenamedByAPassThroughOp) {
  // The frontend folds Dropout into its input, whose tensor then carries only the Dropout
  // output's name: the kernel binds that input by position. Dropout alone, or returned from a
  // region, is an output the compiled model takes straight from an input, which the plug-in
  // leaves unwritten in a caller's buffer: the kernel copies it.
  GraphBuilder b("dropout");
  ValueId x = b.Input("x", DType::kFloat32, {3, 7});
  ValueId d = b.Node("Dropout", {x}, {}, "dropout");
  ValueId r = b.Node("Relu", {d}, {}, "relu");
  ValueId i = b.Node("Identity", {r}, {}, "identity");
  b.Output(d, "d");
  b.Output(i, "i");
  Graph g = BuildOrFail(std::move(b));
  CheckAllCandidates(g, "openvino", 0.0);  // whatever the rules offer
  // All three, returning d and i: the input is renamed, one output is the input itself.
  Candidate all{"whole", SubGraph(g.num_nodes(), {0, 1, 2})};
  ASSERT_EQ(CompileRequest::For(g, all.nodes, all.rule, 1).outputs.size(), 2u);
  ExpectCandidateMatches(g, "openvino", all, 0.0);
}

TEST_F(OpenvinoBackendTest, InputTheCompiledModelDrops) {
  // Dropout's ratio, an input here, is not read at inference: OpenVINO drops its Parameter.
  GraphBuilder b("dropout_ratio");
  ValueId x = b.Input("x", DType::kFloat32, {4, 5});
  ValueId ratio = b.Input("ratio", DType::kFloat32, {});
  ValueId y = b.Node("Dropout", {x, ratio}, {}, "dropout");
  b.Output(b.Node("Relu", {y}, {}, "relu"), "y");
  Graph g = BuildOrFail(std::move(b));
  ASSERT_EQ(CompileRequest::For(g, SubGraph(g.num_nodes(), {0}), "single", 1).inputs.size(), 2u);
  CheckAllCandidates(g, "openvino", 0.0);
}

TEST_F(OpenvinoBackendTest, RulesRefuseWhatOpenvinoGetsWrong) {
  // ReduceL1 at opset 13: the frontend ignores its axes attribute.
  GraphBuilder b("reduce_l1", /*opset=*/13);
  ValueId x = b.Input("x", DType::kFloat32, {3, 4});
  b.Output(b.Node("ReduceL1", {x}, {{"axes", {1}}, {"keepdims", 0}}, "l1"));
  Graph g = BuildOrFail(std::move(b));
  EXPECT_TRUE(EnumerateCandidates(g, BackendNamed("openvino").rules()).empty());
  // uint8 Sub saturates; float64 is not offered at all.
  GraphBuilder c("u8_sub");
  ValueId a = c.Input("a", DType::kUInt8, {8});
  ValueId d = c.Input("d", DType::kFloat64, {8});
  c.Output(c.Node("Sub", {a, a}, {}, "sub"));
  c.Output(c.Node("Relu", {d}, {}, "relu"));
  Graph h = BuildOrFail(std::move(c));
  EXPECT_TRUE(EnumerateCandidates(h, BackendNamed("openvino").rules()).empty());
  // ceil_mode pooling whose last window would start in the end padding: ONNX drops it
  // (output width 5), OpenVINO keeps it (6). Where no window starts there, it is offered.
  for (int64_t width : {10, 9}) {
    GraphBuilder p("ceil_pool");
    ValueId in = p.Input("x", DType::kFloat32, {2, 3, 6, width});
    p.Output(p.Node(
        "MaxPool", {in},
        {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}, {"pads", {0, 0, 0, 1}}, {"ceil_mode", 1}},
        "pool"));
    Graph pool = BuildOrFail(std::move(p));
    if (width == 10) {
      EXPECT_FALSE(RuleOffers(pool, "openvino", "single"));
    } else {
      ExpectRuleMatches(pool, "openvino", "single", 1);
    }
  }
}

// The "single" fusion's compile function called on groups it does not admit (the placement
// never asks for them, and Backend::Compile refuses them first) answers with a Status,
// whatever OpenVINO makes of them.
void ExpectCompileFails(const Graph& g, const std::string& why) {
  CompileRequest request =
      CompileRequest::For(g, SubGraph(g.num_nodes(), {g.num_nodes() - 1}), "single", 1);
  const Fusion* single = BackendNamed("openvino").rules().FindFusion("single");
  ASSERT_NE(single, nullptr);
  auto kernel = single->compiler()(request);
  ASSERT_FALSE(kernel.ok()) << why;
  EXPECT_NE(kernel.status().message().find("OpenVINO"), std::string::npos)
      << why << ": " << kernel.status().ToString();
  // OpenVINO's message without its "Exception from src/...cpp:N:" frames.
  EXPECT_EQ(kernel.status().message().find("Exception from"), std::string::npos)
      << kernel.status().ToString();
}

TEST_F(OpenvinoBackendTest, CompileErrorsAreStatuses) {
  {  // An op no frontend knows, built without type inference.
    Graph g;
    ValueId x = g.AddValue("x", TensorType{DType::kFloat32, {2, 3}});
    ValueId y = g.AddValue("y", TensorType{DType::kFloat32, {2, 3}});
    g.AddInput(x);
    g.AddOutput(y);
    ASSERT_TRUE(g.AddNode(Node{"garbage", "NoSuchOp", "", {}, {x}, {y}}).ok());
    ExpectCompileFails(g, "NoSuchOp");
  }
  {  // The CPU plug-in has no uint8 ReduceSum.
    GraphBuilder b("u8_reduce");
    ValueId a = b.Input("a", DType::kUInt8, {4, 4});
    b.Output(b.Node("ReduceSum", {a, b.Ints("axes", {1})}, {{"keepdims", 0}}, "sum"));
    ExpectCompileFails(BuildOrFail(std::move(b)), "uint8 ReduceSum");
  }
  {  // A type that OpenVINO infers otherwise than the request says.
    GraphBuilder b("shape_disagrees");
    ValueId a = b.Input("a", DType::kFloat32, {4, 4});
    b.Output(b.Node("Relu", {a}, {}, "relu"));
    Graph g = BuildOrFail(std::move(b));
    // collage's type says 4x5: OpenVINO infers 4x4, and the kernel refuses the buffer.
    g.mutable_value(g.outputs()[0]).type.shape = {4, 5};
    ExpectCompileFails(g, "an output shape OpenVINO infers otherwise");
  }
  EXPECT_FALSE(BackendNamed("openvino").Compile(CompileRequest{}).ok());  // no graph
}

TEST_F(OpenvinoBackendTest, ConcurrentRunsOnOneKernel) {
  Graph g = ConvReluAdd();
  std::vector<Candidate> whole = CandidatesOf(g, "openvino", "whole");
  ASSERT_EQ(whole.size(), 1u);
  CompileRequest request = CompileRequest::For(g, whole[0].nodes, whole[0].rule, 1);
  auto kernel = BackendNamed("openvino").Compile(request);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  const std::vector<double> errors =
      WorstErrorsOfConcurrentRuns(**kernel, request, /*threads=*/2, /*runs=*/50, /*seed=*/100);
  for (int t = 0; t < 2; ++t) {
    EXPECT_GE(errors[t], 0.0) << "thread " << t << " failed";
    EXPECT_LE(errors[t], 1e-4) << "thread " << t;
  }
}

TEST_F(OpenvinoBackendTest, MobileNetV2IsOneRegion) {
  auto graph = BuildZooModel("mobilenetv2");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  const std::map<std::string, Tensor> inputs = zoo_test::RandomGraphInputs(*graph, 5);
  auto reference = zoo_test::RunWithReferenceKernels(*graph, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  SessionOptions options;
  options.backend = "openvino";
  options.num_threads = 2;
  auto session = SessionAccess::FromGraph(std::move(*graph), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const std::string placement = (*session)->DescribePlacement();
  EXPECT_NE(placement.find("openvino:"), std::string::npos) << placement;
  EXPECT_NE(placement.find("in 1 groups"), std::string::npos) << placement;
  EXPECT_EQ(placement.find("native"), std::string::npos) << placement;
  auto outputs = (*session)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  for (const auto& [name, expected] : *reference) {
    EXPECT_LE(NormalizedError(outputs->at(name), expected), 1e-3) << name;
  }
}

TEST_F(OpenvinoBackendTest, ASpanOfMobileNetV2RunsInsideAMixedPlan) {
  ExpectASpanRunsInAMixedPlan("openvino", "mobilenetv2", 1e-3);
}

}  // namespace
}  // namespace collage
