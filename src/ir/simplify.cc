#include "ir/simplify.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "collage/sdk/errors.h"
#include "ir/dequantize_per_reader.h"
#include "ir/matmul_batching.h"
#include "ir/same_computation.h"

namespace collage {

namespace {

bool IsFloat32Constant(const Graph& g, ValueId id) {
  return id != kNoValue && g.value(id).is_constant() && g.value(id).type.dtype == DType::kFloat32;
}

// The only reader of `value` is one node, and it is not a graph output.
bool ReadOnlyBy(const Graph& g, ValueId value, NodeId reader) {
  const Value& v = g.value(value);
  for (ValueId out : g.outputs()) {
    if (out == value) return false;
  }
  return v.consumers.size() == 1 && v.consumers[0] == reader;
}

bool IsConvOrConvTranspose(const Node& node) {
  return node.domain.empty() && (node.op_type == "Conv" || node.op_type == "ConvTranspose");
}

// Output channels of a Conv ([M, C/group, k...] weights) or ConvTranspose ([C, M/group, k...]).
int64_t OutputChannels(const Graph& g, const Node& conv) {
  const Shape& w = g.value(conv.inputs[1]).type.shape;
  if (conv.op_type == "Conv") return w[0];
  return w.size() < 2 ? 0 : w[1] * conv.attributes.GetInt("group", 1);
}

// Conv or ConvTranspose → BatchNormalization, foldable: the BatchNormalization (inference
// form, one output) reads the convolution's only output, which nothing else reads; every
// parameter is a float32 constant of one value per output channel.
bool FoldableBatchNorm(const Graph& g, const Node& bn, NodeId bn_id) {
  if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.inputs.size() != 5)
    return false;
  if (bn.attributes.GetInt("training_mode", 0) != 0) return false;
  if (g.opset() < 9 && bn.attributes.GetInt("spatial", 1) == 0) return false;
  for (size_t i = 1; i < bn.outputs.size(); ++i) {
    if (bn.outputs[i] != kNoValue) return false;
  }
  const ValueId x = bn.inputs[0];
  const NodeId conv_id = g.value(x).producer;
  if (conv_id < 0 || !ReadOnlyBy(g, x, bn_id)) return false;
  const Node& conv = g.node(conv_id);
  if (!IsConvOrConvTranspose(conv) || conv.outputs.size() != 1) return false;
  if (conv.inputs.size() < 2 || !IsFloat32Constant(g, conv.inputs[1])) return false;
  const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
  if (has_bias && !IsFloat32Constant(g, conv.inputs[2])) return false;
  const int64_t channels = OutputChannels(g, conv);
  if (channels <= 0) return false;
  for (size_t i = 1; i < 5; ++i) {
    if (!IsFloat32Constant(g, bn.inputs[i]) ||
        g.value(bn.inputs[i]).type.num_elements() != channels) {
      return false;
    }
  }
  return g.value(x).type.dtype == DType::kFloat32;
}

// The convolution's weights scaled per output channel and its bias moved, for the
// BatchNormalization after it: W'[o] = W[o] * s[o], b'[o] = (b[o] - mean[o]) * s[o] + B[o],
// s = scale / sqrt(var + eps). A Conv's output channel o is its weights' row o; a
// ConvTranspose's is, in group g, column o - g * M/group of the rows of that group's inputs.
struct FoldedConv {
  Tensor weight;
  Tensor bias;
};

FoldedConv FoldBatchNorm(const Graph& g, const Node& conv, const Node& bn) {
  const Tensor& w = *g.value(conv.inputs[1]).constant;
  const int64_t channels = OutputChannels(g, conv);
  const float* scale = g.value(bn.inputs[1]).constant->data_as<float>();
  const float* shift = g.value(bn.inputs[2]).constant->data_as<float>();
  const float* mean = g.value(bn.inputs[3]).constant->data_as<float>();
  const float* var = g.value(bn.inputs[4]).constant->data_as<float>();
  const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
  const float* b = has_bias ? g.value(conv.inputs[2]).constant->data_as<float>() : nullptr;
  const double epsilon = bn.attributes.GetFloat("epsilon", 1e-5f);
  FoldedConv folded{Tensor(DType::kFloat32, w.shape()), Tensor(DType::kFloat32, {channels})};
  std::vector<double> factor(static_cast<size_t>(channels));
  for (int64_t o = 0; o < channels; ++o) {
    const double s = scale[o] / std::sqrt(static_cast<double>(var[o]) + epsilon);
    factor[static_cast<size_t>(o)] = s;
    folded.bias.data_as<float>()[o] =
        static_cast<float>(((b ? b[o] : 0.0) - mean[o]) * s + shift[o]);
  }
  // Weights as rows × per_group_outputs × kernel (a Conv: channels rows of one output each).
  const bool transpose = conv.op_type == "ConvTranspose";
  const int64_t rows = w.shape()[0];
  const int64_t outputs_per_row = transpose ? w.shape()[1] : 1;
  const int64_t kernel = w.num_elements() / (rows * outputs_per_row);
  const int64_t rows_per_group = transpose ? rows / conv.attributes.GetInt("group", 1) : 1;
  const float* src = w.data_as<float>();
  float* dst = folded.weight.data_as<float>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < outputs_per_row; ++j) {
      const int64_t o = transpose ? (r / rows_per_group) * outputs_per_row + j : r;
      const double s = factor[static_cast<size_t>(o)];
      const int64_t at = (r * outputs_per_row + j) * kernel;
      for (int64_t k = 0; k < kernel; ++k) dst[at + k] = static_cast<float>(src[at + k] * s);
    }
  }
  return folded;
}

