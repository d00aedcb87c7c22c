// The rules of an engine backend: a whole inference runtime (ONNX Runtime, OpenVINO) that
// compiles any region of ONNX nodes it is handed, as an in-memory ONNX model. Such a backend
// offers every node it supports alone ("single": what its kernels do for one op) and the
// maximal convex regions of supported nodes ("whole": what its graph optimizer does across
// ops; a fully supported model is one candidate), and between the two, spans of the model cut
// at its narrow points ("span": a few blocks or layers, Fusion::NarrowSpans), so that the
// op-level search can give an engine the part of a model it runs best and the libraries the
// rest. The graph-level search merges adjacent groups moved to it into regions of any size,
// compiled under the "whole" rule.
#pragma once

#include "collage/sdk/rule.h"

namespace collage {

// `supported`: the nodes the engine can take (its op coverage, dtypes, shapes); `compile`:
// how it compiles any group of them, alone or a region. `reduced`: the reduced precisions
// the engine computes in on this CPU (collage/precision.h): "whole" regions and spans are
// offered in them too, and every product node (MatMul, Gemm, Conv, ConvTranspose) alone by the fusion
// "single_product" in them only — the ops where a reduced precision saves time; the others
// alone stay float32.
RuleSet MakeRegionEngineRules(const NodePredicate& supported, const FusionCompiler& compile,
                              const std::vector<Precision>& reduced = {});

// The finest spans an engine is offered: about this many per model (and runs of 2 and 4 of
// them): 14 candidates per precision, each an engine compile when measured.
inline constexpr int kEngineSpanParts = 8;

// Nodes every ONNX engine is expected to take: an op of the default ONNX domain whose inputs
// and outputs all have a numeric dtype in `dtypes` and at least one element (engines disagree
// on zero-sized tensors, and a kernel over an empty buffer has nothing to do).
bool IsOnnxNodeOverDTypes(const Graph& graph, const Node& node, const std::vector<DType>& dtypes);

// The same test of the node's inputs and outputs, whatever the node's domain (for an engine
// that also runs ops of its own domain: ONNX Runtime's com.microsoft ops).
bool IsNodeOverDTypes(const Graph& graph, const Node& node, const std::vector<DType>& dtypes);

}  // namespace collage
