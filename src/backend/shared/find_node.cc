#include "backend/shared/find_node.h"

namespace collage {

const Node* FindNode(const CompileRequest& request, std::string_view op_type) {
  for (NodeId id : request.node_ids()) {
    if (request.graph->node(id).op_type == op_type) return &request.graph->node(id);
  }
  return nullptr;
}

}  // namespace collage
