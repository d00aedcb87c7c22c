// The node of a given op type in a compile request's group, for kernels whose groups hold
// one node of each type (a MatMul and its bias Add, a Gemm).
#pragma once

#include <string_view>

#include "collage/sdk/backend.h"

namespace collage {

// The first node (in node id order) of `op_type`; null when the group has none.
const Node* FindNode(const CompileRequest& request, std::string_view op_type);

}  // namespace collage
