// Registration of the two XNNPACK backends:
//   xnnpack        operator API, one op (plus a fused clamp) per kernel; conv and pooling
//                  in channels-last, FC and softmax plain, elementwise ops in both.
//   xnnpack_graph  subgraph API, a region of ops compiled into one xnn_runtime.
// Kernels run on the shared pthreadpool of the thread count they were compiled for
// (ThreadPoolFor, xnnpack_util.h); nothing resizes a pool after that.
#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "collage/sdk/errors.h"
#include "xnnpack_kernels.h"
#include "xnnpack_rules.h"

namespace collage {

namespace xnnpack {

namespace {

bool IsClamp(const Node& node) { return node.op_type == "Relu" || node.op_type == "Clip"; }

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The group is a main node, then (MatMul only) a bias Add reading it, then a Relu/Clip
// reading the previous one; each intermediate value is read only inside the group (the
// rule matcher guarantees it).
StatusOr<OpGroup> ResolveGroup(const CompileRequest& request) {
  const Graph& graph = *request.graph;
  std::vector<NodeId> nodes = request.node_ids();
  if (nodes.empty() || nodes.size() > 3 || request.outputs.size() != 1) {
    return InvalidArgument("rule '{}': expected one op with optional bias and clamp", request.rule);
  }
  OpGroup group;
  group.graph = &graph;
  group.main = &graph.node(nodes[0]);
  group.output = request.outputs[0];
  group.channels_last = EndsWith(request.rule, "_nhwc");
  ValueId last = group.main->outputs.empty() ? kNoValue : group.main->outputs[0];
  for (size_t i = 1; i < nodes.size(); ++i) {
    const Node& node = graph.node(nodes[i]);
    const bool reads_last =
        std::find(node.inputs.begin(), node.inputs.end(), last) != node.inputs.end();
    const bool is_last = i + 1 == nodes.size();
    if (reads_last && IsClamp(node) && is_last && node.inputs[0] == last) {
      COLLAGE_ASSIGN_OR_RETURN(group.clamp, AnalyzeClamp(graph, node));
    } else if (reads_last && i == 1 && node.op_type == "Add" && group.main->op_type == "MatMul") {
      group.bias_add = &node;
    } else {
      return InvalidArgument("rule '{}': {} '{}' is neither a bias Add nor a final clamp",
                             request.rule, node.op_type, node.name);
    }
    last = node.outputs[0];
  }
  if (group.output != last) {
    return InvalidArgument("rule '{}': the group's output is not its last op's", request.rule);
  }
  return group;
}

class OperatorBackend final : public Backend {
 public:
  OperatorBackend() : rules_(MakeOperatorRules()), version_(LibraryVersion()) {}

  std::string name() const override { return "xnnpack"; }
  std::string version() const override { return version_; }
  const RuleSet& rules() const override { return rules_; }

  StatusOr<std::unique_ptr<Kernel>> Compile(const CompileRequest& request) const override {
    COLLAGE_RETURN_IF_ERROR(EnsureInitialized());
    COLLAGE_ASSIGN_OR_RETURN(OpGroup group, ResolveGroup(request));
    pthreadpool_t pool = ThreadPoolFor(request.num_threads);
    const std::string& op = group.main->op_type;
    if (op == "Conv" || op == "ConvTranspose") return CompileConv(group, pool);
    if (op == "Gemm" || op == "MatMul") return CompileFc(group, pool);
    if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") {
      return CompilePool(group, pool);
    }
    if (op == "Softmax") return CompileSoftmax(group, pool);
    static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
    if (kBinary.count(op) != 0) return CompileBinary(group, request.inputs, pool);
    if (request.node_ids().size() == 1) return CompileUnary(group, pool);
    return Unsupported("xnnpack: no kernel for {} '{}'", op, group.main->name);
  }

 private:
  RuleSet rules_;
  std::string version_;
};

class SubgraphBackend final : public Backend {
 public:
  SubgraphBackend() : rules_(MakeSubgraphRules()), version_(LibraryVersion()) {}

  std::string name() const override { return "xnnpack_graph"; }
  std::string version() const override { return version_; }
  bool graph_level() const override { return true; }
  const RuleSet& rules() const override { return rules_; }

  StatusOr<std::unique_ptr<Kernel>> Compile(const CompileRequest& request) const override {
    COLLAGE_RETURN_IF_ERROR(EnsureInitialized());
    return CompileSubgraph(request, ThreadPoolFor(request.num_threads));
  }

 private:
  RuleSet rules_;
  std::string version_;
};

}  // namespace

}  // namespace xnnpack

Status RegisterXnnpackBackends(BackendRegistry& registry) {
  COLLAGE_RETURN_IF_ERROR(registry.Register(std::make_unique<xnnpack::OperatorBackend>()));
  return registry.Register(std::make_unique<xnnpack::SubgraphBackend>());
}

}  // namespace collage
