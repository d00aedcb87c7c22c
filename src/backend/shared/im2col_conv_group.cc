#include "backend/shared/im2col_conv_group.h"

#include <climits>

#include "backend/shared/find_node.h"
#include "backend/shared/operand.h"
#include "collage/sdk/errors.h"

namespace collage {

StatusOr<Im2colConvGroup> ReadIm2colConvGroup(const CompileRequest& request) {
  const Graph& graph = *request.graph;
  const Node* conv = FindNode(request, "Conv");
  if (conv == nullptr) return InvalidArgument("the group has no Conv node");
  Im2colConvGroup group;
  group.relu = FindNode(request, "Relu") != nullptr;
  const Shape& x = graph.value(conv->inputs[0]).type.shape;
  const Shape& w = graph.value(conv->inputs[1]).type.shape;
  COLLAGE_ASSIGN_OR_RETURN(group.geometry, ReadConv2dGeometry(*conv, x, w));
  const Conv2dGeometry& g = group.geometry;
  if (g.group_out() > INT_MAX || g.out_pixels() > INT_MAX || g.patch() > INT_MAX) {
    return Unsupported("Conv X {} W {} exceeds BLAS's int dims", ShapeToString(x),
                       ShapeToString(w));
  }
  if (request.inputs.size() != 1 || request.inputs[0] != conv->inputs[0]) {
    return InvalidArgument("a Conv group reads exactly one non-constant value, X");
  }
  COLLAGE_ASSIGN_OR_RETURN(Operand weights, Operand::Resolve(request, conv->inputs[1]));
  if (!weights.is_constant()) return Unsupported("Conv weights must be a constant");
  group.weights = weights.constant();
  if (conv->inputs.size() > 2 && conv->inputs[2] != kNoValue) {
    COLLAGE_ASSIGN_OR_RETURN(Operand b, Operand::Resolve(request, conv->inputs[2]));
    if (!b.is_constant()) return Unsupported("Conv bias must be a constant");
    group.bias = b.constant();
  }
  return group;
}

}  // namespace collage
