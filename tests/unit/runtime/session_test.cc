#include "collage/session.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "collage/sdk/graph.h"
#include "runtime/executable.h"
#include "runtime/placement.h"
#include "session/session_access.h"

namespace collage {
namespace {

Node NodeOf(std::string name, std::string op, std::vector<ValueId> in, std::vector<ValueId> out) {
  Node n;
  n.name = std::move(name);
  n.op_type = std::move(op);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// z = Relu(x) + bias; w = z * z; outputs z, w and x itself (a graph input as output).
Graph SmallGraph() {
  Graph g;
  TensorType t{DType::kFloat32, {2, 3}};
  ValueId x = g.AddValue("x", t);
  g.AddInput(x);
  ValueId bias = g.AddConstant("bias", Tensor::FromVector<float>({3}, {1.f, 2.f, 3.f}));
  ValueId y = g.AddValue("y", t);
  ValueId z = g.AddValue("z", t);
  ValueId w = g.AddValue("w", t);
  EXPECT_TRUE(g.AddNode(NodeOf("relu", "Relu", {x}, {y})).ok());
  EXPECT_TRUE(g.AddNode(NodeOf("add", "Add", {y, bias}, {z})).ok());
  EXPECT_TRUE(g.AddNode(NodeOf("square", "Mul", {z, z}, {w})).ok());
  g.AddOutput(z);
  g.AddOutput(w);
  g.AddOutput(x);
  return g;
}

std::vector<float> Expected(const std::vector<float>& x, bool squared) {
  std::vector<float> out(6);
  for (size_t i = 0; i < 6; ++i) {
    float z = std::max(x[i], 0.f) + static_cast<float>(i % 3 + 1);
    out[i] = squared ? z * z : z;
  }
  return out;
}

TEST(SessionTest, RunsAGraphAndReportsItsSignature) {
  auto session = SessionAccess::FromGraph(SmallGraph());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_EQ((*session)->inputs().size(), 1u);
  EXPECT_EQ((*session)->inputs()[0].name, "x");
  EXPECT_EQ((*session)->outputs().size(), 3u);

  std::vector<float> x = {-1.f, 0.5f, 2.f, -3.f, 4.f, 0.f};
  auto out = (*session)->Run({{"x", Tensor::FromVector<float>({2, 3}, x)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at("z").ToVector<float>(), Expected(x, false));
  EXPECT_EQ(out->at("w").ToVector<float>(), Expected(x, true));
  EXPECT_EQ(out->at("x").ToVector<float>(), x);
}

TEST(SessionTest, ProfileRecordsEveryStepInOrder) {
  auto session = SessionAccess::FromGraph(SmallGraph());
  ASSERT_TRUE(session.ok());
  RunProfile profile;
  auto out = (*session)->Run({{"x", Tensor(DType::kFloat32, {2, 3})}}, &profile);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // The native backend may fuse the elementwise nodes into one step; together the steps
  // name every node once, in order.
  ASSERT_FALSE(profile.nodes.empty());
  EXPECT_EQ(profile.nodes[0].node_name, "relu");
  std::string ops;
  for (const NodeTiming& t : profile.nodes) {
    ops += (ops.empty() ? "" : "+") + t.op_type;
    EXPECT_EQ(t.backend, "native");
    EXPECT_FALSE(t.rule.empty());
    EXPECT_GE(t.milliseconds, 0.0);
  }
  EXPECT_EQ(ops, "Relu+Add+Mul");
}

TEST(SessionTest, RefusesWrongInputs) {
  auto session = SessionAccess::FromGraph(SmallGraph());
  ASSERT_TRUE(session.ok());
  Session& s = **session;

  auto wrong_shape = s.Run({{"x", Tensor(DType::kFloat32, {3, 2})}});
  EXPECT_EQ(wrong_shape.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_shape.status().message().find("shape 3x2"), std::string::npos)
      << wrong_shape.status().message();

  auto wrong_dtype = s.Run({{"x", Tensor(DType::kInt64, {2, 3})}});
  EXPECT_EQ(wrong_dtype.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_dtype.status().message().find("int64"), std::string::npos);

  auto missing = s.Run({});
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("missing input(s): x"), std::string::npos);

  auto unknown = s.Run({{"x", Tensor(DType::kFloat32, {2, 3})}, {"bogus", Tensor(DType::kFloat32, {1})}});
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("bogus"), std::string::npos);
}

TEST(SessionTest, ConcurrentRunsGiveIdenticalResults) {
  auto session = SessionAccess::FromGraph(SmallGraph());
  ASSERT_TRUE(session.ok());
  Session& s = **session;
  constexpr int kThreads = 8;
  constexpr int kRuns = 50;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::normal_distribution<float> dist;
      for (int r = 0; r < kRuns; ++r) {
        std::vector<float> x(6);
        for (float& v : x) v = dist(rng);
        auto out = s.Run({{"x", Tensor::FromVector<float>({2, 3}, x)}});
        if (!out.ok() || out->at("w").ToVector<float>() != Expected(x, true)) failures[static_cast<size_t>(t)]++;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[static_cast<size_t>(t)], 0) << "thread " << t;
}

StatusOr<std::unique_ptr<Executable>> NativeExecutable(const Graph& g) {
  BackendRegistry& registry = GlobalBackendRegistry();
  COLLAGE_ASSIGN_OR_RETURN(Placement placement,
                           PlaceOnSingleBackend(g, *registry.Find("native"), registry));
  return Executable::Create(g, placement, registry, 1);
}

TEST(ExecutableTest, LiveBuffersNeverShareMemory) {
  Graph g = SmallGraph();
  auto exe = NativeExecutable(g);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  const auto& requests = (*exe)->buffer_requests();
  const auto& plan = (*exe)->memory_plan();
  ASSERT_GE(requests.size(), 3u);  // y, z, w (and any kernel workspace) live in the arena
  for (size_t i = 0; i < requests.size(); ++i) {
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!LifetimesOverlap(requests[i], requests[j])) continue;
      bool disjoint = plan.offsets[i] + requests[i].bytes <= plan.offsets[j] ||
                      plan.offsets[j] + requests[j].bytes <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << i << " and " << j;
    }
  }
}

TEST(ExecutableTest, RefusesUnknownOps) {
  Graph g;
  TensorType t{DType::kFloat32, {1}};
  ValueId x = g.AddValue("x", t);
  ValueId y = g.AddValue("y", t);
  g.AddInput(x);
  ASSERT_TRUE(g.AddNode(NodeOf("mystery", "NoSuchOp", {x}, {y})).ok());
  g.AddOutput(y);
  auto exe = NativeExecutable(g);
  EXPECT_EQ(exe.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(exe.status().message().find("mystery"), std::string::npos);
}

}  // namespace
}  // namespace collage
