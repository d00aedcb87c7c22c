#include "backend/shared/gemm_params.h"

#include "backend/shared/find_node.h"
#include "collage/sdk/errors.h"

namespace collage {

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
