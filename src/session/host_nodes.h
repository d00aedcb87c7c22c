// Which nodes of a graph cannot be compiled ahead of a run, and so are run by the runtime
// itself between compiled segments (src/session/staged_graph.h): control flow whose branch or
// trip count the run decides (If on data, Loop, Scan), and ops whose output shapes are set by
// values the graph computes from data (a NonZero of a feature map, a NonMaxSuppression after
// a detector's convolutions, a Reshape to a shape read from a tensor's contents). Everything
// else compiles per input signature, where shapes come from the inputs' shapes and from values
// folded from constants and shapes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
class NodeProto;
}  // namespace onnx

namespace collage {

// Loop, Scan and If: ops with subgraphs.
bool IsControlFlow(const onnx::NodeProto& node);

// The ops that make or read sequences of tensors (SequenceEmpty, SequenceInsert,
// ConcatFromSequence, ...): always host steps, since segments hold tensors only.
bool IsSequenceOp(const onnx::NodeProto& node);

// The inputs of `node` whose values (not only shapes) set the shapes of its outputs, as the
// ONNX spec defines the op at `opset`: a Reshape's shape, a Slice's starts and ends, a TopK's
// k, every input of NonZero, Unique, Compress's condition, NonMaxSuppression's inputs.
std::vector<int> ShapeSettingInputs(const onnx::NodeProto& node, int64_t opset);

// For each node of `graph` in order, whether it runs on the host. `foldable(name)` says
// whether a value from outside the graph's nodes (an input, an initializer, an outer-scope
// value) is known when a segment compiles: a constant, or a small input that a segment binds
// by value. A node's outputs are foldable when every input is (Shape and Size: always) and it
// is no random op. A node runs on the host when it is Loop or Scan, an If whose condition is
// not foldable or whose branches hold a host node (at any depth), a sequence op or a node
// reading a sequence (the graph's sequence inputs, the sequence outputs of sequence ops, of
// Loop and of If as their bodies declare them), or a node whose shape-setting inputs are not
// all foldable; a host node's outputs are not foldable.
std::vector<bool> HostNodes(const onnx::GraphProto& graph, int64_t opset,
                            const std::function<bool(const std::string&)>& foldable);

}  // namespace collage
