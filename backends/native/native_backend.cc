#include "native_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "collage/native_backend.h"
#include "collage/sdk/errors.h"
#include "collage/sdk/op_registry.h"
#include "native_channels_last_chain.h"
#include "native_concat_batch_norm.h"
#include "native_elementwise_chain.h"
#include "native_node_sequence.h"
#include "ops/kernels/sgemm_variants.h"

namespace collage::native {
namespace {

// Every op of the registry, those of other domains as "domain::op" (how OpTypes lists them
// and Op patterns name them).
StatusOr<Pattern> AnyRegisteredOp() {
  std::vector<std::string> names = OpRegistry::Global().OpTypes();
  if (names.empty()) return Internal("the op registry has no op");
  return Op(std::move(names));
}

bool IsRegisteredKind(const Node& node, std::initializer_list<OpKind> kinds) {
  const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type);
  if (def == nullptr || !def->domain.empty()) return false;
  for (OpKind kind : kinds) {
    if (def->kind == kind) return true;
  }
  return false;
}

class NativeBackend final : public Backend {
 public:
  explicit NativeBackend(Pattern any_op) {
    // One node of any registered op: the reference kernel handles every attribute, dtype
    // and optional input the op's type inference accepted. Native runs the reference kernels
    // themselves, so all its rules meet the NaN/Inf contract: strict mode's fallback.
    rules_.Add(Rule("op", std::move(any_op))
                   .PropagatesNonFinite()
                   .Compiles([](const CompileRequest& request, const Match&) {
                     return CompileNodeByNode(request);
                   }));
    rules_.Add(Fusion("elementwise_chain")
                   .Seed({OpKind::kElementwise, OpKind::kBroadcast})
                   .Grow({OpKind::kElementwise, OpKind::kBroadcast})
                   .MaxOps(8)
                   .Where(IsChainableNode)
                   .PropagatesNonFinite()
                   .Compiles([](const CompileRequest& request) {
                     return CompileElementwiseChain(request);
                   }));
    // Node by node, intermediates in the workspace: one kernel launch for a chain of data
    // movement, not loop fusion.
    rules_.Add(Fusion("injective_chain")
                   .Seed({OpKind::kInjective})
                   .Grow({OpKind::kInjective, OpKind::kElementwise, OpKind::kBroadcast})
                   .MaxOps(8)
                   .Where([](const Graph&, const Node& node) {
                     return IsRegisteredKind(node, {OpKind::kInjective, OpKind::kElementwise,
                                                    OpKind::kBroadcast});
                   })
                   .PropagatesNonFinite()
                   .Compiles(CompileNodeByNode));
    // A channel Concat and the BatchNormalization (and activation) reading it, in one pass.
    rules_.Add(Rule("concat_batch_norm", ConcatBatchNormPattern())
                   .Where([](const Match& m) { return ConcatBatchNormOk(m, false); })
                   .PropagatesNonFinite()
                   .Compiles([](const CompileRequest& request, const Match& match) {
                     return CompileConcatBatchNorm(request, match, false);
                   }));
    // The elementwise chain on channels-last images, single ops included: between two
    // kernels of a library that keeps them channels-last it saves two layout conversions.
    // Declared last, so native alone (ties go to the first rule) stays plain.
    rules_.Add(Fusion("elementwise_chain_nhwc")
                   .Seed({OpKind::kElementwise, OpKind::kBroadcast})
                   .Grow({OpKind::kElementwise, OpKind::kBroadcast})
                   .MinOps(1)
                   .MaxOps(8)
                   .Where(IsChannelsLastChainableNode)
                   .PropagatesNonFinite()
                   .Compiles(CompileChannelsLastChain));
    rules_.Add(Rule("concat_batch_norm_nhwc", ConcatBatchNormPattern())
                   .Where([](const Match& m) { return ConcatBatchNormOk(m, true); })
                   .PropagatesNonFinite()
                   .Compiles([](const CompileRequest& request, const Match& match) {
                     return CompileConcatBatchNorm(request, match, true);
                   }));
  }

  std::string name() const override { return kNativeBackend; }
  std::string version() const override {
    return fmt::format("collage {} {} gemm, {} elsewhere", kNativeKernelVersion, NativeIsa(),
                       NativeBaselineIsa());
  }
  const RuleSet& rules() const override { return rules_; }

 private:
  RuleSet rules_;
};

}  // namespace

const char* NativeIsa() { return ActiveSgemmVariant().name; }

const char* NativeBaselineIsa() { return CompiledSgemmVariants().back().name; }

StatusOr<std::unique_ptr<Backend>> MakeNativeBackend() {
  COLLAGE_ASSIGN_OR_RETURN(Pattern any_op, AnyRegisteredOp());
  return std::unique_ptr<Backend>(new NativeBackend(std::move(any_op)));
}

}  // namespace collage::native

namespace collage {

Status RegisterNativeBackend(BackendRegistry& registry) {
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, native::MakeNativeBackend());
  return registry.Register(std::move(backend));
}

}  // namespace collage
