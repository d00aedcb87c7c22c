#include "collage/sdk/graph.h"

#include <algorithm>

#include "collage/sdk/errors.h"

namespace collage {

bool TensorType::is_static() const {
  return dtype != DType::kUndefined &&
         std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; });
}

std::string TensorType::ToString() const {
  return std::string(DTypeName(dtype)) + "[" + (shape.empty() ? "" : ShapeToString(shape)) + "]";
}

ValueId Graph::AddValue(std::string name, TensorType type) {
  ValueId id = num_values();
  if (name.empty() || by_name_.count(name)) name = UniqueName(name.empty() ? "v" : name);
  by_name_[name] = id;
  Value v;
  v.name = std::move(name);
  v.type = std::move(type);
  values_.push_back(std::move(v));
  return id;
}

ValueId Graph::AddConstant(std::string name, Tensor data) {
  ValueId id = AddValue(std::move(name), TensorType{data.dtype(), data.shape()});
  values_.back().constant = std::move(data);
  return id;
}

StatusOr<NodeId> Graph::AddNode(Node node) {
  NodeId id = num_nodes();
  for (ValueId in : node.inputs) {
    if (in == kNoValue) continue;
    if (in < 0 || in >= num_values()) {
      return Internal("node '{}' ({}): input id {} out of range", node.name, node.op_type, in);
    }
  }
  for (ValueId out : node.outputs) {
    if (out == kNoValue) continue;
    if (out < 0 || out >= num_values()) {
      return Internal("node '{}' ({}): output id {} out of range", node.name, node.op_type, out);
    }
    if (values_[static_cast<size_t>(out)].producer != -1) {
      return InvalidModel("node '{}' ({}): output '{}' is already produced by another node",
                          node.name, node.op_type, values_[static_cast<size_t>(out)].name);
    }
  }
  for (ValueId in : node.inputs) {
    if (in != kNoValue) values_[static_cast<size_t>(in)].consumers.push_back(id);
  }
  for (ValueId out : node.outputs) {
    if (out != kNoValue) values_[static_cast<size_t>(out)].producer = id;
  }
  nodes_.push_back(std::move(node));
  return id;
}

std::optional<ValueId> Graph::FindValue(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::string Graph::UniqueName(const std::string& prefix) {
  for (;;) {
    std::string candidate = prefix + "_" + std::to_string(unique_counter_++);
    if (!by_name_.count(candidate)) return candidate;
  }
}

void Graph::RemoveDeadCode() {
  // Mark live nodes backwards from the outputs (nodes are in topological order).
  std::vector<bool> value_live(values_.size(), false);
  std::vector<bool> node_live(nodes_.size(), false);
  for (ValueId id : outputs_) value_live[static_cast<size_t>(id)] = true;
  for (ValueId id : inputs_) value_live[static_cast<size_t>(id)] = true;
  for (NodeId n = num_nodes() - 1; n >= 0; --n) {
    const Node& node = nodes_[static_cast<size_t>(n)];
    bool live = std::any_of(node.outputs.begin(), node.outputs.end(), [&](ValueId v) {
      return v != kNoValue && value_live[static_cast<size_t>(v)];
    });
    if (!live) continue;
    node_live[static_cast<size_t>(n)] = true;
    for (ValueId in : node.inputs) {
      if (in != kNoValue) value_live[static_cast<size_t>(in)] = true;
    }
  }
  // Outputs of live nodes stay (even if unused) so nodes keep their arity.
  for (NodeId n = 0; n < num_nodes(); ++n) {
    if (!node_live[static_cast<size_t>(n)]) continue;
    for (ValueId out : nodes_[static_cast<size_t>(n)].outputs) {
      if (out != kNoValue) value_live[static_cast<size_t>(out)] = true;
    }
  }

  std::vector<ValueId> value_map(values_.size(), kNoValue);
  std::vector<Value> new_values;
  for (size_t v = 0; v < values_.size(); ++v) {
    if (!value_live[v]) continue;
    value_map[v] = static_cast<ValueId>(new_values.size());
    new_values.push_back(std::move(values_[v]));
    new_values.back().producer = -1;
    new_values.back().consumers.clear();
  }
  std::vector<Node> old_nodes = std::move(nodes_);
  nodes_.clear();
  values_ = std::move(new_values);
  by_name_.clear();
  for (size_t v = 0; v < values_.size(); ++v) by_name_[values_[v].name] = static_cast<ValueId>(v);
  auto remap = [&](std::vector<ValueId>& ids) {
    for (ValueId& id : ids) {
      if (id != kNoValue) id = value_map[static_cast<size_t>(id)];
    }
  };
  remap(inputs_);
  remap(outputs_);
  for (size_t n = 0; n < old_nodes.size(); ++n) {
    if (!node_live[n]) continue;
    Node node = std::move(old_nodes[n]);
    remap(node.inputs);
    remap(node.outputs);
    NodeId id = num_nodes();
    for (ValueId in : node.inputs) {
      if (in != kNoValue) values_[static_cast<size_t>(in)].consumers.push_back(id);
    }
    for (ValueId out : node.outputs) {
      if (out != kNoValue) values_[static_cast<size_t>(out)].producer = id;
    }
    nodes_.push_back(std::move(node));
  }
}

Status Graph::Validate() const {
  std::vector<int> produced(values_.size(), 0);
  for (ValueId in : inputs_) {
    if (in < 0 || in >= num_values()) return Internal("graph input id {} out of range", in);
    produced[static_cast<size_t>(in)] = 1;
  }
  for (size_t v = 0; v < values_.size(); ++v) {
    if (values_[v].is_constant()) produced[v] = 1;
  }
  for (NodeId n = 0; n < num_nodes(); ++n) {
    const Node& node = nodes_[static_cast<size_t>(n)];
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      if (in < 0 || in >= num_values()) {
        return Internal("node '{}': input id {} out of range", node.name, in);
      }
      if (!produced[static_cast<size_t>(in)]) {
        return InvalidModel("node '{}' ({}) uses '{}' before it is produced", node.name,
                            node.op_type, values_[static_cast<size_t>(in)].name);
      }
    }
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      if (out < 0 || out >= num_values()) {
        return Internal("node '{}': output id {} out of range", node.name, out);
      }
      if (produced[static_cast<size_t>(out)]) {
        return InvalidModel("value '{}' is produced twice", values_[static_cast<size_t>(out)].name);
      }
      if (values_[static_cast<size_t>(out)].producer != n) {
        return Internal("value '{}': producer is not node '{}'",
                        values_[static_cast<size_t>(out)].name, node.name);
      }
      produced[static_cast<size_t>(out)] = 1;
    }
  }
  for (ValueId out : outputs_) {
    if (out < 0 || out >= num_values()) return Internal("graph output id {} out of range", out);
    if (!produced[static_cast<size_t>(out)]) {
      return InvalidModel("graph output '{}' is never produced", values_[static_cast<size_t>(out)].name);
    }
  }
  for (const Value& v : values_) {
    if (!v.type.is_static()) {
      return InvalidModel("value '{}' has no static type ({})", v.name, v.type.ToString());
    }
  }
  return Status::Ok();
}

int64_t Graph::NumParameters() const {
  int64_t n = 0;
  for (const Value& v : values_) {
    if (v.is_constant()) n += v.constant->num_elements();
  }
  return n;
}

}  // namespace collage
