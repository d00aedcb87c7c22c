// A DequantizeLinear read by several nodes becomes one per reader (what ONNX Runtime calls
// making each DQ unique to its node unit). Quantizers write one DequantizeLinear of a
// quantized activation for all its readers — a ResNet block's input feeds its convolution and
// its residual Add — and a backend's integer kernel takes the DequantizeLinear into its group
// (DequantizeLinear → Conv → QuantizeLinear as one int8 convolution), which it can only do
// when the group is the DequantizeLinear's sole reader: a group's inner values are not seen
// outside it. With a copy per reader, each reader's group may take its own; readers that stay
// in float compute the same values as before (the copies compute what the original did).
#pragma once

#include "collage/sdk/graph.h"
#include "collage/status.h"

namespace collage {

// Rewrites `graph` in place: every DequantizeLinear whose output has more than one reader
// gets a copy per reader after the first (placed just before that reader, named
// "<original>.for_<reader>"); a graph output keeps the original. Returns how many copies it
// made (0: the graph is untouched).
StatusOr<int> DequantizePerReader(Graph& graph);

}  // namespace collage
