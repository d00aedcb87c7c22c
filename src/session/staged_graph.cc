#include "session/staged_graph.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <unordered_set>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_registry.h"
#include "onnx/onnx_attributes.h"
#include "onnx/onnx_pb.h"
#include "onnx/onnx_types.h"
#include "onnx/tensor_proto.h"
#include "session/control_flow_steps.h"
#include "session/host_nodes.h"
#include "session/segment_step.h"
#include "session/sequence_steps.h"

namespace collage {

const RunValue* Scope::Find(const std::string& name) const {
  for (const Scope* s = this; s != nullptr; s = s->parent_) {
    auto it = s->values_.find(name);
    if (it != s->values_.end()) return &it->second;
  }
  return nullptr;
}

const std::string& ConstantTable::Name(const onnx::TensorProto& proto) { return proto.name(); }

void ConstantTable::AddValue(const std::string& name, Tensor value) {
  owned_.emplace_back();
  TensorToProto(value, name, owned_.back());  // what a segment embeds
  Add(owned_.back());
  decoded_.emplace(name, std::move(value));
}

const onnx::TensorProto* ConstantTable::Find(const std::string& name) const {
  for (const ConstantTable* t = this; t != nullptr; t = t->parent_) {
    auto it = t->protos_.find(name);
    if (it != t->protos_.end()) return it->second;
  }
  return nullptr;
}

StatusOr<Tensor> ConstantTable::Decoded(const std::string& name) const {
  for (const ConstantTable* t = this; t != nullptr; t = t->parent_) {
    auto it = t->protos_.find(name);
    if (it == t->protos_.end()) continue;
    std::lock_guard<std::mutex> lock(t->mutex_);
    auto cached = t->decoded_.find(name);
    if (cached != t->decoded_.end()) return cached->second;
    COLLAGE_ASSIGN_OR_RETURN(Tensor tensor, TensorFromProto(*it->second, t->base_dir_));
    t->decoded_.emplace(name, tensor);
    return tensor;
  }
  return NotFound("no constant named '{}'", name);
}

StatusOr<RunValue> ReadRunValue(const Scope& scope, const ConstantTable& constants,
                                const std::string& name, const std::string& reader) {
  if (const RunValue* value = scope.Find(name)) return *value;
  if (constants.Find(name) != nullptr) {
    StatusOr<Tensor> decoded = constants.Decoded(name);
    if (!decoded.ok()) return decoded.status().WithContext(fmt::format("constant '{}'", name));
    RunValue value(std::move(decoded).value());
    value.borrowed = true;
    return value;
  }
  return InvalidModel("{} reads '{}', which nothing computed before it", reader, name);
}

StatusOr<Tensor> ReadValue(const Scope& scope, const ConstantTable& constants,
                           const std::string& name, const std::string& reader) {
  COLLAGE_ASSIGN_OR_RETURN(RunValue value, ReadRunValue(scope, constants, name, reader));
  if (value.is_sequence()) {
    return InvalidModel("{} reads '{}' as a tensor, but it is a sequence", reader, name);
  }
  return std::move(value.tensor);
}

std::string NodeLabel(const onnx::NodeProto& node) {
  if (!node.name().empty()) return fmt::format("{} node '{}'", node.op_type(), node.name());
  if (node.output_size() > 0) {
    return fmt::format("{} node (unnamed, output '{}')", node.op_type(), node.output(0));
  }
  return fmt::format("{} node (unnamed)", node.op_type());
}

namespace {

void CollectOuterReads(const onnx::GraphProto& graph, std::vector<std::string>& out) {
  std::unordered_set<std::string> defined;
  for (const auto& input : graph.input()) defined.insert(input.name());
  for (const auto& init : graph.initializer()) defined.insert(init.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& name : NamesRead(node)) {
      if (!defined.count(name)) out.push_back(name);
    }
    for (const std::string& name : node.output()) defined.insert(name);
  }
  for (const auto& output : graph.output()) {
    if (!defined.count(output.name())) out.push_back(output.name());
  }
}

}  // namespace

std::vector<std::string> NamesRead(const onnx::NodeProto& node) {
  std::vector<std::string> names;
  for (const std::string& input : node.input()) {
    if (!input.empty()) names.push_back(input);
  }
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.has_g()) CollectOuterReads(attr.g(), names);
    for (const onnx::GraphProto& g : attr.graphs()) CollectOuterReads(g, names);
  }
  std::vector<std::string> unique;
  std::unordered_set<std::string> seen;
  for (std::string& name : names) {
    if (seen.insert(name).second) unique.push_back(std::move(name));
  }
  return unique;
}

