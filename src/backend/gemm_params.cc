#include "collage/sdk/gemm_params.h"

#include "collage/sdk/find_node.h"
#include "collage/sdk/errors.h"

namespace collage {

StatusOr<GemmParams> ReadGemmParams(const Graph& graph, const Node& gemm) {
  if (gemm.inputs.size() < 2) return InvalidArgument("Gemm needs A and B");
  const Shape& a_shape = graph.value(gemm.inputs[0]).type.shape;
  const Shape& b_shape = graph.value(gemm.inputs[1]).type.shape;
  if (a_shape.size() != 2 || b_shape.size() != 2) return InvalidArgument("Gemm needs 2-D A and B");
  GemmParams p;
  p.trans_a = gemm.attributes.GetInt("transA", 0) != 0;
  p.trans_b = gemm.attributes.GetInt("transB", 0) != 0;
  p.alpha = gemm.attributes.GetFloat("alpha", 1.0f);
  p.beta = gemm.attributes.GetFloat("beta", 1.0f);
  p.m = p.trans_a ? a_shape[1] : a_shape[0];
  p.k = p.trans_a ? a_shape[0] : a_shape[1];
  p.n = p.trans_b ? b_shape[0] : b_shape[1];
  if ((p.trans_b ? b_shape[1] : b_shape[0]) != p.k) {
    return InvalidArgument("Gemm inner dims differ");
  }
  if (gemm.inputs.size() > 2 && gemm.inputs[2] != kNoValue) {
    const Shape& c_shape = graph.value(gemm.inputs[2]).type.shape;
    if (c_shape.size() > 2) return InvalidArgument("Gemm C has rank {}", c_shape.size());
    Shape c2(2 - c_shape.size(), 1);
    c2.insert(c2.end(), c_shape.begin(), c_shape.end());
    if ((c2[0] != 1 && c2[0] != p.m) || (c2[1] != 1 && c2[1] != p.n)) {
      return InvalidArgument("Gemm C {} does not broadcast to [{}, {}]", ShapeToString(c_shape),
                             p.m, p.n);
    }
    p.has_c = true;
    p.c_rows = c2[0];
    p.c_cols = c2[1];
  }
  return p;
}

StatusOr<GemmOperands> ResolveGemm(const CompileRequest& request) {
  const Node* gemm = FindNode(request, "Gemm");
  if (gemm == nullptr) return InvalidArgument("the group has no Gemm node");
  GemmOperands g;
  COLLAGE_ASSIGN_OR_RETURN(g.params, ReadGemmParams(*request.graph, *gemm));
  COLLAGE_ASSIGN_OR_RETURN(g.a, Operand::Resolve(request, gemm->inputs[0]));
  COLLAGE_ASSIGN_OR_RETURN(g.b, Operand::Resolve(request, gemm->inputs[1]));
  if (g.params.has_c) {
    COLLAGE_ASSIGN_OR_RETURN(g.c, Operand::Resolve(request, gemm->inputs[2]));
  }
  return g;
}

}  // namespace collage
