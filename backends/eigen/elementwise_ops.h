// The elementwise ops the Eigen backend fuses into chains, the operand forms it accepts, and
// how one op is evaluated on one tile of elements with Eigen array expressions.
//
// Accepted forms, for a node whose (float32) output has shape S:
//   - a non-constant input must have shape S exactly (so every node of a chain has the same
//     shape, and tiles of the flat index line up across the chain);
//   - a constant input may be broadcast, in "block" form: after left-padding its shape with
//     1s to S's rank, its non-1 dims form one contiguous run of dims equal to S's. That
//     covers scalars, same-shape constants, a bias over the last dim ([768] against
//     [1, 128, 768]) and per-channel constants ([C, 1, 1] against [N, C, H, W]). Element i of
//     the output then reads constant element (i / inner) % len.
//   - Clip's min and max are constant scalars (inputs from opset 11, attributes before).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "collage/status.h"
#include "collage/tensor.h"
#include "collage/sdk/graph.h"

namespace collage::eigen {

enum class ElementwiseOp {
  kRelu, kLeakyRelu, kSigmoid, kTanh, kExp, kLog, kSqrt, kAbs, kNeg, kReciprocal, kErf, kClip,
  kAdd, kSub, kMul, kDiv,
};

// nullopt for ops the chain kernel does not evaluate.
std::optional<ElementwiseOp> LookupElementwiseOp(const std::string& op_type);
bool IsBinary(ElementwiseOp op);

// A constant broadcast to the output in block form: output element i reads
// data[(i / inner) % len].
struct BroadcastBlock {
  int64_t inner = 1;
  int64_t len = 1;
};
// nullopt when `operand` is not in block form against `out` (or does not broadcast to it).
std::optional<BroadcastBlock> BlockOf(const Shape& operand, const Shape& out);

// The fusion predicate: the node is a default-domain op of the list above, float32, with
// operands in the accepted forms, in a graph of opset >= 7 (before that, binary ops
// broadcast only with a `broadcast` attribute, which is not implemented).
bool ChainSupportsNode(const Graph& graph, const Node& node);

// Op parameters read from the node at Compile.
struct ElementwiseParams {
  float alpha = 0.01f;  // LeakyRelu
  float lo = 0.0f;      // Clip
  float hi = 0.0f;
};
// Reads LeakyRelu's alpha and Clip's bounds (ReadClipBounds: constants).
StatusOr<ElementwiseParams> ReadParams(const Graph& graph, const Node& node, ElementwiseOp op);

// y[0, n) = op(x[0, n)) for a unary op.
void EvalUnary(ElementwiseOp op, const ElementwiseParams& params, const float* x, float* y,
               int64_t n);
// y = a op b, elementwise over n.
void EvalBinary(ElementwiseOp op, const float* a, const float* b, float* y, int64_t n);
// y = a op s (scalar_left: y = s op a).
void EvalBinaryScalar(ElementwiseOp op, const float* a, float s, bool scalar_left, float* y,
                      int64_t n);

}  // namespace collage::eigen
