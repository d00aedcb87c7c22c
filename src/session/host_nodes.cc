#include "session/host_nodes.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "onnx/constant_folding.h"
#include "onnx/onnx_pb.h"

namespace collage {
namespace {

bool IsOp(const onnx::NodeProto& node, const char* op) {
  return (node.domain().empty() || node.domain() == "ai.onnx") && node.op_type() == op;
}


std::vector<int> AllInputs(const onnx::NodeProto& node) {
  std::vector<int> all;
  for (int i = 0; i < node.input_size(); ++i) all.push_back(i);
  return all;
}

}  // namespace

bool IsControlFlow(const onnx::NodeProto& node) {
  return IsOp(node, "If") || IsOp(node, "Loop") || IsOp(node, "Scan");
}

bool IsSequenceOp(const onnx::NodeProto& node) {
  static const std::set<std::string> kSequenceOps = {
      "SequenceEmpty", "SequenceConstruct", "SequenceInsert",     "SequenceAt",
      "SequenceLength", "SequenceErase",    "ConcatFromSequence", "SplitToSequence"};
  return (node.domain().empty() || node.domain() == "ai.onnx") && kSequenceOps.count(node.op_type());
}

namespace {

bool IsSequenceType(const onnx::ValueInfoProto& value) { return value.type().has_sequence_type(); }

// Whether any graph attribute of `node`, at any depth, holds a node `matches` selects.
bool SubgraphsHold(const onnx::NodeProto& node,
                   const std::function<bool(const onnx::NodeProto&)>& matches) {
  auto graph_holds = [&](const onnx::GraphProto& graph) {
    for (const onnx::NodeProto& inner : graph.node()) {
      if (matches(inner) || SubgraphsHold(inner, matches)) return true;
    }
    return false;
  };
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.has_g() && graph_holds(attr.g())) return true;
    for (const onnx::GraphProto& g : attr.graphs()) {
      if (graph_holds(g)) return true;
    }
  }
  return false;
}

// The outputs of `node` that are sequences: a sequence op's (all but SequenceAt's and
// SequenceLength's, and ConcatFromSequence's), a Loop's or an If's as its body declares them,
// an Identity's of a sequence.
std::vector<bool> SequenceOutputs(const onnx::NodeProto& node,
                                  const std::unordered_set<std::string>& sequences) {
  std::vector<bool> out(static_cast<size_t>(node.output_size()), false);
  if (IsSequenceOp(node)) {
    const bool gives_tensor = IsOp(node, "SequenceAt") || IsOp(node, "SequenceLength") ||
                              IsOp(node, "ConcatFromSequence");
    std::fill(out.begin(), out.end(), !gives_tensor);
  } else if (IsOp(node, "Identity")) {
    std::fill(out.begin(), out.end(), node.input_size() > 0 && sequences.count(node.input(0)));
  } else if (IsOp(node, "Loop") || IsOp(node, "If")) {
    // A Loop's outputs are its body's outputs after the condition; an If's, its branch's.
    const int skip = IsOp(node, "Loop") ? 1 : 0;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (!attr.has_g() || (attr.name() != "body" && attr.name() != "then_branch")) continue;
      for (int i = 0; i < node.output_size() && i + skip < attr.g().output_size(); ++i) {
        out[static_cast<size_t>(i)] = IsSequenceType(attr.g().output(i + skip));
      }
    }
  }
  return out;
}

}  // namespace