namespace {

// A node whose output shapes come from values computed in this run, on the reference kernels.
class HostNodeStep : public Step {
 public:
  static StatusOr<std::unique_ptr<Step>> Make(const onnx::NodeProto& proto, int64_t opset,
                                              const std::string& base_dir) {
    auto step = std::unique_ptr<HostNodeStep>(new HostNodeStep(proto, opset));
    Node& node = step->node_;
    node.name = proto.name().empty() ? NodeLabel(proto) : proto.name();
    node.op_type = proto.op_type();
    node.domain = proto.domain() == "ai.onnx" ? "" : proto.domain();
    if (OpRegistry::Global().Find(node.domain, node.op_type) == nullptr) {
      return Unsupported(
          "{}: its output shape comes from values the model computes at run time, and collage "
          "has no kernel of its own for {} to run it there",
          NodeLabel(proto), proto.op_type());
    }
    for (const onnx::AttributeProto& attr : proto.attribute()) {
      auto value = AttributeFromProto(attr, base_dir);
      if (!value.ok()) return value.status().WithContext(NodeLabel(proto));
      node.attributes.Set(attr.name(), std::move(value).value());
    }
    // The reference kernels read which inputs and outputs are present, not the ids.
    for (int i = 0; i < proto.input_size(); ++i) {
      node.inputs.push_back(proto.input(i).empty() ? kNoValue : static_cast<ValueId>(i));
    }
    for (int i = 0; i < proto.output_size(); ++i) {
      node.outputs.push_back(proto.output(i).empty() ? kNoValue : static_cast<ValueId>(i));
    }
    return std::unique_ptr<Step>(std::move(step));
  }

  Status Run(Scope& scope, const ConstantTable& constants) const override {
    std::vector<Tensor> inputs;
    for (const std::string& name : proto_->input()) {
      if (name.empty()) {
        inputs.emplace_back();
        continue;
      }
      COLLAGE_ASSIGN_OR_RETURN(Tensor value, ReadValue(scope, constants, name, Describe()));
      inputs.push_back(std::move(value));
    }
    StatusOr<std::vector<Tensor>> outputs = RunReferenceNode(node_, opset_, inputs);
    if (!outputs.ok()) return outputs.status().WithContext(Describe());
    for (int i = 0; i < proto_->output_size(); ++i) {
      if (!proto_->output(i).empty()) {
        scope.Set(proto_->output(i), std::move((*outputs)[static_cast<size_t>(i)]));
      }
    }
    return Status::Ok();
  }
  int num_compiled() const override { return 0; }
  const std::string& Describe() const override { return label_; }

 private:
  HostNodeStep(const onnx::NodeProto& proto, int64_t opset)
      : proto_(&proto), label_(NodeLabel(proto) + " (on the host)"), opset_(opset) {}
  const onnx::NodeProto* proto_;
  std::string label_;
  int64_t opset_;
  Node node_;
};

bool IsConstantNode(const onnx::NodeProto& node) {
  return (node.domain().empty() || node.domain() == "ai.onnx") && node.op_type() == "Constant";
}

}  // namespace

