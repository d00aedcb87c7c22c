// The `xnnpack` backend's elementwise rules (binary with broadcasting, plain and
// channels-last; unary; softmax), the operator kernels' thread safety and thread-count
// changes. Tolerance 1e-4 normalized: no long reductions here (softmax rows of ≤ 64).
#include <gtest/gtest.h>

#include <thread>

#include "../xnnpack_util.h"
#include "backend_test_util.h"
#include "collage/available_backends.h"

namespace collage {
namespace {

using namespace collage::testing;

// y = op(a, b) where b is an input of shape b_shape or (const_b) a random constant.
Graph BinaryGraph(const std::string& op, Shape a_shape, Shape b_shape, bool const_b,
                  const std::string& act = "") {
  GraphBuilder b("binary");
  ValueId a = b.Input("a", DType::kFloat32, a_shape);
  ValueId other =
      const_b ? b.RandomNormal("b", b_shape, 1.0f) : b.Input("b", DType::kFloat32, b_shape);
  ValueId y = b.Node(op, {a, other}, {}, "op");
  if (act == "Relu") y = b.Node("Relu", {y});
  b.Output(y, "y");
  return BuildOrFail(std::move(b));
}

TEST(XnnpackElementwiseTest, BinaryBroadcastPlain) {
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    SCOPED_TRACE(op);
    ExpectRuleMatches(BinaryGraph(op, {2, 3, 4, 5}, {4, 1}, false), "xnnpack", "binary", 1);
    ExpectRuleMatches(BinaryGraph(op, {3, 5}, {2, 1, 5}, false), "xnnpack", "binary", 1);
    ExpectRuleMatches(BinaryGraph(op, {6, 7}, {}, true), "xnnpack", "binary", 1);
  }
  ExpectRuleMatches(BinaryGraph("Add", {4, 9}, {9}, true, "Relu"), "xnnpack", "binary_relu", 2);
  // Both operands the same value: one kernel input.
  GraphBuilder b("square");
  ValueId x = b.Input("x", DType::kFloat32, {1, 3, 4, 5});
  b.Output(b.Node("Mul", {x, x}), "y");
  Graph square = BuildOrFail(std::move(b));
  ExpectRuleMatches(square, "xnnpack", "binary", 1);
  ExpectRuleMatches(square, "xnnpack", "binary_nhwc", 1);
  ExpectRuleMatches(square, "xnnpack_graph", "single", 1);
  // Max/Min take no output range in XNNPACK: no fused variant.
  EXPECT_FALSE(RuleOffers(BinaryGraph("Max", {4, 9}, {9}, true, "Relu"), "xnnpack", "binary_relu"));
}

TEST(XnnpackElementwiseTest, BinaryChannelsLast) {
  // Residual add of two full 4-D tensors, per-channel constants, a scalar, a 2-D input.
  ExpectRuleMatches(BinaryGraph("Add", {2, 8, 5, 6}, {2, 8, 5, 6}, false), "xnnpack", "binary_nhwc",
                    1);
  ExpectRuleMatches(BinaryGraph("Add", {2, 8, 5, 6}, {2, 8, 5, 6}, false, "Relu"), "xnnpack",
                    "binary_relu_nhwc", 2);
  ExpectRuleMatches(BinaryGraph("Mul", {1, 8, 5, 6}, {1, 8, 1, 1}, true), "xnnpack", "binary_nhwc",
                    1);
  ExpectRuleMatches(BinaryGraph("Sub", {1, 8, 5, 6}, {8, 1, 1}, true), "xnnpack", "binary_nhwc", 1);
  ExpectRuleMatches(BinaryGraph("Div", {1, 8, 5, 6}, {}, true), "xnnpack", "binary_nhwc", 1);
  // A full-size constant is transposed to NHWC at compile time.
  ExpectRuleMatches(BinaryGraph("Sub", {2, 8, 5, 6}, {8, 5, 6}, true), "xnnpack", "binary_nhwc", 1);
  ExpectRuleMatches(BinaryGraph("Add", {1, 8, 5, 6}, {5, 6}, false), "xnnpack", "binary_nhwc", 1);
  // Squeeze-excitation style: a non-constant [N, C, 1, 1] scale.
  ExpectRuleMatches(BinaryGraph("Mul", {2, 8, 5, 6}, {2, 8, 1, 1}, false), "xnnpack", "binary_nhwc",
                    1);
  // A rank-3 non-constant with channels: its channel dim would move, so no _nhwc offer.
  EXPECT_FALSE(
      RuleOffers(BinaryGraph("Add", {1, 8, 5, 6}, {8, 5, 6}, false), "xnnpack", "binary_nhwc"));
  EXPECT_TRUE(RuleOffers(BinaryGraph("Add", {1, 8, 5, 6}, {8, 5, 6}, false), "xnnpack", "binary"));
}

TEST(XnnpackElementwiseTest, RejectsNonFloat) {
  GraphBuilder b;
  ValueId a = b.Input("a", DType::kInt64, {4, 5});
  ValueId c = b.Input("c", DType::kInt64, {4, 5});
  b.Output(b.Node("Add", {a, c}), "y");
  Graph g = BuildOrFail(std::move(b));
  EXPECT_TRUE(EnumerateCandidates(g, BackendNamed("xnnpack").rules()).empty());
  EXPECT_TRUE(EnumerateCandidates(g, BackendNamed("xnnpack_graph").rules()).empty());
}

Graph UnaryGraph(const std::string& op, Shape shape, NamedAttributes attrs = {}) {
  GraphBuilder b("unary");
  ValueId x = b.Input("x", DType::kFloat32, shape);
  b.Output(b.Node(op, {x}, attrs, "op"), "y");
  return BuildOrFail(std::move(b));
}

TEST(XnnpackElementwiseTest, Unary) {
  for (const char* op : {"Relu", "Sigmoid", "HardSwish", "LeakyRelu", "Elu", "Abs", "Neg", "Sqrt",
                         "Floor", "Ceil", "Round"}) {
    SCOPED_TRACE(op);
    ExpectRuleMatches(UnaryGraph(op, {3, 37}), "xnnpack", "unary", 1);
    ExpectRuleMatches(UnaryGraph(op, {1, 4, 5, 6}), "xnnpack", "unary_nhwc", 1);
  }
  ExpectRuleMatches(UnaryGraph("LeakyRelu", {50}, {{"alpha", 0.3f}}), "xnnpack", "unary", 1);
  ExpectRuleMatches(UnaryGraph("Elu", {50}, {{"alpha", 0.7f}}), "xnnpack", "unary", 1);
  GraphBuilder b;
  ValueId x = b.Input("x", DType::kFloat32, {4, 10});
  b.Output(b.Node("Clip", {x, b.Scalar("lo", -0.2f), b.Scalar("hi", 0.3f)}), "y");
  ExpectRuleMatches(BuildOrFail(std::move(b)), "xnnpack", "unary", 1);
}

TEST(XnnpackElementwiseTest, Softmax) {
  ExpectRuleMatches(UnaryGraph("Softmax", {2, 3, 64}), "xnnpack", "softmax", 1);
  ExpectRuleMatches(UnaryGraph("Softmax", {5, 10}, {{"axis", 1}}), "xnnpack", "softmax", 1);
  EXPECT_FALSE(RuleOffers(UnaryGraph("Softmax", {2, 3, 10}, {{"axis", 1}}), "xnnpack", "softmax"));
  // Opset 11: the 2-D coercion at the last axis is a last-axis softmax.
  GraphBuilder b("softmax11", 11);
  ValueId x = b.Input("x", DType::kFloat32, {2, 3, 10});
  b.Output(b.Node("Softmax", {x}, {{"axis", 2}}), "y");
  ExpectRuleMatches(BuildOrFail(std::move(b)), "xnnpack", "softmax", 1);
  // Opset 11 default axis 1 on a 3-D input coerces to [2, 30]: not last-axis.
  GraphBuilder c("softmax11d", 11);
  ValueId y = c.Input("x", DType::kFloat32, {2, 3, 10});
  c.Output(c.Node("Softmax", {y}), "y");
  EXPECT_FALSE(RuleOffers(BuildOrFail(std::move(c)), "xnnpack", "softmax"));
}

// x[1x8x12x12] → Conv 3x3, 8 channels → y
Graph SmallConv() {
  GraphBuilder b("conv");
  ValueId x = b.Input("x", DType::kFloat32, {1, 8, 12, 12});
  ValueId y =
      b.Node("Conv", {x, b.RandomNormal("w", {8, 8, 3, 3}, 0.2f)}, {{"pads", {1, 1, 1, 1}}});
  b.Output(y, "y");
  return BuildOrFail(std::move(b));
}

// One operator kernel run from several threads at once with different buffers: setup + run
// are serialised inside the kernel, so every result must match its own reference. Compiled
// for 1 thread (no pool) and for 2 (the shared 2-thread pool).
TEST(XnnpackElementwiseTest, ConcurrentRunsAndThreadCounts) {
  Graph g = SmallConv();
  std::vector<Candidate> candidates = CandidatesOf(g, "xnnpack", "conv");
  ASSERT_EQ(candidates.size(), 1u);
  for (int count : {1, 2}) {
    CompileRequest request = CompileRequest::For(g, candidates[0].nodes, "conv", count);
    auto runner = KernelRunner::Create(BackendNamed("xnnpack"), request, GlobalBackendRegistry());
    ASSERT_TRUE(runner.ok()) << runner.status().ToString();
    constexpr int kThreads = 4;
    std::vector<double> errors(kThreads, INFINITY);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::vector<Tensor> inputs = RandomInputs(request, 100 + t);
        for (int rep = 0; rep < 20; ++rep) {
          auto got = (*runner)->Run(inputs);
          auto ref = RunReferenceGroup(request, inputs);
          if (!got.ok() || !ref.ok()) return;
          errors[t] = NormalizedError((*got)[0], (*ref)[0]);
          if (errors[t] > 1e-4) return;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (double e : errors) EXPECT_LE(e, 1e-4) << count << " XNNPACK threads";
  }
}

// The kernels of one execution context share its one pool; another context (another
// session) has its own; a kernel keeps its context, so it runs after everything else that
// held the context is gone.
TEST(XnnpackElementwiseTest, KernelsShareTheirContextsPoolAndKeepItAlive) {
  Graph g = SmallConv();
  std::vector<Candidate> candidates = CandidatesOf(g, "xnnpack", "conv");
  ASSERT_EQ(candidates.size(), 1u);
  auto context = std::make_shared<ExecutionContext>(2);
  const CompileRequest first = CompileRequest::For(g, candidates[0].nodes, "conv", context);
  const CompileRequest second = CompileRequest::For(g, candidates[0].nodes, "conv", context);
  const xnnpack::PoolHandle pool = xnnpack::ThreadPoolFor(first);
  ASSERT_NE(pool.pool, nullptr);
  EXPECT_EQ(xnnpack::ThreadPoolFor(second).pool, pool.pool);
  const CompileRequest elsewhere = CompileRequest::For(g, candidates[0].nodes, "conv", 2);
  EXPECT_NE(xnnpack::ThreadPoolFor(elsewhere).pool, pool.pool);
  EXPECT_EQ(xnnpack::ThreadPoolFor(CompileRequest::For(g, candidates[0].nodes, "conv", 1)).pool,
            nullptr);

  std::vector<Tensor> inputs = RandomInputs(first, 5);
  auto reference = RunReferenceGroup(first, inputs);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  std::unique_ptr<KernelRunner> runner;
  {
    CompileRequest request =
        CompileRequest::For(g, candidates[0].nodes, "conv", std::make_shared<ExecutionContext>(2));
    auto created = KernelRunner::Create(BackendNamed("xnnpack"), request, GlobalBackendRegistry());
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    runner = std::move(*created);
  }  // the request, the only other holder of its context, is gone
  auto got = runner->Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_LE(NormalizedError((*got)[0], (*reference)[0]), 1e-4);
}

TEST(XnnpackElementwiseTest, VersionNamesLibraryAndIsa) {
  const std::string v = BackendNamed("xnnpack").version();
  EXPECT_EQ(v.rfind("XNNPACK ", 0), 0u) << v;
  EXPECT_EQ(BackendNamed("xnnpack_graph").version(), v);
  EXPECT_TRUE(BackendNamed("xnnpack_graph").graph_level());
  EXPECT_FALSE(BackendNamed("xnnpack").graph_level());
}

}  // namespace
}  // namespace collage