// A Pad whose pads are all zero copies its input (whatever its mode and constant): pads from
// the int64 constant input (opset 11+) or the `pads` (`paddings` in opset 1) attribute.
bool IsZeroPad(const Graph& g, const Node& pad) {
  if (pad.op_type != "Pad" || !pad.domain.empty() || pad.inputs.empty() ||
      pad.outputs.size() != 1) {
    return false;
  }
  std::vector<int64_t> pads;
  if (g.opset() >= 11) {
    if (pad.inputs.size() < 2 || pad.inputs[1] == kNoValue) return false;
    const Value& v = g.value(pad.inputs[1]);
    if (!v.is_constant() || v.type.dtype != DType::kInt64) return false;
    pads = v.constant->ToVector<int64_t>();
  } else {
    pads = pad.attributes.GetInts(pad.attributes.Has("pads") ? "pads" : "paddings");
  }
  if (pads.empty()) return false;
  for (int64_t p : pads) {
    if (p != 0) return false;
  }
  return g.value(pad.inputs[0]).type == g.value(pad.outputs[0]).type;
}

// perm2 ∘ perm1 is the identity: Transpose(Transpose(x, perm1), perm2) == x.
bool ComposeToIdentity(const std::vector<int64_t>& perm1, const std::vector<int64_t>& perm2) {
  if (perm1.size() != perm2.size() || perm1.empty()) return false;
  for (size_t i = 0; i < perm2.size(); ++i) {
    const int64_t p = perm2[i];
    if (p < 0 || p >= static_cast<int64_t>(perm1.size()) ||
        perm1[static_cast<size_t>(p)] != static_cast<int64_t>(i)) {
      return false;
    }
  }
  return true;
}

class Rewriter {
 public:
  explicit Rewriter(const Graph& old)
      : old_(old), substitute_(static_cast<size_t>(old.num_values()), kNoValue) {}

  StatusOr<Graph> Run(SimplifyStats& stats) {
    for (const Value& v : old_.values()) {
      if (v.is_constant()) {
        next_.AddConstant(v.name, *v.constant);
      } else {
        next_.AddValue(v.name, v.type);
      }
    }
    for (ValueId in : old_.inputs()) next_.AddInput(in);
    std::vector<bool> skip(static_cast<size_t>(old_.num_nodes()), false);
    for (NodeId id = 0; id < old_.num_nodes(); ++id) {
      if (skip[static_cast<size_t>(id)]) continue;
      const Node& node = old_.node(id);
      if (IsConvOrConvTranspose(node) && node.outputs.size() == 1 && node.outputs[0] != kNoValue) {
        const Value& out = old_.value(node.outputs[0]);
        if (out.consumers.size() == 1 &&
            FoldableBatchNorm(old_, old_.node(out.consumers[0]), out.consumers[0])) {
          const Node& bn = old_.node(out.consumers[0]);
          FoldedConv folded = FoldBatchNorm(old_, node, bn);
          Node conv = node;
          conv.inputs.resize(3);
          conv.inputs[1] =
              next_.AddConstant(node.name + ".folded_weight", std::move(folded.weight));
          conv.inputs[2] = next_.AddConstant(node.name + ".folded_bias", std::move(folded.bias));
          conv.outputs = {bn.outputs[0]};
          COLLAGE_RETURN_IF_ERROR(Emit(std::move(conv)));
          skip[static_cast<size_t>(out.consumers[0])] = true;
          ++stats.batchnorms_folded;
          continue;
        }
      }
      if (IsZeroPad(old_, node) && !IsGraphOutput(node.outputs[0])) {
        substitute_[static_cast<size_t>(node.outputs[0])] = Resolve(node.inputs[0]);
        ++stats.zero_pads_removed;
        continue;
      }
      if (node.op_type == "Transpose" && node.domain.empty() && node.inputs.size() == 1) {
        const ValueId mid = node.inputs[0];
        const NodeId inner = old_.value(mid).producer;
        if (inner >= 0 && old_.node(inner).op_type == "Transpose" &&
            old_.node(inner).domain.empty() && ReadOnlyBy(old_, mid, id) &&
            !IsGraphOutput(node.outputs[0]) &&
            ComposeToIdentity(old_.node(inner).attributes.GetInts("perm"),
                              node.attributes.GetInts("perm"))) {
          // The inner Transpose was emitted (it ran before this one was seen); its output
          // then has no reader and goes with RemoveDeadCode.
          substitute_[static_cast<size_t>(node.outputs[0])] = Resolve(old_.node(inner).inputs[0]);
          ++stats.transposes_cancelled;
          continue;
        }
      }
      COLLAGE_RETURN_IF_ERROR(EmitUnlessComputed(node, stats));
    }
    for (ValueId out : old_.outputs()) next_.AddOutput(Resolve(out));
    next_.set_opset(old_.opset());
    next_.set_name(old_.name());
    next_.RemoveDeadCode();
    return std::move(next_);
  }