StatusOr<std::unique_ptr<StagedGraph>> StagedGraph::Build(
    const onnx::GraphProto& graph, std::shared_ptr<const StagedContext> context,
    const ConstantTable* outer, const std::function<bool(const std::string&)>& outer_foldable,
    int depth) {
  constexpr int kMaxDepth = 32;
  if (depth > kMaxDepth) {
    return Unsupported("graph '{}': If, Loop and Scan bodies nest deeper than {}", graph.name(),
                       kMaxDepth);
  }
  std::unique_ptr<StagedGraph> staged(new StagedGraph(graph, outer, context->model.base_dir));
  ConstantTable& constants = staged->constants_;
  std::unordered_set<std::string> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) {
    constants.Add(init);
    initializers.insert(init.name());
  }
  // Old exporters list initializers as inputs too: those are constants, not inputs.
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!initializers.count(input.name())) staged->formal_inputs_.push_back(input.name());
  }
  for (const onnx::NodeProto& node : graph.node()) {
    if (!IsConstantNode(node)) continue;
    if (node.output_size() != 1 || node.output(0).empty()) {
      return InvalidModel("{} must have exactly one output", NodeLabel(node));
    }
    COLLAGE_ASSIGN_OR_RETURN(Tensor value,
                             ConstantNodeValue(node, NodeLabel(node), context->model.base_dir));
    constants.AddValue(node.output(0), std::move(value));
  }
  const std::vector<bool> host = HostNodes(graph, context->opset, [&](const std::string& name) {
    return constants.Find(name) != nullptr || outer_foldable(name);
  });

  // Each node's stage: the latest of the stages of the values it reads, one past a host
  // step's. Values from outside the graph are ready at stage 0.
  std::unordered_set<std::string> defined_here;
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& out : node.output()) {
      if (!out.empty()) defined_here.insert(out);
    }
  }
  staged->num_values_ = defined_here.size() + staged->formal_inputs_.size();
  std::unordered_map<std::string, int> stage;
  std::vector<std::vector<const onnx::NodeProto*>> segment_nodes(1);
  std::vector<std::vector<const onnx::NodeProto*>> hosts_after(1);
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (IsConstantNode(node)) continue;
    int at = 0;
    for (const std::string& name : NamesRead(node)) {
      auto it = stage.find(name);
      if (it != stage.end()) {
        at = std::max(at, it->second);
      } else if (defined_here.count(name) && constants.Find(name) == nullptr) {
        return InvalidModel("{} reads '{}' before the node that computes it (the nodes are not "
                            "in topological order)",
                            NodeLabel(node), name);
      }
    }
    const int outputs_at = host[static_cast<size_t>(i)] ? at + 1 : at;
    if (static_cast<size_t>(outputs_at) >= segment_nodes.size()) {
      segment_nodes.resize(static_cast<size_t>(outputs_at) + 1);
      hosts_after.resize(static_cast<size_t>(outputs_at) + 1);
    }
    if (host[static_cast<size_t>(i)]) {
      hosts_after[static_cast<size_t>(at)].push_back(&node);
    } else {
      segment_nodes[static_cast<size_t>(at)].push_back(&node);
    }
    for (const std::string& out : node.output()) {
      if (!out.empty()) stage[out] = outputs_at;
    }
  }

  // The steps in order, and which segment computes each value.
  std::unordered_map<std::string, Segment*> computed_by;
  for (size_t k = 0; k < segment_nodes.size(); ++k) {
    if (!segment_nodes[k].empty()) {
      auto segment = std::make_unique<Segment>(context, graph, constants,
                                               static_cast<int>(staged->steps_.size()));
      segment->nodes = segment_nodes[k];
      segment->Label();
      std::unordered_set<std::string> inside;
      std::set<std::string> read;
      for (const onnx::NodeProto* node : segment->nodes) {
        for (const std::string& out : node->output()) inside.insert(out);
        for (const std::string& out : node->output()) computed_by[out] = segment.get();
      }
      for (const onnx::NodeProto* node : segment->nodes) {
        for (const std::string& name : NamesRead(*node)) {
          if (inside.count(name) || !read.insert(name).second) continue;
          // A constant of this graph or an outer one is embedded; everything else is fed.
          if (constants.Find(name) != nullptr) {
            segment->embedded.push_back(name);
          } else {
            segment->inputs.push_back(name);
          }
        }
      }
      staged->steps_.push_back(std::move(segment));
    }
    for (const onnx::NodeProto* node : hosts_after[k]) {
      std::unique_ptr<Step> step;
      if (IsControlFlow(*node)) {
        COLLAGE_ASSIGN_OR_RETURN(step, MakeControlFlowStep(*node, context, constants, depth));
      } else if (IsSequenceOp(*node) || node->op_type() == "Identity") {
        // An Identity is a host step only where it passes a sequence on.
        COLLAGE_ASSIGN_OR_RETURN(step, MakeSequenceStep(*node, context->opset));
      } else {
        COLLAGE_ASSIGN_OR_RETURN(step,
                                 HostNodeStep::Make(*node, context->opset, context->model.base_dir));
      }
      staged->steps_.push_back(std::move(step));
    }
  }

  // Each segment gives out what a later step, or the graph's outputs, reads.
  auto need = [&](const std::string& name, const Segment* reader) {
    auto it = computed_by.find(name);
    if (it == computed_by.end() || it->second == reader) return;
    std::vector<std::string>& outs = it->second->outputs;
    if (std::find(outs.begin(), outs.end(), name) == outs.end()) outs.push_back(name);
  };
  for (const auto& step : staged->steps_) {
    if (auto* segment = dynamic_cast<Segment*>(step.get())) {
      for (const std::string& name : segment->inputs) need(name, segment);
    }
  }
  for (size_t k = 0; k < hosts_after.size(); ++k) {
    for (const onnx::NodeProto* node : hosts_after[k]) {
      for (const std::string& name : NamesRead(*node)) need(name, nullptr);
    }
  }
  for (const onnx::ValueInfoProto& output : graph.output()) need(output.name(), nullptr);
  return staged;
}

StatusOr<std::vector<RunValue>> StagedGraph::Run(const Scope& outer,
                                                 const std::vector<RunValue>& inputs) const {
  Scope scope(&outer, num_values_);
  if (inputs.size() != formal_inputs_.size()) {
    return InvalidArgument("graph '{}' takes {} inputs, was given {}", graph_->name(),
                           formal_inputs_.size(), inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) scope.Set(formal_inputs_[i], inputs[i]);
  for (const auto& step : steps_) COLLAGE_RETURN_IF_ERROR(step->Run(scope, constants_));
  std::vector<RunValue> outputs;
  for (const onnx::ValueInfoProto& output : graph_->output()) {
    COLLAGE_ASSIGN_OR_RETURN(RunValue value, ReadRunValue(scope, constants_, output.name(),
                                                          "the outputs of graph '" + graph_->name() + "'"));
    outputs.push_back(std::move(value));
  }
  return outputs;
}

int StagedGraph::num_compiled() const {
  int total = 0;
  for (const auto& step : steps_) total += step->num_compiled();
  return total;
}

int StagedGraph::num_host_steps() const {
  int total = 0;
  for (const auto& step : steps_) total += dynamic_cast<const Segment*>(step.get()) ? 0 : 1;
  return total;
}

std::string StagedGraph::Describe(const std::string& indent) const {
  std::string text;
  for (const auto& step : steps_) text += indent + step->Describe() + "\n";
  return text;
}

}  // namespace collage
