// The native backend's `op` rule: every op kind on small graphs, compared with the reference
// kernels, including ops whose optional inputs and outputs are absent or unused.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "../native_backend.h"
#include "backend_test_util.h"
#include "collage/available_backends.h"
#include "collage/sdk/op_registry.h"
#include "ops/graph_builder.h"
#include "zoo/zoo.h"

namespace collage::testing {
namespace {

const Backend& Native() { return BackendNamed("native"); }

// The `op` candidate of node `id`, as the backend's rules offer it.
std::optional<CompileRequest> OpRequest(const Graph& graph, NodeId id) {
  for (const Candidate& c : EnumerateCandidates(graph, Native().rules())) {
    if (c.rule == "op" && c.nodes.size() == 1 && c.nodes.Contains(id)) {
      return CompileRequest::For(graph, c.nodes, "op", 1);
    }
  }
  return std::nullopt;
}

// Builds a graph with `body`, then checks that every node is offered by `op` and matches the
// reference.
void CheckEveryNode(const std::string& what,
                    const std::function<void(GraphBuilder&)>& body) {
  SCOPED_TRACE(what);
  GraphBuilder b(what);
  body(b);
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  for (NodeId id = 0; id < graph->num_nodes(); ++id) {
    auto request = OpRequest(*graph, id);
    ASSERT_TRUE(request.has_value()) << "no `op` candidate for " << graph->node(id).op_type;
    ExpectMatchesReference("native", *request, 1e-4, /*seed=*/1);
  }
}

TEST(NativeBackend, NameVersionAndRules) {
  const Backend& native = Native();
  EXPECT_EQ(native.name(), "native");
  EXPECT_EQ(native.version(), "collage " + std::to_string(native::kNativeKernelVersion) + " " +
                                  native::NativeIsa() + " gemm, " + native::NativeBaselineIsa() +
                                  " elsewhere");
  EXPECT_EQ(GlobalBackendRegistry().backends().front(), &native);
  std::vector<std::string> names;
  for (const Rule& r : native.rules().rules()) names.push_back(r.name());
  for (const Fusion& f : native.rules().fusions()) names.push_back(f.name());
  EXPECT_EQ(names, (std::vector<std::string>{"op", "concat_batch_norm", "concat_batch_norm_nhwc",
                                             "elementwise_chain", "injective_chain",
                                             "elementwise_chain_nhwc"}));
}

TEST(NativeOp, EveryDefaultDomainOpIsMatched) {
  // One node per registered op would need valid inputs for each; instead check that the
  // pattern lists every op type: a node of each type (inputs not needed to match) matches.
  const Rule& op = Native().rules().rules().front();
  for (const std::string& type : OpRegistry::Global().OpTypes()) {
    if (type.find("::") != std::string::npos) continue;
    Graph g;
    ValueId out = g.AddValue("y", TensorType{DType::kFloat32, {1}});
    Node node;
    node.name = "n";
    node.op_type = type;
    node.outputs = {out};
    ASSERT_TRUE(g.AddNode(node).ok());
    Match match;
    EXPECT_TRUE(op.MatchAt(g, 0, &match)) << type;
  }
}

TEST(NativeOp, ElementwiseAndBroadcast) {
  CheckEveryNode("elementwise", [](GraphBuilder& b) {
    ValueId x = b.Input("x", DType::kFloat32, {2, 3, 4});
    ValueId y = b.Node("Relu", {x});
    y = b.Node("LeakyRelu", {y}, {{"alpha", 0.2f}});
    y = b.Node("Sigmoid", {y});
    ValueId i = b.Node("Cast", {y}, {{"to", int64_t{6}}});
    b.Output(b.Node("Abs", {i}));
    ValueId z = b.Node("Clip", {x, b.Scalar<float>("lo", -0.5f), b.Scalar<float>("hi", 0.5f)});
    b.Output(z);
  });
  CheckEveryNode("broadcast", [](GraphBuilder& b) {
    ValueId x = b.Input("x", DType::kFloat32, {2, 3, 4});
    ValueId c = b.Input("c", DType::kFloat32, {3, 1});
    ValueId y = b.Node("Add", {x, c});
    y = b.Node("Mul", {y, b.RandomNormal("w", {4}, 1.0f)});
    ValueId cond = b.Node("Greater", {x, c});
    b.Output(b.Node("Where", {cond, y, b.Scalar<float>("zero", 0.0f)}));
    b.Output(b.Node("Sum", {x, c, y}));
    ValueId n = b.Input("n", DType::kFloat32, {1, 3, 2, 2});
    b.Output(b.Node("BatchNormalization",
                    {n, b.RandomNormal("s", {3}, 1.0f), b.RandomNormal("bb", {3}, 1.0f),
                     b.RandomNormal("m", {3}, 1.0f), b.RandomUniform("v", {3}, 0.5f, 2.0f)}));
  });
}

TEST(NativeOp, Injective) {
  CheckEveryNode("injective", [](GraphBuilder& b) {
    ValueId x = b.Input("x", DType::kFloat32, {2, 3, 4});
    ValueId t = b.Node("Transpose", {x}, {{"perm", {2, 0, 1}}});
    ValueId r = b.Node("Reshape", {t, b.Ints("shape", {4, 6})});
    ValueId s = b.Node("Slice", {r, b.Ints("starts", {1}), b.Ints("ends", {3}), b.Ints("axes", {0})});
    ValueId g = b.Node("Gather", {s, b.Ints("idx", {5, 0, 2})}, {{"axis", 1}});
    b.Output(b.Node("Concat", {g, g}, {{"axis", 0}}));
    b.Output(b.Node("Expand", {b.Input("e", DType::kInt64, {3, 1}), b.Ints("to", {2, 3, 4})}));
  });
}

TEST(NativeOp, ReductionAndNormalization) {
  CheckEveryNode("reduction", [](GraphBuilder& b) {
    ValueId x = b.Input("x", DType::kFloat32, {2, 5, 8});
    b.Output(b.Node("ReduceMean", {x}, {{"axes", {1}}, {"keepdims", 0}}));
    b.Output(b.Node("Softmax", {x}, {{"axis", -1}}));
    b.Output(b.Node("LayerNormalization",
                    {x, b.RandomNormal("g", {8}, 1.0f), b.RandomNormal("be", {8}, 1.0f)},
                    {{"axis", -1}, {"epsilon", 1e-5f}}));
    b.Output(b.Node("ArgMax", {x}, {{"axis", 2}}));
  });
}

TEST(NativeOp, HeavyOps) {
  CheckEveryNode("heavy", [](GraphBuilder& b) {
    ValueId x = b.Input("x", DType::kFloat32, {1, 3, 9, 9});
    ValueId c = b.Node("Conv", {x, b.RandomNormal("w", {4, 3, 3, 3}, 0.3f), b.RandomNormal("bias", {4}, 1.0f)},
                       {{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}});
    b.Output(b.Node("AveragePool", {c}, {{"kernel_shape", {2, 2}}}));
    ValueId m = b.Input("m", DType::kFloat32, {3, 6, 5});
    b.Output(b.Node("MatMul", {m, b.Input("k", DType::kFloat32, {5, 7})}));
    b.Output(b.Node("Gemm", {b.Input("a", DType::kFloat32, {4, 5}), b.RandomNormal("gw", {6, 5}, 1.0f),
                             b.RandomNormal("gb", {6}, 1.0f)},
                    {{"transB", 1}, {"alpha", 0.5f}}));
  });
}

TEST(NativeOp, OpaqueOps) {
  CheckEveryNode("opaque", [](GraphBuilder& b) {
    ValueId x = b.Input("x", DType::kFloat32, {1, 2, 3, 4});
    b.Output(b.Node("Resize", {x, kNoValue, b.Constant<float>("scales", {4}, {1, 1, 2, 1.5f})},
                    {{"mode", "linear"}}));
    b.Output(b.Node("Shape", {x}));
  });
}

TEST(NativeOp, MaxPoolWithAndWithoutIndices) {
  CheckEveryNode("maxpool", [](GraphBuilder& b) {
    ValueId x = b.Input("x", DType::kFloat32, {1, 2, 6, 6});
    // Indices absent (the node has one output).
    b.Output(b.Node("MaxPool", {x}, {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}}));
    // Both outputs read.
    std::vector<ValueId> both = b.NodeMulti("MaxPool", {x}, 2, {{"kernel_shape", {2, 2}}});
    b.Output(both[0]);
    b.Output(both[1]);
    // Indices computed but read by nobody: the kernel needs scratch space for it.
    std::vector<ValueId> unused = b.NodeMulti("MaxPool", {x}, 2, {{"kernel_shape", {2, 2}}, {"pads", {1, 1, 1, 1}}});
    b.Output(unused[0]);
  });
}

TEST(NativeOp, LstmWithOptionalInputsAndOutputs) {
  constexpr int64_t kHidden = 3;
  auto lstm_inputs = [](GraphBuilder& b) {
    ValueId x = b.Input("x", DType::kFloat32, {4, 2, 5});  // [seq, batch, input]
    ValueId w = b.RandomNormal("W", {1, 4 * kHidden, 5}, 0.5f);
    ValueId r = b.RandomNormal("R", {1, 4 * kHidden, kHidden}, 0.5f);
    return std::vector<ValueId>{x, w, r};
  };
  CheckEveryNode("lstm_y_only", [&](GraphBuilder& b) {
    b.Output(b.Node("LSTM", lstm_inputs(b), {{"hidden_size", kHidden}}));
  });
  CheckEveryNode("lstm_gaps", [&](GraphBuilder& b) {
    std::vector<ValueId> in = lstm_inputs(b);
    in.push_back(b.RandomNormal("B", {1, 8 * kHidden}, 0.5f));
    in.push_back(kNoValue);  // sequence_lens absent
    in.push_back(b.Input("h0", DType::kFloat32, {1, 2, kHidden}));
    std::vector<ValueId> out = b.NodeMulti("LSTM", in, 3, {{"hidden_size", kHidden}});
    b.Output(out[1]);  // Y and Y_c computed but unread: scratch
  });

  // Y absent (kNoValue) in front of a used Y_h.
  GraphBuilder b("lstm_no_y");
  std::vector<ValueId> out = b.NodeMulti("LSTM", lstm_inputs(b), 2, {{"hidden_size", kHidden}});
  b.Output(out[1]);
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  graph->mutable_node(0).outputs[0] = kNoValue;
  CompileRequest request = CompileRequest::For(*graph, SubGraph(graph->num_nodes(), {0}), "op", 1);
  ASSERT_EQ(request.outputs.size(), 1u);
  ExpectMatchesReference("native", request, 1e-4, /*seed=*/1);
}

TEST(NativeOp, DropoutMaskUnread) {
  CheckEveryNode("dropout", [](GraphBuilder& b) {
    ValueId x = b.Input("x", DType::kFloat32, {3, 4});
    std::vector<ValueId> out = b.NodeMulti("Dropout", {x, b.Scalar<float>("ratio", 0.3f)}, 2);
    b.Output(out[0]);
  });
}

TEST(NativeOp, EveryNodeOfTheZooCompiles) {
  for (const char* name : {"resnet50", "mobilenetv2", "bert_base"}) {
    auto graph = BuildZooModel(name);
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    int ops = 0;
    for (const Candidate& c : EnumerateCandidates(*graph, Native().rules())) {
      if (c.rule != "op") continue;
      ++ops;
      auto kernel = Native().Compile(CompileRequest::For(*graph, c.nodes, "op", 1));
      EXPECT_TRUE(kernel.ok()) << name << ": " << kernel.status().ToString();
    }
    EXPECT_EQ(ops, graph->num_nodes()) << name;
  }
}

TEST(NativeOp, ErrorsAreStatuses) {
  GraphBuilder b("bad");
  ValueId x = b.Input("x", DType::kFloat32, {2});
  b.Output(b.Node("Relu", {b.Node("Relu", {x})}));
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok());
  auto two = Native().Compile(CompileRequest::For(*graph, SubGraph(2, {0, 1}), "op", 1));
  EXPECT_FALSE(two.ok());
  auto unknown = Native().Compile(CompileRequest::For(*graph, SubGraph(2, {0}), "nope", 1));
  EXPECT_FALSE(unknown.ok());
  // Integer division by zero is the reference kernel's error, returned by Run.
  GraphBuilder d("div");
  ValueId a = d.Input("a", DType::kInt32, {3});
  d.Output(d.Node("Div", {a, d.Input("z", DType::kInt32, {3})}));
  auto dg = std::move(d).Build();
  ASSERT_TRUE(dg.ok());
  CompileRequest request = CompileRequest::For(*dg, SubGraph(1, {0}), "op", 1);
  auto runner = KernelRunner::Create(Native(), request, GlobalBackendRegistry());
  ASSERT_TRUE(runner.ok());
  auto result = (*runner)->Run({Tensor(DType::kInt32, {3}), Tensor(DType::kInt32, {3})});
  EXPECT_FALSE(result.ok());
}

}  // namespace
}  // namespace collage::testing
