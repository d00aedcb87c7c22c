// The rule sets of the two XNNPACK backends. Every constraint calls the same analysis
// (xnnpack_analysis.h) that Compile uses, so a group is offered only if it compiles.
#pragma once

#include "collage/sdk/rule.h"

namespace collage::xnnpack {

// `xnnpack`: one operator (plus a fused Relu/Clip) per group.
RuleSet MakeOperatorRules();
// Its quantized convolutions (xnnpack_int8_conv.cc): "qlinear_conv", "qdq_conv",
// "qdq_conv_relu".
void AddInt8ConvRules(RuleSet& rules);
// `xnnpack_graph`: regions of up to kMaxRegionOps supported ops, plus single ops.
inline constexpr int kMaxRegionOps = 16;
RuleSet MakeSubgraphRules();

}  // namespace collage::xnnpack
