// Conv and ConvTranspose on the oneDNN backend, plain and blocked, with fused post-ops.
#include "backend_test_util.h"

namespace collage::testing {
namespace {

struct ConvCase {
  Shape x;
  Shape w;
  NamedAttributes attrs;
  bool bias;
};

Graph ConvGraph(const ConvCase& c, const std::string& epilogue) {
  GraphBuilder b("conv");
  ValueId x = b.Input("x", DType::kFloat32, c.x);
  ValueId w = b.RandomNormal("w", c.w, 0.3f);
  std::vector<ValueId> in = {x, w};
  if (c.bias) in.push_back(b.RandomNormal("b", {c.w[0]}, 0.3f));
  ValueId y = b.Node("Conv", in, c.attrs, "conv");
  if (epilogue == "relu") y = b.Node("Relu", {y});
  if (epilogue == "add_relu") {
    ValueId r = b.Input("r", DType::kFloat32, b.shape(y));
    y = b.Node("Relu", {b.Node("Add", {r, y})});
  }
  if (epilogue == "clip") y = b.Node("Clip", {y, b.Scalar<float>("lo", 0.0f), b.Scalar<float>("hi", 6.0f)});
  if (epilogue == "hardsigmoid") y = b.Node("HardSigmoid", {y});
  if (epilogue == "silu") y = b.Node("Mul", {y, b.Node("Sigmoid", {y})});
  if (epilogue == "hardswish_decomposed") {  // as exporters write HardSwish before opset 14
    y = b.Node("Mul", {b.Node("HardSigmoid", {y}, {{"alpha", 1.0f / 6.0f}, {"beta", 0.5f}}), y});
  }
  if (epilogue == "hardsigmoid_gate") {  // alpha 0.2: not a HardSwish, two post-ops
    y = b.Node("Mul", {y, b.Node("HardSigmoid", {y})});
  }
  if (epilogue == "add_silu") {  // the gate first: either operand order is a SiLU
    ValueId r = b.Input("r", DType::kFloat32, b.shape(y));
    y = b.Node("Add", {y, r});
    y = b.Node("Mul", {b.Node("Sigmoid", {y}), y});
  }
  b.Output(y);
  return BuildOrFail(std::move(b));
}

TEST(OnednnConv, VariantsMatchReference) {
  const std::vector<ConvCase> cases = {
      {{1, 3, 9, 9}, {8, 3, 3, 3}, {{"pads", {1, 1, 1, 1}}}, true},
      {{2, 16, 8, 8}, {16, 1, 3, 3}, {{"group", 16}, {"pads", {1, 1, 1, 1}}}, true},  // depthwise
      {{1, 8, 10, 10}, {12, 4, 3, 3}, {{"group", 2}, {"strides", {2, 2}}}, false},
      {{1, 16, 11, 11}, {16, 16, 3, 3}, {{"dilations", {2, 2}}, {"pads", {0, 2, 1, 1}}}, true},
      {{1, 16, 7, 9}, {32, 16, 3, 2}, {{"auto_pad", "SAME_UPPER"}, {"strides", {2, 2}}}, true},
      {{1, 16, 7, 9}, {32, 16, 2, 2}, {{"auto_pad", "SAME_LOWER"}}, true},
      {{1, 16, 7, 9}, {32, 16, 3, 3}, {{"auto_pad", "VALID"}, {"strides", {2, 1}}}, true},
      {{1, 16, 20}, {24, 16, 5}, {{"pads", {2, 1}}}, true},                       // 1-D
      {{1, 16, 5, 6, 7}, {16, 16, 3, 3, 3}, {{"pads", {1, 1, 1, 1, 1, 1}}}, true},  // 3-D
  };
  for (const ConvCase& c : cases) {
    for (const std::string epilogue :
         {"", "relu", "add_relu", "clip", "hardsigmoid", "silu", "add_silu", "hardswish_decomposed",
          "hardsigmoid_gate"}) {
      SCOPED_TRACE(ShapeToString(c.x) + " " + epilogue);
      Graph g = ConvGraph(c, epilogue);
      auto offered = CheckAllCandidates(g, "onednn", 1e-4);
      EXPECT_TRUE(Offers(offered, "conv"));
      if (epilogue == "add_relu") {
        EXPECT_TRUE(Offers(offered, "conv_add_act"));
      }
      if (epilogue == "relu" || epilogue == "silu") {
        EXPECT_TRUE(Offers(offered, "conv_act"));
      }
      if (epilogue == "hardswish_decomposed") {  // the convolution, HardSigmoid and Mul as one
        bool whole = false;
        for (const Candidate& cand : CandidatesOf(g, "onednn", "conv_act")) {
          whole = whole || cand.nodes.size() == 3;
        }
        EXPECT_TRUE(whole);
      }
      if (epilogue == "add_silu") {
        EXPECT_TRUE(Offers(offered, "conv_add_act"));
      }
    }
  }
}

TEST(OnednnConv, SiluOfTwoDifferentValuesIsNotAnActivation) {
  // Mul(conv1, Sigmoid(conv2)) gates one convolution by another: no rule may fuse it as the
  // SiLU of either (the pattern matches a convolution in each operand).
  GraphBuilder b("gate");
  ValueId x = b.Input("x", DType::kFloat32, {1, 16, 6, 6});
  ValueId c1 = b.Node("Conv", {x, b.RandomNormal("w1", {16, 16, 1, 1}, 0.3f)});
  ValueId c2 = b.Node("Conv", {x, b.RandomNormal("w2", {16, 16, 1, 1}, 0.3f)});
  b.Output(b.Node("Mul", {c1, b.Node("Sigmoid", {c2})}));
  Graph g = BuildOrFail(std::move(b));
  auto offered = CheckAllCandidates(g, "onednn", 1e-4);
  for (const char* rule : {"conv_act", "conv_act_blocked"}) {
    for (const Candidate& c : CandidatesOf(g, "onednn", rule)) {
      EXPECT_LE(c.nodes.size(), 2) << rule << " fused " << c.nodes.size() << " nodes";
    }
  }
}

TEST(OnednnConv, BlockedVariantOfferedForWideChannels) {
  Graph g = ConvGraph({{1, 32, 8, 8}, {32, 32, 3, 3}, {{"pads", {1, 1, 1, 1}}}, true}, "relu");
  auto offered = CheckAllCandidates(g, "onednn");
  EXPECT_TRUE(Offers(offered, "conv_blocked"));
  EXPECT_TRUE(Offers(offered, "conv_act_blocked"));
}

TEST(OnednnConv, IntegerConvIsNotOffered) {
  GraphBuilder b("conv_int");
  ValueId x = b.Input("x", DType::kFloat32, {1, 4, 6, 6});
  ValueId w = b.Input("w", DType::kFloat32, {4, 4, 3, 3});  // weights not constant
  b.Output(b.Node("Conv", {x, w}));
  Graph g = BuildOrFail(std::move(b));
  for (const Candidate& c : EnumerateCandidates(g, BackendNamed("onednn").rules())) {
    EXPECT_NE(c.rule.rfind("conv", 0), 0u) << c.rule;
  }
}

TEST(OnednnConvTranspose, VariantsMatchReference) {
  struct Case {
    Shape x, w;
    NamedAttributes attrs;
  };
  const std::vector<Case> cases = {
      {{1, 16, 5, 5}, {16, 8, 4, 4}, {{"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}},
      {{1, 8, 4, 6}, {8, 3, 3, 3}, {{"group", 2}, {"strides", {2, 1}}}},
      {{1, 4, 7}, {4, 6, 3}, {{"dilations", {2}}, {"pads", {1, 0}}}},
  };
  for (const Case& c : cases) {
    GraphBuilder b("deconv");
    ValueId x = b.Input("x", DType::kFloat32, c.x);
    ValueId w = b.RandomNormal("w", c.w, 0.3f);
    const int64_t group = c.attrs.size() > 0 && c.attrs[0].name == "group" ? 2 : 1;
    ValueId bias = b.RandomNormal("b", {c.w[1] * group}, 0.3f);
    b.Output(b.Node("Relu", {b.Node("ConvTranspose", {x, w, bias}, c.attrs)}));
    Graph g = BuildOrFail(std::move(b));
    auto offered = CheckAllCandidates(g, "onednn");
    EXPECT_TRUE(Offers(offered, "conv_transpose"));
    EXPECT_TRUE(Offers(offered, "conv_transpose_act"));
  }
}

}  // namespace
}  // namespace collage::testing
