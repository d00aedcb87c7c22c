// A rule or fusion offers its groups in the precisions it declares, and only those the caller
// asks for; Backend::Compile hands the request's precision to the compile function and refuses
// a precision the rule does not declare.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"
#include "ops/graph_builder.h"

namespace collage {
namespace {

// A kernel that records the precision it was compiled in.
class PrecisionKernel : public Kernel {
 public:
  explicit PrecisionKernel(const CompileRequest& request) : precision_(request.precision) {
    input_layouts_.assign(request.inputs.size(), Layout::Plain());
    output_layouts_.assign(request.outputs.size(), Layout::Plain());
  }
  Status Run(const KernelBuffers&) const override { return Unsupported("not for running"); }
  Precision precision() const { return precision_; }

 private:
  Precision precision_;
};

StatusOr<std::unique_ptr<Kernel>> MakeKernel(const CompileRequest& request) {
  return std::unique_ptr<Kernel>(new PrecisionKernel(request));
}

// "matmul" in float32 and bf16; "relu" in float32 only; "chain" (fusion) in bf16 only.
class MixedPrecisionBackend : public Backend {
 public:
  MixedPrecisionBackend() {
    rules_.Add(Rule("matmul", Op("MatMul")(Any(), Const()))
                   .Precisions({Precision::kBfloat16, Precision::kFloat32, Precision::kBfloat16})
                   .Compiles(MakeKernel));
    rules_.Add(Rule("relu", Op("Relu")(Any())).Compiles(MakeKernel));
    rules_.Add(Fusion("chain")
                   .Seed({OpKind::kOutEWiseFusable, OpKind::kOpaque})
                   .Grow({OpKind::kElementwise})
                   .MaxOps(2)
                   .Precisions({Precision::kBfloat16})
                   .Compiles(MakeKernel));
  }
  std::string name() const override { return "mixed"; }
  std::string version() const override { return "1"; }
  const RuleSet& rules() const override { return rules_; }

 private:
  RuleSet rules_;
};

// x → MatMul (node 0, constant weight) → Relu (node 1) → out
Graph MatMulRelu() {
  GraphBuilder b("matmul_relu");
  ValueId x = b.Input("x", DType::kFloat32, {2, 4});
  ValueId w = b.Constant("w", Shape{4, 3}, std::vector<float>(12, 0.5f));
  ValueId m = b.Node("MatMul", {x, w}, {}, "matmul");
  b.Output(b.Node("Relu", {m}, {}, "relu"), "out");
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(*graph) : Graph();
}

std::vector<std::string> Offers(const std::vector<Candidate>& candidates) {
  std::vector<std::string> offers;
  for (const Candidate& c : candidates) {
    offers.push_back(c.rule + " " + PrecisionName(c.precision) + " " + c.nodes.ToString());
  }
  return offers;
}

TEST(PrecisionOfferTest, GroupsAreOfferedInTheDeclaredPrecisionsTheCallerAsksFor) {
  MixedPrecisionBackend backend;
  Graph g = MatMulRelu();
  // Float32 alone by default: the bf16-only fusion offers nothing.
  EXPECT_EQ(Offers(EnumerateCandidates(g, backend.rules())),
            (std::vector<std::string>{"matmul fp32 {0}", "relu fp32 {1}"}));
  // Both: each declared precision once (the repeated bf16 counts once), float32 first.
  EXPECT_EQ(Offers(EnumerateCandidates(g, backend.rules(), false,
                                       {Precision::kFloat32, Precision::kBfloat16})),
            (std::vector<std::string>{"matmul fp32 {0}", "matmul bf16 {0}", "relu fp32 {1}",
                                      "chain bf16 {0,1}"}));
  EXPECT_EQ(backend.rules().FindRule("matmul")->precisions(),
            (std::vector<Precision>{Precision::kFloat32, Precision::kBfloat16}));
  // `collage backends -v` shows them.
  EXPECT_NE(backend.rules().FindRule("matmul")->Describe().find(", in fp32 and bf16"),
            std::string::npos);
  EXPECT_EQ(backend.rules().FindRule("relu")->Describe().find(", in"), std::string::npos);
  EXPECT_NE(backend.rules().FindFusion("chain")->Describe().find(", in bf16"), std::string::npos);
}

TEST(PrecisionOfferTest, CompileGetsTheRequestedPrecisionAndRefusesAnUndeclaredOne) {
  MixedPrecisionBackend backend;
  Graph g = MatMulRelu();
  CompileRequest request = CompileRequest::For(g, SubGraph(g.num_nodes(), {0}), "matmul", 1);
  request.precision = Precision::kBfloat16;
  auto bf16 = backend.Compile(request);
  ASSERT_TRUE(bf16.ok()) << bf16.status().ToString();
  EXPECT_EQ(dynamic_cast<const PrecisionKernel&>(**bf16).precision(), Precision::kBfloat16);

  CompileRequest relu = CompileRequest::For(g, SubGraph(g.num_nodes(), {1}), "relu", 1);
  relu.precision = Precision::kBfloat16;
  auto refused = backend.Compile(relu);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("rule 'relu' does not compute in bf16"),
            std::string::npos)
      << refused.status().ToString();

  CompileRequest chain = CompileRequest::For(g, SubGraph(g.num_nodes(), {0, 1}), "chain", 1);
  auto float32_chain = backend.Compile(chain);
  ASSERT_FALSE(float32_chain.ok());
  EXPECT_NE(float32_chain.status().message().find("fusion 'chain' does not compute in fp32"),
            std::string::npos)
      << float32_chain.status().ToString();
}

TEST(PrecisionOfferTest, AConstraintOfOnePrecisionNarrowsOnlyItsOffers) {
  RuleSet rules;
  // Offered in bf16 only where the product's reduction is at least 8 long.
  rules.Add(Rule("matmul", Op("MatMul")(Any(), Const()))
                .Precisions({Precision::kFloat32, Precision::kBfloat16})
                .WhereIn(Precision::kBfloat16,
                         [](const Match& m) { return m.capture_type(0).shape.back() >= 8; })
                .Compiles(MakeKernel));
  Graph g = MatMulRelu();  // K = 4
  EXPECT_EQ(
      Offers(EnumerateCandidates(g, rules, false, {Precision::kFloat32, Precision::kBfloat16})),
      (std::vector<std::string>{"matmul fp32 {0}"}));
  const Rule& rule = rules.rules().front();
  std::optional<Match> match = rule.MatchGroup(g, SubGraph(g.num_nodes(), {0}));
  ASSERT_TRUE(match.has_value());
  EXPECT_TRUE(rule.OffersIn(*match, Precision::kFloat32));
  EXPECT_FALSE(rule.OffersIn(*match, Precision::kBfloat16));
}

TEST(PrecisionOfferTest, PrecisionNamesRoundTrip) {
  for (Precision p : {Precision::kFloat32, Precision::kBfloat16}) {
    EXPECT_EQ(PrecisionNamed(PrecisionName(p)), p);
  }
  EXPECT_FALSE(PrecisionNamed("int8").has_value());
  EXPECT_FALSE(PrecisionNamed("").has_value());
  EXPECT_GT(GroupErrorBound(Precision::kBfloat16), 0.0);
}

}  // namespace
}  // namespace collage
