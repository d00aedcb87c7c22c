#include "collage/sdk/region_engine_rules.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

namespace collage {

RuleSet MakeRegionEngineRules(const NodePredicate& supported, const FusionCompiler& compile,
                              const std::vector<Precision>& reduced) {
  const std::vector<OpKind> all = {OpKind::kElementwise,     OpKind::kBroadcast,
                                   OpKind::kInjective,       OpKind::kReduction,
                                   OpKind::kOutEWiseFusable, OpKind::kOpaque};
  std::vector<Precision> whole_precisions = reduced;
  whole_precisions.push_back(Precision::kFloat32);
  RuleSet rules;
  rules.Add(
      Fusion("single").Seed(all).Grow(all).MinOps(1).MaxOps(1).Where(supported).Compiles(compile));
  rules.Add(Fusion("whole")
                .Seed(all)
                .Grow(all)
                .MinOps(2)
                .MaxOps(std::numeric_limits<int>::max())
                .MaximalRegions()
                .Where(supported)
                .Precisions(whole_precisions)
                .Compiles(compile));
  rules.Add(Fusion("span")
                .Seed(all)
                .Grow(all)
                .MinOps(2)
                .MaxOps(std::numeric_limits<int>::max())
                .NarrowSpans(kEngineSpanParts)
                .Where(supported)
                .Precisions(whole_precisions)
                .Compiles(compile));
  if (reduced.empty()) return rules;
  static const std::set<std::string> kProducts = {"MatMul", "Gemm", "Conv", "ConvTranspose"};
  rules.Add(Fusion("single_product")
                .Seed(all)
                .Grow(all)
                .MinOps(1)
                .MaxOps(1)
                .Where(supported)
                .Where([](const Graph&, const Node& node) {
                  return kProducts.count(node.op_type) != 0 &&
                         (node.domain.empty() || node.domain == "ai.onnx");
                })
                .Precisions(reduced)
                .Compiles(compile));
  return rules;
}

bool IsOnnxNodeOverDTypes(const Graph& graph, const Node& node, const std::vector<DType>& dtypes) {
  if (!node.domain.empty() && node.domain != "ai.onnx") return false;
  return IsNodeOverDTypes(graph, node, dtypes);
}

bool IsNodeOverDTypes(const Graph& graph, const Node& node, const std::vector<DType>& dtypes) {
  auto fits = [&](ValueId id) {
    if (id == kNoValue) return true;
    const TensorType& type = graph.value(id).type;
    return std::find(dtypes.begin(), dtypes.end(), type.dtype) != dtypes.end() &&
           type.num_elements() > 0;
  };
  return std::all_of(node.inputs.begin(), node.inputs.end(), fits) &&
         std::all_of(node.outputs.begin(), node.outputs.end(), fits);
}

}  // namespace collage
