// The OpenBLAS backend's Conv rules (im2col + cblas_sgemm): geometry variants compared with
// the reference kernels through a KernelRunner. Tolerance 1e-4 (normalized): reductions are
// at most 144 long.
#include <gtest/gtest.h>

#include "backend_test_util.h"

namespace collage::testing {
namespace {

// `rule` offers exactly one candidate on `graph`; compiled for 2 threads, it matches the
// reference on inputs from seed 5.
void ExpectRuleMatches(const Graph& graph, const std::string& rule) {
  collage::testing::ExpectRuleMatches(graph, "openblas", rule, kAnyNodes, 1e-4, 5, /*threads=*/2);
}

const std::vector<Conv2dCase>& Cases() {
  static const std::vector<Conv2dCase> cases = {
      {"3x3 pad 1", {1, 8, 10, 10}, {16, 8, 3, 3}, {{"pads", {1, 1, 1, 1}}}},
      {"3x3 no bias", {1, 8, 10, 10}, {16, 8, 3, 3}, {{"pads", {1, 1, 1, 1}}}, false},
      {"stride 2, odd pads", {2, 4, 11, 9}, {6, 4, 3, 3},
       {{"strides", {2, 2}}, {"pads", {0, 1, 2, 1}}}},
      {"dilation 2", {1, 4, 12, 12}, {5, 4, 3, 3}, {{"dilations", {2, 2}}, {"pads", {2, 2, 2, 2}}}},
      {"groups 2", {1, 8, 9, 9}, {6, 4, 3, 3}, {{"group", 2}, {"pads", {1, 1, 1, 1}}}},
      {"depthwise", {1, 8, 9, 9}, {8, 1, 3, 3}, {{"group", 8}, {"pads", {1, 1, 1, 1}}}},
      {"1x1 pointwise", {2, 16, 7, 7}, {8, 16, 1, 1}, {}},
      {"1x1 stride 2", {1, 16, 7, 7}, {8, 16, 1, 1}, {{"strides", {2, 2}}}},
      {"7x5 stride 3x2", {1, 3, 20, 17}, {4, 3, 7, 5}, {{"strides", {3, 2}}, {"pads", {3, 2, 3, 2}}}},
      {"SAME_UPPER", {1, 4, 10, 9}, {4, 4, 4, 3}, {{"auto_pad", "SAME_UPPER"}, {"strides", {2, 2}}}},
      {"SAME_LOWER", {1, 4, 10, 9}, {4, 4, 4, 3}, {{"auto_pad", "SAME_LOWER"}, {"strides", {2, 2}}}},
      {"VALID", {1, 4, 10, 9}, {4, 4, 3, 3}, {{"auto_pad", "VALID"}}},
      {"ResNet 3x3 64", {1, 64, 28, 28}, {64, 64, 3, 3}, {{"pads", {1, 1, 1, 1}}}},
  };
  return cases;
}

TEST(OpenblasConvTest, Variants) {
  for (const Conv2dCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    ExpectRuleMatches(Conv2dGraph(c, false), "conv");
  }
}

TEST(OpenblasConvTest, ReluEpilogue) {
  for (const Conv2dCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    Graph graph = Conv2dGraph(c, true);
    ExpectRuleMatches(graph, "conv_relu");
    ExpectRuleMatches(graph, "conv");
  }
}

TEST(OpenblasConvTest, OnlyTwoDimensionalConstantWeights) {
  // 1-D and 3-D convolutions are not offered.
  EXPECT_FALSE(
      RuleOffers(Conv2dGraph({"1-D", {1, 4, 16}, {4, 4, 3}, {}}, false), "openblas", "conv"));
  EXPECT_FALSE(RuleOffers(Conv2dGraph({"3-D", {1, 2, 6, 6, 6}, {2, 2, 3, 3, 3}, {}}, false),
                          "openblas", "conv"));
  // Weights that are an input (not packable at Compile) are not offered.
  GraphBuilder b("weight_input");
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 8, 8});
  ValueId w = b.Input("w", DType::kFloat32, {4, 4, 3, 3});
  b.Output(b.Node("Conv", {x, w}));
  StatusOr<Graph> graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok()) << graph.status().ToString();
  EXPECT_FALSE(RuleOffers(*graph, "openblas", "conv"));
}

}  // namespace
}  // namespace collage::testing
