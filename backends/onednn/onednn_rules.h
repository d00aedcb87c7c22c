// The oneDNN backend's rules, one family per file, each rule with the function that compiles
// its groups (Rule::Compiles, handed the rule's match). onednn_backend.cc gathers them.
#pragma once

#include <functional>
#include <vector>

#include "onednn_util.h"

namespace collage::onednn {

struct RuleEntry {
  Rule rule;  // with its compile function
  // The variant running activations in the layout oneDNN picks (onednn_layout.h), not plain.
  bool blocked = false;
};

void AddConvRules(std::vector<RuleEntry>& rules);     // onednn_conv.cc
void AddInt8ConvRules(std::vector<RuleEntry>& rules);  // onednn_int8_conv.cc (quantized)
void AddInt8MatMulRules(std::vector<RuleEntry>& rules);  // onednn_int8_matmul.cc (quantized)
void AddDeconvRules(std::vector<RuleEntry>& rules);   // onednn_deconv.cc
void AddMatmulRules(std::vector<RuleEntry>& rules);   // onednn_matmul.cc
void AddPoolingRules(std::vector<RuleEntry>& rules);  // onednn_pooling.cc
void AddEltwiseRules(std::vector<RuleEntry>& rules);  // onednn_eltwise.cc (eltwise, binary)
void AddNormRules(std::vector<RuleEntry>& rules);     // onednn_norm.cc (softmax, norms)
void AddRnnRules(std::vector<RuleEntry>& rules);      // onednn_rnn.cc (LSTM, GRU, RNN)
void AddShuffleRules(std::vector<RuleEntry>& rules);  // onednn_shuffle.cc (channel shuffle)
void AddChannelSliceRules(std::vector<RuleEntry>& rules);  // onednn_channel_slice.cc
void AddConcatRules(std::vector<RuleEntry>& rules);   // onednn_concat.cc
void AddResampleRules(std::vector<RuleEntry>& rules);  // onednn_resample.cc (Resize, Upsample)

// Shared rule pieces.
// `inner` followed by a supported activation: one of UnaryActivationOps, a Clip, a SiLU
// (Mul(inner, Sigmoid(inner))), a HardSwish written as Mul(inner, HardSigmoid(inner)) or
// GELU's erf form as exporters write it.
Pattern WithActivation(const Pattern& inner);
// Add(inner, other) in either operand order.
Pattern WithAdd(const Pattern& inner);
bool IsFloatValue(const Graph& graph, ValueId value);
// Every node of the match after the first forms a supported epilogue.
bool MatchEpilogueOk(const Match& match);
// The main op of a match (the convolution, the pooling, ...): every family's pattern wraps it
// in its epilogue (activation, residual Add), so it is the innermost Op, last in pre-order.
const Node& MainNode(const Match& match);
// The match's ops in the order data flows through them: the main op, then its epilogue; each
// node once.
std::vector<NodeId> ChainOrder(const Match& match);

}  // namespace collage::onednn