std::vector<int> ShapeSettingInputs(const onnx::NodeProto& node, int64_t opset) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return {};
  const std::string& op = node.op_type();
  // Outputs whose every dim is counted from data.
  if (op == "NonZero" || op == "Unique" || op == "NonMaxSuppression" || op == "Range" ||
      op == "ConstantOfShape") {
    return AllInputs(node);
  }
  if (op == "Compress" || op == "Reshape" || op == "Expand" || op == "Tile" || op == "OneHot" ||
      op == "CenterCropPad" || op == "Upsample") {
    return {1};
  }
  if (op == "Slice" && opset >= 10) return {1, 2, 3, 4};
  if (op == "TopK" && opset >= 10) return {1};
  if (op == "Pad" && opset >= 11) return {1, 3};
  if (op == "Resize") return opset >= 11 ? std::vector<int>{2, 3} : std::vector<int>{1};
  if ((op == "Squeeze" || op == "Unsqueeze" || op == "Split") && opset >= 13) return {1};
  if (op == "ReduceSum" && opset >= 13) return {1};
  if (op.rfind("Reduce", 0) == 0 && opset >= 18) return {1};
  if (op == "MaxUnpool") return {2};
  if (op == "Col2Im") return {1, 2};
  if (op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow") return {0};
  if (op == "DFT") return opset >= 20 ? std::vector<int>{1, 2} : std::vector<int>{1};
  if (op == "STFT") return {1, 3};
  if (op == "MelWeightMatrix") return AllInputs(node);
  return {};
}

std::vector<bool> HostNodes(const onnx::GraphProto& graph, int64_t opset,
                            const std::function<bool(const std::string&)>& foldable) {
  std::unordered_set<std::string> computed;       // outputs of this graph's nodes
  std::unordered_set<std::string> folds;          // ... of those, the foldable ones
  auto is_foldable = [&](const std::string& name) {
    if (name.empty()) return true;
    return computed.count(name) ? folds.count(name) != 0 : foldable(name);
  };
  std::unordered_set<std::string> sequences;  // values of this graph that are sequences
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (IsSequenceType(input)) sequences.insert(input.name());
  }
  std::vector<bool> host;
  host.reserve(static_cast<size_t>(graph.node_size()));
  for (const onnx::NodeProto& node : graph.node()) {
    bool on_host = false;
    bool reads_sequence = false;
    for (const std::string& in : node.input()) reads_sequence |= sequences.count(in) != 0;
    if (IsOp(node, "Loop") || IsOp(node, "Scan") || IsSequenceOp(node) || reads_sequence) {
      on_host = true;
    } else if (IsOp(node, "If")) {
      // An If the import can inline: its condition folds, and its branches need no host
      // (nested Ifs whose conditions fold are inlined with it; a Loop or Scan inside is a
      // host node of the branch).
      on_host = node.input_size() < 1 || !is_foldable(node.input(0));
      for (const onnx::AttributeProto& attr : node.attribute()) {
        if (on_host || !attr.has_g()) continue;
        std::unordered_set<std::string> branch_constants;
        for (const auto& init : attr.g().initializer()) branch_constants.insert(init.name());
        const std::vector<bool> inner = HostNodes(attr.g(), opset, [&](const std::string& name) {
          return branch_constants.count(name) != 0 || is_foldable(name);
        });
        on_host = std::find(inner.begin(), inner.end(), true) != inner.end();
      }
    } else {
      for (int i : ShapeSettingInputs(node, opset)) {
        if (i < node.input_size() && !is_foldable(node.input(i))) on_host = true;
      }
      // Ops with subgraphs other than the control flow ops are not run by collage (the import
      // names them); a node holding control flow deeper down is the host's as well.
      if (SubgraphsHold(node, IsControlFlow)) on_host = true;
    }
    host.push_back(on_host);
    bool outputs_fold = !on_host && !IsRandomOp(node.domain(), node.op_type());
    const bool reads_shapes_only = IsOp(node, "Shape") || IsOp(node, "Size");
    if (outputs_fold && !reads_shapes_only) {
      for (const std::string& in : node.input()) outputs_fold &= is_foldable(in);
    }
    const std::vector<bool> sequence_outputs = SequenceOutputs(node, sequences);
    for (int i = 0; i < node.output_size(); ++i) {
      const std::string& out = node.output(i);
      if (out.empty()) continue;
      computed.insert(out);
      if (outputs_fold) folds.insert(out);
      if (sequence_outputs[static_cast<size_t>(i)]) sequences.insert(out);
    }
  }
  return host;
}

}  // namespace collage
