// One candidate group as a standalone ONNX model, for measuring it in another process (the
// measurement worker): the group's nodes unchanged, its constant inputs as initializers, its
// other inputs as graph inputs and the values it produces for others as graph outputs, both
// in CompileRequest order, so that the importing side builds the same CompileRequest (same
// inputs, same outputs, same order) from all of the model's nodes.
#pragma once

#include <string>

#include "collage/status.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/subgraph.h"

namespace collage {

// The group's nodes of `graph` as a graph of their own (same opset, names, attributes).
StatusOr<Graph> GroupAsGraph(const Graph& graph, const SubGraph& nodes);
// GroupAsGraph exported as serialized ModelProto bytes.
StatusOr<std::string> GroupModelBytes(const Graph& graph, const SubGraph& nodes);

}  // namespace collage
