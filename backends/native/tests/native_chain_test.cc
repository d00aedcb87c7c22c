// The native backend's fused elementwise chain (tiled) and injective chain (node by node),
// compared with the reference kernels run node by node.
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <cmath>
#include <cstring>
#include <thread>

#include "ops/graph_builder.h"
#include "../native_elementwise_chain.h"
#include "../native_node_sequence.h"
#include "backend_test_util.h"
#include "zoo/zoo.h"

namespace collage::testing {
namespace {

const Backend& Native() { return BackendNamed("native"); }

using native::ChainOptions;
using native::CompileElementwiseChain;
using native::kDefaultTileElements;

// All nodes of the graph as one group.
CompileRequest WholeGraph(const Graph& graph, const std::string& rule, int threads = 1) {
  SubGraph all(graph.num_nodes());
  for (NodeId n = 0; n < graph.num_nodes(); ++n) all.Add(n);
  return CompileRequest::For(graph, all, rule, threads);
}

// Compiles with a given tile size and compares with the reference.
void ExpectChainMatches(const CompileRequest& request, int64_t tile, uint32_t seed = 7) {
  SCOPED_TRACE("tile " + std::to_string(tile));
  auto kernel = CompileElementwiseChain(request, ChainOptions{tile});
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  std::vector<Tensor> inputs = RandomInputs(request, seed);
  auto got = RunKernel(**kernel, request, inputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  auto ref = RunReferenceGroup(request, inputs);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  ExpectClose(*got, *ref, 1e-4, DescribeGroup("native", request));
}

// BERT's exact GELU: x * 0.5 * (1 + erf(x / sqrt(2))), on [rows, cols].
Graph GeluGraph(int64_t rows, int64_t cols) {
  GraphBuilder b("gelu");
  ValueId x = b.Input("x", DType::kFloat32, {rows, cols});
  ValueId d = b.Node("Div", {x, b.Scalar<float>("sqrt2", std::sqrt(2.0f))});
  ValueId e = b.Node("Erf", {d});
  ValueId a = b.Node("Add", {e, b.Scalar<float>("one", 1.0f)});
  ValueId m = b.Node("Mul", {x, a});
  b.Output(b.Node("Mul", {m, b.Scalar<float>("half", 0.5f)}));
  return BuildOrFail(std::move(b));
}

TEST(NativeChain, GeluMatchesReference) {
  Graph g = GeluGraph(128, 3072);
  ExpectMatchesReference("native", WholeGraph(g, "elementwise_chain"), 1e-4, /*seed=*/1);
  ExpectMatchesReference("native", WholeGraph(g, "elementwise_chain", 4), 1e-4, /*seed=*/1);
}

// x[N,C,H,W] + bias[C,1,1] (constant) → Relu → * scale[1,C,H,W] (input) - 0.25 → Max with
// row[W] (input), with a Where on a bool mask [N,1,H,1].
Graph BroadcastGraph(int64_t n, int64_t c, int64_t h, int64_t w) {
  GraphBuilder b("broadcast");
  ValueId x = b.Input("x", DType::kFloat32, {n, c, h, w});
  ValueId scale = b.Input("scale", DType::kFloat32, {1, c, h, w});
  ValueId row = b.Input("row", DType::kFloat32, {w});
  ValueId mask = b.Input("mask", DType::kBool, {n, 1, h, 1});
  ValueId y = b.Node("Add", {x, b.RandomNormal("bias", {c, 1, 1}, 1.0f)});
  y = b.Node("Relu", {y});
  y = b.Node("Mul", {y, scale});
  y = b.Node("Sub", {y, b.Scalar<float>("quarter", 0.25f)});
  y = b.Node("Max", {y, row});
  b.Output(b.Node("Where", {mask, y, x}));
  return BuildOrFail(std::move(b));
}

TEST(NativeChain, BroadcastOperands) {
  Graph g = BroadcastGraph(2, 3, 5, 7);
  CompileRequest request = WholeGraph(g, "elementwise_chain");
  // Tiles that cut the inner dims anywhere: single elements, shorter and longer than a row.
  for (int64_t tile : std::vector<int64_t>{1, 3, 7, 11, 35, 64, 210, 211, kDefaultTileElements}) {
    ExpectChainMatches(request, tile);
  }
  ExpectMatchesReference("native", request, 1e-4, /*seed=*/1);
}

TEST(NativeChain, TileBoundaries) {
  const int64_t t = kDefaultTileElements;
  for (int64_t n : {int64_t{1}, t - 1, t, t + 1, 3 * t + 5}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    GraphBuilder b("sizes");
    ValueId x = b.Input("x", DType::kFloat32, {2, n});
    ValueId col = b.Input("col", DType::kFloat32, {2, 1});
    ValueId y = b.Node("Mul", {x, b.RandomNormal("row", {n}, 1.0f)});
    y = b.Node("Add", {y, col});
    y = b.Node("Tanh", {y});
    b.Output(b.Node("Div", {y, b.Scalar<float>("two", 2.0f)}));
    Graph g = BuildOrFail(std::move(b));
    ExpectMatchesReference("native", WholeGraph(g, "elementwise_chain"), 1e-4, /*seed=*/1);
    ExpectChainMatches(WholeGraph(g, "elementwise_chain"), 5);
  }
}

TEST(NativeChain, IntermediateReadOutsideIsWritten) {
  GraphBuilder b("escape");
  ValueId x = b.Input("x", DType::kFloat32, {3, 1000});
  ValueId r = b.Node("Relu", {x});
  ValueId a = b.Node("Add", {r, b.RandomNormal("bias", {1000}, 1.0f)});
  ValueId s = b.Node("Sigmoid", {a});
  b.Output(s);
  b.Output(b.Node("Exp", {r}));  // reads the chain's intermediate
  Graph g = BuildOrFail(std::move(b));
  CompileRequest request = CompileRequest::For(g, SubGraph(4, {0, 1, 2}), "elementwise_chain", 1);
  ASSERT_EQ(request.outputs.size(), 2u);  // r and s
  ExpectMatchesReference("native", request, 1e-4, /*seed=*/1);
  ExpectChainMatches(request, 300);
}

TEST(NativeChain, SmallNodesRunFirstAndExpandBroadcasts) {
  // Neg of a [1,C,1,1] input and Expand of a [C,1,1] constant are smaller than (or expand to)
  // the chain's shape: the first runs whole before the tiles, the second per tile.
  GraphBuilder b("prologue");
  ValueId x = b.Input("x", DType::kFloat32, {2, 4, 3, 3});
  ValueId bias = b.Input("bias", DType::kFloat32, {1, 4, 1, 1});
  ValueId nb = b.Node("Neg", {bias});
  ValueId e = b.Node("Expand", {b.RandomNormal("c", {4, 1, 1}, 1.0f), b.Ints("shape", {2, 4, 3, 3})});
  ValueId y = b.Node("Add", {x, nb});
  y = b.Node("Mul", {y, e});
  b.Output(b.Node("Relu", {y}));
  b.Output(nb);
  Graph g = BuildOrFail(std::move(b));
  CompileRequest request = WholeGraph(g, "elementwise_chain");
  for (int64_t tile : std::vector<int64_t>{1, 4, 9, 100}) ExpectChainMatches(request, tile);
}

TEST(NativeChain, OtherDtypes) {
  GraphBuilder b("dtypes");
  ValueId x = b.Input("x", DType::kInt32, {5, 300});
  ValueId y = b.Node("Mul", {x, b.Constant<int32_t>("three", {}, {3})});
  y = b.Node("Sub", {y, b.Input("k", DType::kInt32, {300})});
  ValueId big = b.Node("Greater", {y, b.Constant<int32_t>("ten", {}, {10})});
  ValueId f = b.Node("Cast", {y}, {{"to", int64_t{1}}});
  ValueId n = b.Node("Not", {big});
  b.Output(b.Node("Where", {n, f, b.Scalar<float>("m1", -1.0f)}));
  Graph g = BuildOrFail(std::move(b));
  CompileRequest request = WholeGraph(g, "elementwise_chain");
  for (int64_t tile : std::vector<int64_t>{7, 256, kDefaultTileElements}) ExpectChainMatches(request, tile);
}

TEST(NativeChain, ConcurrentRunsAreIdentical) {
  Graph g = GeluGraph(64, 4096);
  CompileRequest request = WholeGraph(g, "elementwise_chain", 4);
  auto kernel = Native().Compile(request);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  std::vector<Tensor> inputs = RandomInputs(request, 3);
  auto first = RunKernel(**kernel, request, inputs);
  ASSERT_TRUE(first.ok());
  std::vector<std::vector<Tensor>> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 5; ++rep) {
        auto r = RunKernel(**kernel, request, inputs);
        if (r.ok()) results[t] = std::move(*r);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (const auto& r : results) {
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(std::memcmp(r[0].data(), (*first)[0].data(), r[0].nbytes()), 0);
  }
  auto ref = RunReferenceGroup(request, inputs);
  ASSERT_TRUE(ref.ok());
  ExpectClose(*first, *ref, 1e-4, "gelu");
}

TEST(NativeChain, RefusesWhatItCannotTile) {
  GraphBuilder b("bad");
  ValueId x = b.Input("x", DType::kFloat32, {1, 3, 4, 4});
  ValueId c = b.Node("Conv", {x, b.RandomNormal("w", {3, 3, 1, 1}, 1.0f)});
  b.Output(b.Node("Relu", {c}));
  ValueId n = b.Node("BatchNormalization",
                     {x, b.RandomNormal("s", {3}, 1.0f), b.RandomNormal("bb", {3}, 1.0f),
                      b.RandomNormal("m", {3}, 1.0f), b.RandomUniform("v", {3}, 0.5f, 2.0f)});
  b.Output(b.Node("Relu", {n}));
  Graph g = BuildOrFail(std::move(b));
  EXPECT_FALSE(native::IsChainableNode(g, g.node(0)));  // Conv
  EXPECT_TRUE(native::IsChainableNode(g, g.node(1)));   // Relu
  EXPECT_FALSE(native::IsChainableNode(g, g.node(2)));  // BatchNormalization
  auto conv = Native().Compile(CompileRequest::For(g, SubGraph(4, {0, 1}), "elementwise_chain", 1));
  EXPECT_FALSE(conv.ok());
  auto bn = Native().Compile(CompileRequest::For(g, SubGraph(4, {2, 3}), "elementwise_chain", 1));
  EXPECT_FALSE(bn.ok());
  for (const Candidate& cand : EnumerateCandidates(g, Native().rules())) {
    if (cand.rule != "elementwise_chain") continue;
    EXPECT_FALSE(cand.nodes.Contains(0) || cand.nodes.Contains(2)) << cand.nodes.ToString();
  }
}

// Every elementwise_chain candidate the fusion generator offers on a zoo model compiles and
// matches the reference; returns how many there were.
int CheckZooChains(const std::string& name) {
  auto graph = BuildZooModel(name);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  if (!graph.ok()) return 0;
  int count = 0;
  std::set<std::string> seen;  // one run per distinct op sequence and shape keeps it quick
  for (const Candidate& c : EnumerateCandidates(*graph, Native().rules())) {
    if (c.rule != "elementwise_chain") continue;
    ++count;
    CompileRequest request = CompileRequest::For(*graph, c.nodes, c.rule, 2);
    std::string key;
    for (NodeId n : c.nodes.Nodes()) {
      const Node& node = graph->node(n);
      key += node.op_type + ShapeToString(graph->value(node.outputs[0]).type.shape) + ";";
    }
    key += std::to_string(request.outputs.size());
    if (!seen.insert(key).second) {
      auto kernel = Native().Compile(request);
      EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
      continue;
    }
    ExpectMatchesReference("native", request, 1e-4, /*seed=*/1);
  }
  return count;
}

TEST(NativeChain, ZooResnet50Candidates) { EXPECT_GT(CheckZooChains("resnet50"), 0); }
TEST(NativeChain, ZooBertBaseCandidates) {
  // The GELU chain (Div, Erf, Add, Mul, Mul) must be among them.
  auto graph = BuildZooModel("bert_base");
  ASSERT_TRUE(graph.ok());
  bool gelu = false;
  for (const Candidate& c : EnumerateCandidates(*graph, Native().rules())) {
    if (c.rule != "elementwise_chain" || c.nodes.size() != 5) continue;
    std::string ops;
    for (NodeId n : c.nodes.Nodes()) ops += graph->node(n).op_type + ",";
    gelu = gelu || ops == "Div,Erf,Add,Mul,Mul,";
  }
  EXPECT_TRUE(gelu);
  EXPECT_GT(CheckZooChains("bert_base"), 0);
}

TEST(NativeInjectiveChain, MatchesReference) {
  GraphBuilder b("inj");
  ValueId x = b.Input("x", DType::kFloat32, {2, 3, 4});
  ValueId t = b.Node("Transpose", {x}, {{"perm", {0, 2, 1}}});
  ValueId r = b.Node("Reshape", {t, b.Ints("shape", {2, 12})});
  ValueId a = b.Node("Add", {r, b.RandomNormal("bias", {12}, 1.0f)});
  b.Output(b.Node("Relu", {a}));
  Graph g = BuildOrFail(std::move(b));
  bool offered = false;
  for (const Candidate& c : EnumerateCandidates(g, Native().rules())) {
    if (c.rule != "injective_chain") continue;
    offered = offered || c.nodes.size() == 4;
    ExpectMatchesReference("native", CompileRequest::For(g, c.nodes, c.rule, 1), 1e-4,
                           /*seed=*/1);
  }
  EXPECT_TRUE(offered);
}

// Timing, not a check: fused GELU vs the same nodes node by node (run with
// --gtest_also_run_disabled_tests --gtest_filter='*GeluSpeed*').
TEST(NativeChain, DISABLED_GeluSpeed) {
  Graph g = GeluGraph(128, 3072);
  for (int threads : {1, 2, 4}) {
    omp_set_num_threads(threads);
    CompileRequest fused = WholeGraph(g, "elementwise_chain", threads);
    CompileRequest split = WholeGraph(g, "injective_chain", threads);  // node by node
    auto fk = Native().Compile(fused);
    auto sk = native::CompileNodeByNode(split);
    ASSERT_TRUE(fk.ok() && sk.ok());
    std::vector<Tensor> inputs = RandomInputs(fused, 1);
    auto time = [&](const Kernel& k) {
      std::vector<double> ms;
      for (int rep = 0; rep < 30; ++rep) {
        auto start = std::chrono::steady_clock::now();
        auto r = RunKernel(k, fused, inputs);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        EXPECT_TRUE(r.ok());
      }
      std::sort(ms.begin(), ms.end());
      return ms[ms.size() / 2];
    };
    std::printf("GELU 128x3072, %d thread(s): fused %.3f ms, node by node %.3f ms\n", threads,
                time(**fk), time(**sk));
  }
}

}  // namespace
}  // namespace collage::testing
