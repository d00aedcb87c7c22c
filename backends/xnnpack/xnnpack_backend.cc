// Registration of the two XNNPACK backends:
//   xnnpack        operator API, one op (plus a fused clamp) per kernel; conv and pooling
//                  in channels-last, FC and softmax plain, elementwise ops in both.
//   xnnpack_graph  subgraph API, a region of ops compiled into one xnn_runtime.
// Each rule compiles by CompileOperatorGroup (its channels-last variants with
// channels_last set) or CompileRegion (xnnpack_rules.cc). Kernels run on the pthreadpool of
// the execution context they were compiled in (ThreadPoolFor, xnnpack_util.h), whose work
// runs on the OpenMP team every other library shares (openmp_pthreadpool.cc).
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

// The match names the group's ops in pre-order (xnnpack_rules.cc): an optional clamp (the
// root when present), for MatMul an optional bias Add, then the main op, innermost and last.
StatusOr<OpGroup> ResolveGroup(const CompileRequest& request, const Match& match,
                               bool channels_last) {
  const Graph& graph = *request.graph;
  if (match.op_nodes.empty() || request.outputs.size() != 1) {
    return InvalidArgument("rule '{}': expected one op with optional bias and clamp", request.rule);
  }
  OpGroup group;
  group.graph = &graph;
  group.main = &match.node(match.op_nodes.size() - 1);
  group.output = request.outputs[0];
  group.channels_last = channels_last;
  size_t epilogue = match.op_nodes.size() - 1;  // ops before the main one, in pre-order
  if (epilogue > 0 && group.main->op_type == "MatMul" &&
      match.node(epilogue - 1).op_type == "Add") {
    group.bias_add = &match.node(epilogue - 1);
    --epilogue;
  }
  if (epilogue > 1)
    return InvalidArgument("rule '{}': more than one op after the main one", request.rule);
  if (epilogue == 1) {
    const Node& clamp = match.node(0);
    if (!IsClamp(clamp)) {
      return InvalidArgument("rule '{}': {} '{}' is not a clamp", request.rule, clamp.op_type,
                             clamp.name);
    }
    COLLAGE_ASSIGN_OR_RETURN(group.clamp, AnalyzeClamp(graph, clamp));
  }
  if (group.output != match.root_node().outputs[0]) {
    return InvalidArgument("rule '{}': the group's output is not its last op's", request.rule);
  }
  return group;
}

}  // namespace

KernelOr CompileOperatorGroup(const CompileRequest& request, const Match& match,
                              bool channels_last) {
  COLLAGE_RETURN_IF_ERROR(EnsureInitialized());
  COLLAGE_ASSIGN_OR_RETURN(OpGroup group, ResolveGroup(request, match, channels_last));
  const PoolHandle pool = ThreadPoolFor(request);
  const std::string& op = group.main->op_type;
  if (op == "Conv" || op == "ConvTranspose") return CompileConv(group, pool);
  if (op == "Gemm" || op == "MatMul") return CompileFc(group, pool);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") {
    return CompilePool(group, pool);
  }
  if (op == "Softmax") return CompileSoftmax(group, pool);
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  if (kBinary.count(op) != 0) return CompileBinary(group, request.inputs, pool);
  if (match.op_nodes.size() == 1) return CompileUnary(group, pool);
  return Unsupported("xnnpack: no kernel for {} '{}'", op, group.main->name);
}

KernelOr CompileRegion(const CompileRequest& request) {
  COLLAGE_RETURN_IF_ERROR(EnsureInitialized());
  return CompileSubgraph(request, ThreadPoolFor(request));
}

namespace {

class OperatorBackend final : public Backend {
 public:
  OperatorBackend() : rules_(MakeOperatorRules()), version_(LibraryVersion()) {}

  std::string name() const override { return "xnnpack"; }
  std::string version() const override { return version_; }
  const RuleSet& rules() const override { return rules_; }

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
