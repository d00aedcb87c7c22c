// Backend::Compile hands a group to the compile function of the rule or fusion that offered
// it, with the rule's match of exactly those nodes; a group the named rule does not offer is
// refused, and registration refuses a rule set whose entries cannot be compiled.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "collage/sdk/backend.h"
#include "collage/sdk/errors.h"
#include "ops/graph_builder.h"

namespace collage {
namespace {

// A kernel that only says which compile function made it and what match that function got.
class TaggedKernel : public Kernel {
 public:
  TaggedKernel(std::string tag, std::vector<NodeId> op_nodes, const CompileRequest& request)
      : tag_(std::move(tag)), op_nodes_(std::move(op_nodes)) {
    input_layouts_.assign(request.inputs.size(), Layout::Plain());
    output_layouts_.assign(request.outputs.size(), Layout::Plain());
  }
  Status Run(const KernelBuffers&) const override { return Unsupported("not for running"); }
  const std::string& tag() const { return tag_; }
  const std::vector<NodeId>& op_nodes() const { return op_nodes_; }

 private:
  std::string tag_;
  std::vector<NodeId> op_nodes_;
};

RuleCompiler Tagged(const std::string& tag) {
  return [tag](const CompileRequest& request,
               const Match& match) -> StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new TaggedKernel(tag, match.op_nodes, request));
  };
}

// Two rules over one pattern (variants, as a library's layouts would be), one over a
// larger pattern, and a fusion of elementwise ops.
class VariantsBackend : public Backend {
 public:
  VariantsBackend() {
    const Pattern add_relu = Op("Relu")(Op("Add")(Any(), Any()));
    rules_.Add(Rule("add_relu", add_relu).Compiles(Tagged("first variant")));
    rules_.Add(Rule("add_relu_other", add_relu).Compiles(Tagged("second variant")));
    rules_.Add(Rule("add", Op("Add")(Any(), Any())).Compiles(Tagged("add alone")));
    rules_.Add(
        Fusion("chain")
            .Seed({OpKind::kElementwise, OpKind::kBroadcast})
            .Grow({OpKind::kElementwise})
            .MaxOps(2)
            .Compiles([](const CompileRequest& request) -> StatusOr<std::unique_ptr<Kernel>> {
              return std::unique_ptr<Kernel>(new TaggedKernel("chain", {}, request));
            }));
  }
  std::string name() const override { return "test_variants"; }
  std::string version() const override { return "1"; }
  const RuleSet& rules() const override { return rules_; }

 private:
  RuleSet rules_;
};

// x, y → Add (node 0) → Relu (node 1) → Sigmoid (node 2) → out
Graph AddReluSigmoid() {
  GraphBuilder b("add_relu_sigmoid");
  ValueId x = b.Input("x", DType::kFloat32, {4});
  ValueId y = b.Input("y", DType::kFloat32, {4});
  ValueId a = b.Node("Add", {x, y}, {}, "add");
  ValueId r = b.Node("Relu", {a}, {}, "relu");
  b.Output(b.Node("Sigmoid", {r}, {}, "sigmoid"), "out");
  auto graph = std::move(b).Build();
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(*graph) : Graph();
}

StatusOr<std::unique_ptr<Kernel>> CompileNodes(const Backend& backend, const Graph& g,
                                               std::vector<NodeId> nodes, const std::string& rule) {
  return backend.Compile(CompileRequest::For(g, SubGraph(g.num_nodes(), nodes), rule, 1));
}

const TaggedKernel& AsTagged(const std::unique_ptr<Kernel>& kernel) {
  return dynamic_cast<const TaggedKernel&>(*kernel);
}

TEST(CompileDispatchTest, EachRuleCompilesByItsOwnFunctionWithItsMatch) {
  VariantsBackend backend;
  Graph g = AddReluSigmoid();
  auto first = CompileNodes(backend, g, {0, 1}, "add_relu");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(AsTagged(*first).tag(), "first variant");
  // The match names the pattern's ops in pre-order: the Relu (root), then the Add.
  EXPECT_EQ(AsTagged(*first).op_nodes(), (std::vector<NodeId>{1, 0}));
  auto second = CompileNodes(backend, g, {0, 1}, "add_relu_other");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(AsTagged(*second).tag(), "second variant");
  auto chain = CompileNodes(backend, g, {1, 2}, "chain");
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  EXPECT_EQ(AsTagged(*chain).tag(), "chain");
}

