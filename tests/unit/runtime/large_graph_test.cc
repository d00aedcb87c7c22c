// A model of 100,000 tiny nodes loads (import, placement, memory plan) in seconds and in
// well under a gigabyte: the algorithms on the graph stay near-linear in its size.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>

#include "../onnx/onnx_test_util.h"
#include "../util/sanitizer_build.h"
#include "collage/session.h"
#include "onnx/onnx_export.h"
#include "ops/graph_builder.h"

namespace collage {
namespace {

constexpr int kNodes = 100'000;

// A chain of elementwise ops (fused in groups), Softmaxes (a buffer each) and products by a
// few shared weights (the batching pass looks for products it can stack), 4x4 values.
Graph LongChain() {
  GraphBuilder b("long_chain");
  ValueId x = b.Input("x", DType::kFloat32, {4, 4});
  std::vector<ValueId> weights;
  for (int w = 0; w < 10; ++w) {
    weights.push_back(b.RandomNormal("w" + std::to_string(w), {4, 4}, 0.5f));
  }
  for (int n = 0; n < kNodes; ++n) {
    switch (n % 4) {
      case 0: x = b.Node("Relu", {x}); break;
      case 1: x = b.Node("Softmax", {x}, {{"axis", -1}}); break;
      case 2: x = b.Node("MatMul", {x, weights[static_cast<size_t>(n % 10)]}); break;
      default: x = b.Node("Sigmoid", {x}); break;
    }
  }
  b.Output(x, "y");
  StatusOr<Graph> graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return std::move(*graph);
}

long MaxResidentKilobytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

TEST(LargeGraphTest, AHundredThousandNodeChainLoadsAndRunsInSecondsAndUnderAGigabyte) {
  if (testing::kAddressSanitizer) GTEST_SKIP() << "the sanitizers' bookkeeping sets other bounds";
  testing::TempDir dir;
  const std::string path = dir.File("chain.onnx");
  {
    const Graph graph = LongChain();
    ASSERT_EQ(graph.num_nodes(), kNodes);
    ASSERT_TRUE(ExportOnnxFile(graph, path).ok());
  }
  const long resident_before = MaxResidentKilobytes();
  const auto start = std::chrono::steady_clock::now();
  auto session = Session::LoadFile(path);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const double load_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto outputs =
      (*session)->Run({{"x", Tensor::FromVector<float>({4, 4}, std::vector<float>(16, 0.25f))}});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const double grown_megabytes =
      static_cast<double>(MaxResidentKilobytes() - resident_before) / 1024;
  EXPECT_LT(load_seconds, 10.0);
  EXPECT_LT(grown_megabytes, 1024.0);
  RecordProperty("load_seconds", std::to_string(load_seconds));
  RecordProperty("grown_megabytes", std::to_string(grown_megabytes));
}

}  // namespace
}  // namespace collage
