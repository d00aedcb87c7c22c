#include "xnnpack_rules.h"

#include <functional>
#include <string>
#include <utility>

#include "xnnpack_analysis.h"
#include "xnnpack_kernels.h"

namespace collage::xnnpack {

namespace {

using NodeCheck = std::function<bool(const Graph&, const Node&)>;
// Checks the ops of a match from op_nodes[first] on (first = 1 when a clamp is the root).
using GroupCheck = std::function<bool(const Match&, size_t first)>;

// How a rule's groups compile: one operator, its elementwise ops channels-last or not.
RuleCompiler OperatorCompiler(bool channels_last) {
  return [channels_last](const CompileRequest& request, const Match& match) {
    return CompileOperatorGroup(request, match, channels_last);
  };
}

// Adds `name` (the main ops alone), `name_relu` and `name_clip` (their output clamped by a
// Relu / a Clip with constant bounds, fused as XNNPACK's output range). Pre-order puts the
// clamp (when present) first.
void AddWithClamps(RuleSet& rules, const std::string& name, const Pattern& main,
                   const GroupCheck& main_ok) {
  auto check_clamp = [](const Match& m) { return AnalyzeClamp(*m.graph, m.node(0)).ok(); };
  rules.Add(Rule(name, main)
                .Where([main_ok](const Match& m) { return main_ok(m, 0); })
                .Compiles(OperatorCompiler(false)));
  auto clamped_ok = [main_ok](const Match& m) { return main_ok(m, 1); };
  rules.Add(Rule(name + "_relu", Op("Relu")(main))
                .Where(clamped_ok)
                .Where(check_clamp)
                .Compiles(OperatorCompiler(false)));
  rules.Add(Rule(name + "_clip", Op("Clip")(main, Optional(Const()), Optional(Const())))
                .Where(clamped_ok)
                .Where(check_clamp)
                .Compiles(OperatorCompiler(false)));
}

// A single main op: the last op node.
void AddWithClamps(RuleSet& rules, const std::string& name, const Pattern& main,
                   const NodeCheck& main_ok) {
  AddWithClamps(rules, name, main, GroupCheck([main_ok](const Match& m, size_t) {
                  return main_ok(*m.graph, m.graph->node(m.op_nodes.back()));
                }));
}

// MatMul + bias Add: op_nodes[first] is the Add, then exactly one MatMul.
bool MatMulBiasOk(const Match& m, size_t first) {
  if (m.op_nodes.size() != first + 2) return false;
  const Node& add = m.node(first);
  const Node& matmul = m.node(first + 1);
  StatusOr<FcSpec> spec = AnalyzeFc(*m.graph, matmul);
  return spec.ok() && AnalyzeBiasAdd(*m.graph, add, matmul, *spec).ok();
}

template <typename F>
NodeCheck Ok(F analyze) {
  return [analyze](const Graph& graph, const Node& node) { return analyze(graph, node).ok(); };
}

}  // namespace

RuleSet MakeOperatorRules() {
  RuleSet rules;
  // Elementwise ops in channels-last, between this backend's NHWC convolutions.
  RuleSet channels_last;
  AddWithClamps(rules, "conv", Op("Conv")(Any(), Const(), Optional(Const())), Ok(AnalyzeConv));
  AddWithClamps(rules, "conv_transpose", Op("ConvTranspose")(Any(), Const(), Optional(Const())),
                Ok(AnalyzeConv));
  AddWithClamps(rules, "gemm", Op("Gemm")(Any(), Const(), Optional(Const())), Ok(AnalyzeFc));
  AddWithClamps(rules, "matmul", Op("MatMul")(Any(), Const()), Ok(AnalyzeFc));
  // MatMul + Add(bias) in either operand order, as exporters write nn.Linear on 3-D input.
  const Pattern matmul = Op("MatMul")(Any(), Const());
  AddWithClamps(rules, "matmul_bias", Op("Add")(Alt({matmul, Const()}), Alt({Const(), matmul})),
                GroupCheck(MatMulBiasOk));
  auto pool_ok = [](const Match& m) { return AnalyzePool(*m.graph, m.root_node()).ok(); };
  for (const auto& [name, op] : {std::pair<const char*, const char*>{"max_pool", "MaxPool"},
                                 {"average_pool", "AveragePool"},
                                 {"global_average_pool", "GlobalAveragePool"}}) {
    rules.Add(Rule(name, Op(op)).Where(pool_ok).Compiles(OperatorCompiler(false)));
  }

  const Pattern binary = Op({"Add", "Sub", "Mul", "Div", "Max", "Min"})(Any(), Any());
  // A fused clamp needs an xnn op with an output range (not Max/Min).
  auto binary_ok = [](const Graph& graph, const Node& node) {
    StatusOr<BinarySpec> spec = AnalyzeBinary(graph, node);
    return spec.ok();
  };
  rules.Add(Rule("binary", binary)
                .Where([binary_ok](const Match& m) { return binary_ok(*m.graph, m.root_node()); })
                .Compiles(OperatorCompiler(false)));
  auto binary_clamp_ok = [](const Graph& graph, const Node& node) {
    StatusOr<BinarySpec> spec = AnalyzeBinary(graph, node);
    return spec.ok() && spec->clamps;
  };
  auto nhwc_ok = [](const Graph& graph, const Node& node) {
    return BinaryFitsChannelsLast(graph, node);
  };
  auto nhwc_clamp_ok = [binary_clamp_ok](const Graph& graph, const Node& node) {
    return binary_clamp_ok(graph, node) && BinaryFitsChannelsLast(graph, node);
  };
  channels_last.Add(
      Rule("binary_nhwc", binary)
          .Where([nhwc_ok](const Match& m) { return nhwc_ok(*m.graph, m.root_node()); })
          .Compiles(OperatorCompiler(true)));
  for (const char* act : {"relu", "clip"}) {
    const bool relu = std::string(act) == "relu";
    const Pattern fused =
        relu ? Op("Relu")(binary) : Op("Clip")(binary, Optional(Const()), Optional(Const()));
    auto clamp_ok = [](const Match& m) { return AnalyzeClamp(*m.graph, m.node(0)).ok(); };
    rules.Add(Rule(std::string("binary_") + act, fused)
                  .Where([binary_clamp_ok](const Match& m) {
                    return binary_clamp_ok(*m.graph, m.node(1));
                  })
                  .Where(clamp_ok)
                  .Compiles(OperatorCompiler(false)));
    channels_last.Add(
        Rule(std::string("binary_") + act + "_nhwc", fused)
            .Where([nhwc_clamp_ok](const Match& m) { return nhwc_clamp_ok(*m.graph, m.node(1)); })
            .Where(clamp_ok)
            .Compiles(OperatorCompiler(true)));
  }

  const Pattern unary = Op({"Relu", "Clip", "Sigmoid", "HardSwish", "LeakyRelu", "Elu", "Abs",
                            "Neg", "Sqrt", "Floor", "Ceil", "Round"});
  rules.Add(Rule("unary", unary)
                .Where([](const Match& m) { return AnalyzeUnary(*m.graph, m.root_node()).ok(); })
                .Compiles(OperatorCompiler(false)));
  channels_last.Add(Rule("unary_nhwc", unary)
                        .Where([](const Match& m) {
                          const size_t rank = m.output_type().shape.size();
                          return rank == 4 && AnalyzeUnary(*m.graph, m.root_node()).ok();
                        })
                        .Compiles(OperatorCompiler(true)));
  rules.Add(Rule("softmax", Op("Softmax"))
                .Where([](const Match& m) { return AnalyzeSoftmax(*m.graph, m.root_node()).ok(); })
                .Compiles(OperatorCompiler(false)));
  AddInt8ConvRules(rules);
  // The channels-last variants go first: single-backend runs break ties by declaration
  // order, and between this backend's NHWC convolutions they need no conversion.
  for (const Rule& rule : rules.rules()) channels_last.Add(rule);
  return channels_last;
}

RuleSet MakeSubgraphRules() {
  RuleSet rules;
  const std::vector<OpKind> all = {OpKind::kElementwise,     OpKind::kBroadcast,
                                   OpKind::kInjective,       OpKind::kReduction,
                                   OpKind::kOutEWiseFusable, OpKind::kOpaque};
  rules.Add(Fusion("region")
                .Seed(all)
                .Grow(all)
                .MaxOps(kMaxRegionOps)
                .Where(SubgraphSupports)
                .Compiles(CompileRegion));
  rules.Add(Rule("single", Op({"Conv",
                               "ConvTranspose",
                               "Gemm",
                               "MatMul",
                               "MaxPool",
                               "AveragePool",
                               "GlobalAveragePool",
                               "Add",
                               "Sub",
                               "Mul",
                               "Div",
                               "Max",
                               "Min",
                               "Relu",
                               "Clip",
                               "Sigmoid",
                               "HardSwish",
                               "LeakyRelu",
                               "Elu",
                               "Abs",
                               "Neg",
                               "Sqrt",
                               "Floor",
                               "Ceil",
                               "Round",
                               "Softmax"}))
                .Where([](const Match& m) { return SubgraphSupports(*m.graph, m.root_node()); })
                .Compiles(CompileRegion));
  return rules;
}

}  // namespace collage::xnnpack