TEST(CompileDispatchTest, AGroupTheNamedRuleDoesNotOfferIsRefused) {
  VariantsBackend backend;
  Graph g = AddReluSigmoid();
  // The pattern rooted at the Relu covers the Add too: the Relu alone is not its group.
  auto relu_alone = CompileNodes(backend, g, {1}, "add_relu");
  ASSERT_FALSE(relu_alone.ok());
  EXPECT_NE(relu_alone.status().message().find("rule 'add_relu' does not offer this group"),
            std::string::npos)
      << relu_alone.status().ToString();
  // A rule offering the Add alone is not asked to compile the Add with its Relu.
  EXPECT_FALSE(CompileNodes(backend, g, {0, 1}, "add").ok());
  // The fusion admits two elementwise ops at most, and grows through elementwise ops only.
  auto three = CompileNodes(backend, g, {0, 1, 2}, "chain");
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.status().message().find("fusion 'chain' does not admit this group"),
            std::string::npos)
      << three.status().ToString();
  auto unknown = CompileNodes(backend, g, {0}, "no_such_rule");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("has no rule or fusion 'no_such_rule'"),
            std::string::npos)
      << unknown.status().ToString();
  // A node set sized for another graph.
  auto other_graph =
      backend.Compile(CompileRequest::For(g, SubGraph(g.num_nodes() + 1, {0}), "add", 1));
  EXPECT_FALSE(other_graph.ok());
  EXPECT_FALSE(backend.Compile(CompileRequest{}).ok());
}

TEST(CompileDispatchTest, MatchGroupFindsTheMatchThatOfferedTheGroup) {
  Graph g = AddReluSigmoid();
  Rule rule("add_relu", Op("Relu")(Op("Add")(Any(), Any())));
  std::vector<Match> all = rule.FindAll(g);
  ASSERT_EQ(all.size(), 1u);
  std::optional<Match> again = rule.MatchGroup(g, SubGraph(g.num_nodes(), {0, 1}));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->root, all[0].root);
  EXPECT_EQ(again->op_nodes, all[0].op_nodes);
  EXPECT_EQ(again->captures, all[0].captures);
  EXPECT_FALSE(rule.MatchGroup(g, SubGraph(g.num_nodes(), {1, 2})).has_value());
  EXPECT_FALSE(rule.MatchGroup(g, SubGraph(g.num_nodes())).has_value());
}

class IncompleteBackend : public Backend {
 public:
  explicit IncompleteBackend(RuleSet rules) : rules_(std::move(rules)) {}
  std::string name() const override { return "test_incomplete"; }
  std::string version() const override { return "1"; }
  const RuleSet& rules() const override { return rules_; }

 private:
  RuleSet rules_;
};

TEST(CompileDispatchTest, RegistrationRefusesRulesThatCannotCompile) {
  BackendRegistry registry;
  RuleSet without;
  without.Add(Rule("relu", Op("Relu")));
  Status status = registry.Register(std::make_unique<IncompleteBackend>(std::move(without)));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("backend 'test_incomplete': rule 'relu' has no compile function"),
            std::string::npos)
      << status.ToString();
  RuleSet twice;
  twice.Add(Rule("relu", Op("Relu")).Compiles(Tagged("a")));
  twice.Add(Fusion("relu").Compiles([](const CompileRequest&) -> StatusOr<std::unique_ptr<Kernel>> {
    return Unsupported("never");
  }));
  status = registry.Register(std::make_unique<IncompleteBackend>(std::move(twice)));
  EXPECT_NE(status.message().find("two rules or fusions are named 'relu'"), std::string::npos)
      << status.ToString();
  EXPECT_EQ(registry.size(), 0u);
}

}  // namespace
}  // namespace collage
