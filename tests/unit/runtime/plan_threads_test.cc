// A plan's thread count is a request from a file: it is honoured up to this machine's cores.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "../onnx/onnx_test_util.h"
#include "collage/session.h"
#include "ops/graph_builder.h"
#include "session/session_access.h"

namespace collage {
namespace {

Graph TinyModel() {
  GraphBuilder b("tiny");
  ValueId x = b.Input("x", DType::kFloat32, {2, 3});
  b.Output(b.Node("Relu", {x}), "y");
  StatusOr<Graph> graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok());
  return std::move(*graph);
}

TEST(PlanThreadsTest, APlanAskingForAThousandThreadsRunsWithTheMachinesCores) {
  testing::TempDir dir;
  auto session = SessionAccess::FromGraph(TinyModel());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const std::string path = dir.File("plan.json");
  ASSERT_TRUE((*session)->SavePlan(path).ok());
  nlohmann::json plan;
  {
    std::ifstream in(path);
    plan = nlohmann::json::parse(in);
  }
  plan["threads"] = 1001;
  { std::ofstream(path) << plan.dump(); }
  Status loaded = (*session)->LoadPlan(path);
  ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_LE((*session)->num_threads(), cores);
  std::string warnings;
  for (const std::string& w : (*session)->warnings()) warnings += w + "\n";
  EXPECT_NE(warnings.find("measured with 1001 threads"), std::string::npos) << warnings;
  auto out = (*session)->Run({{"x", Tensor::FromVector<float>({2, 3}, {-1, 2, -3, 4, -5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
}

}  // namespace
}  // namespace collage
