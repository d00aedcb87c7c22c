// Small graph-building helpers shared by the backend-interface tests.
#pragma once

#include <string>
#include <vector>

#include "collage/sdk/graph.h"

namespace collage::testing {

inline Node NodeOf(const std::string& name, const std::string& op_type,
                   std::vector<ValueId> inputs, std::vector<ValueId> outputs) {
  Node node;
  node.name = name;
  node.op_type = op_type;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  return node;
}

}  // namespace collage::testing
