// The oneDNN rules on whole models: every candidate offered compiles (the rules' constraints
// reject what Compile cannot do), and the expected families appear.
#include <map>

#include "backend_test_util.h"
#include "zoo/zoo.h"

namespace collage::testing {
namespace {

std::map<std::string, int> CompileAll(const Graph& graph) {
  std::map<std::string, int> per_rule;
  for (const Candidate& c : EnumerateCandidates(graph, BackendNamed("onednn").rules())) {
    CompileRequest request = CompileRequest::For(graph, c.nodes, c.rule, 1);
    auto kernel = BackendNamed("onednn").Compile(request);
    EXPECT_TRUE(kernel.ok()) << DescribeGroup("onednn", request) << ": " << kernel.status().ToString();
    ++per_rule[c.rule];
  }
  return per_rule;
}

TEST(OnednnZoo, EveryMobileNetV2CandidateCompiles) {
  auto graph = BuildZooModel("mobilenetv2");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto per_rule = CompileAll(*graph);
  EXPECT_GT(per_rule["conv_act_blocked"], 0);
  EXPECT_GT(per_rule["conv_blocked"], 0);
  EXPECT_GT(per_rule["global_pool"], 0);
}

TEST(OnednnZoo, EveryResNet50CandidateCompiles) {
  auto graph = BuildZooModel("resnet50");
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  auto per_rule = CompileAll(*graph);
  EXPECT_GT(per_rule["conv_add_act_blocked"], 0);  // the residual add, then Relu
  EXPECT_GT(per_rule["max_pool_blocked"], 0);
}

}  // namespace
}  // namespace collage::testing