 private:
  bool IsGraphOutput(ValueId value) const {
    for (ValueId out : old_.outputs()) {
      if (out == value) return true;
    }
    return false;
  }

  ValueId Resolve(ValueId id) const {
    while (id != kNoValue && id < static_cast<ValueId>(substitute_.size()) &&
           substitute_[static_cast<size_t>(id)] != kNoValue) {
      id = substitute_[static_cast<size_t>(id)];
    }
    return id;
  }

  Status Emit(Node node) {
    for (ValueId& in : node.inputs) in = Resolve(in);
    return next_.AddNode(std::move(node)).status();
  }

  // Emits `node` unless a node emitted before computes the same values (over the inputs as
  // rewritten so far, so a chain of duplicates goes whole); its readers then read that one's.
  // A node writing a graph output stays: the output keeps its name.
  Status EmitUnlessComputed(Node node, SimplifyStats& stats) {
    for (ValueId& in : node.inputs) in = Resolve(in);
    std::vector<NodeId>& same_key = emitted_[ComputationKey(node)];
    bool writes_graph_output = false;
    for (ValueId out : node.outputs) writes_graph_output |= IsGraphOutput(out);
    if (!writes_graph_output) {
      for (NodeId e : same_key) {
        const Node& earlier = next_.node(e);
        if (!SameComputation(earlier, node)) continue;
        for (size_t i = 0; i < node.outputs.size(); ++i) {
          if (node.outputs[i] != kNoValue) {
            substitute_[static_cast<size_t>(node.outputs[i])] = earlier.outputs[i];
          }
        }
        ++stats.duplicates_removed;
        return Status::Ok();
      }
    }
    COLLAGE_ASSIGN_OR_RETURN(const NodeId id, next_.AddNode(std::move(node)));
    same_key.push_back(id);
    return Status::Ok();
  }

  const Graph& old_;
  Graph next_;
  std::vector<ValueId> substitute_;  // old value → the value that replaces it
  std::map<std::string, std::vector<NodeId>> emitted_;  // computation key → nodes of next_
};

bool AnythingToDo(const Graph& g) {
  std::map<std::string, std::vector<const Node*>> by_key;
  for (const Node& n : g.nodes()) {
    if (n.op_type == "BatchNormalization" || n.op_type == "Transpose" ||
        n.op_type == "Pad") {
      return true;
    }
    std::vector<const Node*>& same_key = by_key[ComputationKey(n)];
    for (const Node* earlier : same_key) {
      if (SameComputation(*earlier, n)) return true;
    }
    same_key.push_back(&n);
  }
  return false;
}

}  // namespace

StatusOr<SimplifyStats> SimplifyGraph(Graph& graph) {
  SimplifyStats stats;
  if (AnythingToDo(graph)) {
    COLLAGE_ASSIGN_OR_RETURN(Graph simplified, Rewriter(graph).Run(stats));
    if (stats.total() != 0) {
      COLLAGE_RETURN_IF_ERROR(simplified.Validate());
      graph = std::move(simplified);
    }
  }
  // After the rewrites, whose removal of duplicates would merge the copies again.
  COLLAGE_ASSIGN_OR_RETURN(stats.dequantizes_copied, DequantizePerReader(graph));
  // Last, on the graph the rewrites above left (its own pass: it re-orders nodes).
  COLLAGE_ASSIGN_OR_RETURN(const MatMulBatchingStats batched, BatchSmallMatMuls(graph));
  stats.matmuls_merged = batched.siblings_merged;
  stats.matmuls_stacked = batched.steps_stacked;
  return stats;
}

}  // namespace collage
