// The oneDNN backend's rules, one family per file, each with the Compile that builds its
// groups. onednn_backend.cc gathers them.
#pragma once

#include <functional>
#include <vector>

#include "onednn_util.h"

namespace collage::onednn {

using CompileFn = std::function<StatusOr<std::unique_ptr<Kernel>>(const CompileRequest&)>;

struct RuleEntry {
  Rule rule;
  CompileFn compile;
};

void AddConvRules(std::vector<RuleEntry>& rules);     // onednn_conv.cc
void AddDeconvRules(std::vector<RuleEntry>& rules);   // onednn_deconv.cc
void AddMatmulRules(std::vector<RuleEntry>& rules);   // onednn_matmul.cc
void AddPoolingRules(std::vector<RuleEntry>& rules);  // onednn_pooling.cc
void AddEltwiseRules(std::vector<RuleEntry>& rules);  // onednn_eltwise.cc (eltwise, binary)
void AddNormRules(std::vector<RuleEntry>& rules);     // onednn_norm.cc (softmax, norms)

// Shared rule pieces.
// `inner` followed by a supported activation.
Pattern WithActivation(const Pattern& inner);
// Add(inner, other) in either operand order.
Pattern WithAdd(const Pattern& inner);
bool IsFloatValue(const Graph& graph, ValueId value);
// Every node of the match after the first forms a supported epilogue.
bool MatchEpilogueOk(const Match& match);
// The group's first node (its main op): the smallest node id.
const Node& MainNode(const CompileRequest& request);

}  // namespace collage::onednn
