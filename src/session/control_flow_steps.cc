#include "session/control_flow_steps.h"

#include <algorithm>
#include <string>

#include "collage/sdk/errors.h"
#include "onnx/onnx_pb.h"
#include "onnx/onnx_types.h"
#include "session/tensor_slices.h"

namespace collage {
namespace {

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const char* name) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

StatusOr<const onnx::GraphProto*> GraphAttribute(const onnx::NodeProto& node, const char* name) {
  const onnx::AttributeProto* attr = FindAttribute(node, name);
  if (attr == nullptr || !attr->has_g()) {
    return InvalidModel("{} has no graph attribute '{}'", NodeLabel(node), name);
  }
  return &attr->g();
}

std::vector<int64_t> IntsAttribute(const onnx::NodeProto& node, const char* name, size_t count) {
  const onnx::AttributeProto* attr = FindAttribute(node, name);
  if (attr == nullptr) return std::vector<int64_t>(count, 0);
  return {attr->ints().begin(), attr->ints().end()};
}

// Bodies read every outer value as it is at run time; only constants fold in them (their
// inputs change from one iteration, or one run, to the next).
StatusOr<std::unique_ptr<StagedGraph>> BuildBody(const onnx::GraphProto& body,
                                                 const std::shared_ptr<const StagedContext>& context,
                                                 const ConstantTable& constants, int depth) {
  for (const auto* list : {&body.input(), &body.output()}) {
    for (const onnx::ValueInfoProto& value : *list) {
      const onnx::TypeProto& type = value.type();
      const bool sequence_of_tensors =
          type.has_sequence_type() && type.sequence_type().elem_type().has_tensor_type();
      if (type.value_case() != onnx::TypeProto::VALUE_NOT_SET && !type.has_tensor_type() &&
          !sequence_of_tensors) {
        return Unsupported("body '{}': '{}' is an optional, a map or a sequence of those; "
                           "collage runs tensors and sequences of tensors",
                           body.name(), value.name());
      }
    }
  }
  return StagedGraph::Build(body, context, &constants, [](const std::string&) { return false; },
                            depth + 1);
}

int64_t BodyInputCount(const onnx::GraphProto& body) {
  std::vector<std::string> initializers;
  for (const auto& init : body.initializer()) initializers.push_back(init.name());
  int64_t count = 0;
  for (const auto& input : body.input()) {
    count += std::find(initializers.begin(), initializers.end(), input.name()) ==
             initializers.end();
  }
  return count;
}

// A scalar (or one-element) input of a control-flow op, of the dtype the spec gives it.
template <typename T>
StatusOr<T> ReadScalar(const Scope& scope, const ConstantTable& constants, const std::string& name,
                       const std::string& reader, const char* what) {
  COLLAGE_ASSIGN_OR_RETURN(Tensor value, ReadValue(scope, constants, name, reader));
  if (value.dtype() != DTypeOf<T>() || value.num_elements() != 1) {
    return InvalidArgument("{}: its {} '{}' must be one {} value, is {} {}", reader, what, name,
                           DTypeName(DTypeOf<T>()), DTypeName(value.dtype()),
                           ShapeToString(value.shape()));
  }
  return *value.data_as<T>();
}

// What a scan output of no iterations is: no rows of the body's declared element.
StatusOr<Tensor> EmptyStack(const onnx::ValueInfoProto& element, int64_t axis) {
  DType dtype = DType::kFloat32;
  Shape shape;
  bool known = element.type().has_tensor_type() && element.type().tensor_type().has_shape();
  if (element.type().has_tensor_type()) {
    COLLAGE_ASSIGN_OR_RETURN(dtype, DTypeFromOnnx(element.type().tensor_type().elem_type()));
    for (const auto& dim : element.type().tensor_type().shape().dim()) {
      known &= dim.has_dim_value();
      shape.push_back(dim.dim_value());
    }
  }
  if (!known) return Tensor(dtype, Shape{0});
  shape.insert(shape.begin() + std::clamp<int64_t>(axis, 0, static_cast<int64_t>(shape.size())), 0);
  return Tensor(dtype, shape);
}

// A scan output: the rows of every iteration stacked along `axis` (negative counts from the
// end of the stacked rank), or, after no iteration, none of the body's declared element.
StatusOr<Tensor> StackRows(const std::vector<Tensor>& rows, int64_t axis,
                           const onnx::ValueInfoProto& element, const std::string& what) {
  if (rows.empty()) return EmptyStack(element, axis);
  const int64_t rank = rows.front().rank() + 1;
  const int64_t at = axis < 0 ? axis + rank : axis;
  if (at < 0 || at >= rank) {
    return InvalidArgument("{} has no axis {} (rank {})", what, axis, rank);
  }
  return StackAlong(rows, at, what.c_str());
}

Status SetOutputs(const onnx::NodeProto& node, std::vector<RunValue> values, Scope& scope) {
  if (static_cast<int>(values.size()) < node.output_size()) {
    return InvalidModel("{} has {} outputs, its body gives {}", NodeLabel(node),
                        node.output_size(), values.size());
  }
  for (int i = 0; i < node.output_size(); ++i) {
    if (!node.output(i).empty()) scope.Set(node.output(i), std::move(values[static_cast<size_t>(i)]));
  }
  return Status::Ok();
}

class IfStep : public Step {
 public:
  IfStep(const onnx::NodeProto& node, std::unique_ptr<StagedGraph> then_branch,
         std::unique_ptr<StagedGraph> else_branch)
      : node_(&node),
        label_(NodeLabel(node)),
        then_(std::move(then_branch)),
        else_(std::move(else_branch)) {}

  Status Run(Scope& scope, const ConstantTable& constants) const override {
    COLLAGE_ASSIGN_OR_RETURN(bool cond, ReadScalar<bool>(scope, constants, node_->input(0),
                                                         Describe(), "condition"));
    StatusOr<std::vector<RunValue>> outputs = (cond ? then_ : else_)->Run(scope, {});
    if (!outputs.ok()) return outputs.status().WithContext(Describe());
    return SetOutputs(*node_, std::move(outputs).value(), scope);
  }
  int num_compiled() const override { return then_->num_compiled() + else_->num_compiled(); }
  const std::string& Describe() const override { return label_; }

 private:
  const onnx::NodeProto* node_;
  std::string label_;  // messages name the node at every run
  std::unique_ptr<StagedGraph> then_, else_;
};

class LoopStep : public Step {
 public:
  LoopStep(const onnx::NodeProto& node, std::unique_ptr<StagedGraph> body,
           std::shared_ptr<const StagedContext> context)
      : node_(&node), label_(NodeLabel(node)), body_(std::move(body)), context_(std::move(context)) {}

  Status Run(Scope& scope, const ConstantTable& constants) const override {
    const bool has_trip_count = !node_->input(0).empty();
    const bool has_condition = node_->input_size() > 1 && !node_->input(1).empty();
    if (!has_trip_count && !has_condition) {
      return InvalidArgument("{} has neither a trip count nor a condition: it would run forever",
                             Describe());
    }
    int64_t trip_count = 0;
    bool cond = true;
    if (has_trip_count) {
      COLLAGE_ASSIGN_OR_RETURN(trip_count, ReadScalar<int64_t>(scope, constants, node_->input(0),
                                                               Describe(), "trip count"));
    }
    if (has_condition) {
      COLLAGE_ASSIGN_OR_RETURN(cond, ReadScalar<bool>(scope, constants, node_->input(1),
                                                      Describe(), "condition"));
    }
    const size_t carried_count = static_cast<size_t>(std::max(node_->input_size() - 2, 0));
    std::vector<RunValue> carried;  // tensors or sequences
    for (size_t i = 0; i < carried_count; ++i) {
      COLLAGE_ASSIGN_OR_RETURN(RunValue value, ReadRunValue(scope, constants,
                                                            node_->input(static_cast<int>(i) + 2),
                                                            Describe()));
      carried.push_back(std::move(value));
    }
    const onnx::GraphProto& body = body_->proto();
    const size_t scan_count = static_cast<size_t>(body.output_size()) - 1 - carried_count;
    std::vector<std::vector<Tensor>> scans(scan_count);
    const int64_t limit = context_->options.max_loop_iterations;
    for (int64_t i = 0; (!has_trip_count || i < trip_count) && cond; ++i) {
      if (i >= limit) {
        return InvalidArgument("{} ran {} iterations without stopping (its trip count is {}); "
                               "a run stops a loop there (SessionOptions::max_loop_iterations)",
                               Describe(), limit,
                               has_trip_count ? std::to_string(trip_count) : "not given");
      }
      std::vector<RunValue> inputs = {Tensor::Scalar<int64_t>(i), Tensor::Scalar<bool>(cond)};
      inputs.insert(inputs.end(), carried.begin(), carried.end());
      StatusOr<std::vector<RunValue>> outputs = body_->Run(scope, inputs);
      if (!outputs.ok()) return outputs.status().WithContext(fmt::format("{}, iteration {}", Describe(), i));
      std::vector<RunValue>& out = *outputs;
      for (size_t k = 0; k < scan_count; ++k) {
        if (out[1 + carried_count + k].is_sequence()) {
          return InvalidModel("{}: scan output {} is a sequence; scan outputs are tensors",
                              Describe(), k);
        }
      }
      if (has_condition) {
        if (out[0].is_sequence()) {
          return InvalidModel("{}: its body gives the condition as a sequence", Describe());
        }
        const Tensor& next = out[0].tensor;
        if (next.dtype() != DType::kBool || next.num_elements() != 1) {
          return InvalidArgument("{}: iteration {} gave the condition as {} {}, not one bool",
                                 Describe(), i, DTypeName(next.dtype()), ShapeToString(next.shape()));
        }
        cond = *next.data_as<bool>();
      }
      for (size_t c = 0; c < carried_count; ++c) carried[c] = std::move(out[1 + c]);
      for (size_t k = 0; k < scan_count; ++k) {
        scans[k].push_back(std::move(out[1 + carried_count + k].tensor));
      }
    }
    std::vector<RunValue> results = std::move(carried);
    for (size_t k = 0; k < scan_count; ++k) {
      COLLAGE_ASSIGN_OR_RETURN(
          Tensor stacked, StackRows(scans[k], 0, body.output(static_cast<int>(1 + carried_count + k)),
                                    fmt::format("{}: scan output {}", Describe(), k)));
      results.push_back(std::move(stacked));
    }
    return SetOutputs(*node_, std::move(results), scope);
  }
  int num_compiled() const override { return body_->num_compiled(); }
  const std::string& Describe() const override { return label_; }

 private:
  const onnx::NodeProto* node_;
  std::string label_;  // messages name the node at every run
  std::unique_ptr<StagedGraph> body_;
  std::shared_ptr<const StagedContext> context_;  // the iteration limit
};

// Scan from opset 9 on: no batch axis, no sequence lengths.
class ScanStep : public Step {
 public:
  ScanStep(const onnx::NodeProto& node, std::unique_ptr<StagedGraph> body, int64_t scan_inputs)
      : node_(&node), label_(NodeLabel(node)), body_(std::move(body)), scan_inputs_(scan_inputs) {}

  Status Run(Scope& scope, const ConstantTable& constants) const override {
    const size_t states = static_cast<size_t>(node_->input_size() - scan_inputs_);
    const size_t scan_inputs = static_cast<size_t>(scan_inputs_);
    const onnx::GraphProto& body = body_->proto();
    const size_t scan_outputs = static_cast<size_t>(body.output_size()) - states;
    const std::vector<int64_t> in_axes = IntsAttribute(*node_, "scan_input_axes", scan_inputs);
    const std::vector<int64_t> in_dirs = IntsAttribute(*node_, "scan_input_directions", scan_inputs);
    const std::vector<int64_t> out_axes = IntsAttribute(*node_, "scan_output_axes", scan_outputs);
    const std::vector<int64_t> out_dirs =
        IntsAttribute(*node_, "scan_output_directions", scan_outputs);
    if (in_axes.size() != scan_inputs || in_dirs.size() != scan_inputs ||
        out_axes.size() != scan_outputs || out_dirs.size() != scan_outputs) {
      return InvalidModel("{}: its scan axes and directions must give one value per scan input "
                          "({}) and per scan output ({})",
                          Describe(), scan_inputs, scan_outputs);
    }
    std::vector<RunValue> state;  // read as run values: a Scan of no slices gives them back
    std::vector<Tensor> values;
    for (int i = 0; i < node_->input_size(); ++i) {
      COLLAGE_ASSIGN_OR_RETURN(RunValue value,
                               ReadRunValue(scope, constants, node_->input(i), Describe()));
      if (value.is_sequence()) {
        return InvalidModel("{}: input {} is a sequence; Scan reads tensors", Describe(), i);
      }
      if (static_cast<size_t>(i) < states) state.push_back(value);
      values.push_back(std::move(value.tensor));
    }
    // Every scan input is cut along its axis into the same number of slices.
    int64_t length = -1;
    std::vector<int64_t> axes(scan_inputs);
    for (size_t j = 0; j < scan_inputs; ++j) {
      const Tensor& x = values[states + j];
      const int64_t axis = in_axes[j] < 0 ? in_axes[j] + x.rank() : in_axes[j];
      if (axis < 0 || axis >= x.rank()) {
        return InvalidArgument("{}: scan input {} ({}) has no axis {}", Describe(), j,
                               ShapeToString(x.shape()), in_axes[j]);
      }
      axes[j] = axis;
      if (length >= 0 && x.dim(axis) != length) {
        return InvalidArgument("{}: scan inputs have {} and {} slices; they must agree", Describe(),
                               length, x.dim(axis));
      }
      length = x.dim(axis);
    }
    std::vector<std::vector<Tensor>> rows(scan_outputs);
    for (int64_t t = 0; t < length; ++t) {
      std::vector<RunValue> inputs = state;
      for (size_t j = 0; j < scan_inputs; ++j) {
        const int64_t at = in_dirs[j] == 1 ? length - 1 - t : t;
        inputs.emplace_back(SliceAlong(values[states + j], axes[j], at));
      }
      StatusOr<std::vector<RunValue>> outputs = body_->Run(scope, inputs);
      if (!outputs.ok()) return outputs.status().WithContext(fmt::format("{}, iteration {}", Describe(), t));
      for (const RunValue& value : *outputs) {
        if (value.is_sequence()) {
          return InvalidModel("{}: its body gives a sequence; Scan carries tensors", Describe());
        }
      }
      for (size_t s = 0; s < states; ++s) state[s] = std::move((*outputs)[s]);
      for (size_t k = 0; k < scan_outputs; ++k) {
        rows[k].push_back(std::move((*outputs)[states + k].tensor));
      }
    }
    std::vector<RunValue> results = std::move(state);
    for (size_t k = 0; k < scan_outputs; ++k) {
      if (out_dirs[k] == 1) std::reverse(rows[k].begin(), rows[k].end());
      COLLAGE_ASSIGN_OR_RETURN(
          Tensor stacked, StackRows(rows[k], out_axes[k], body.output(static_cast<int>(states + k)),
                                    fmt::format("{}: scan output {}", Describe(), k)));
      results.push_back(std::move(stacked));
    }
    return SetOutputs(*node_, std::move(results), scope);
  }
  int num_compiled() const override { return body_->num_compiled(); }
  const std::string& Describe() const override { return label_; }

 private:
  const onnx::NodeProto* node_;
  std::string label_;  // messages name the node at every run
  std::unique_ptr<StagedGraph> body_;
  int64_t scan_inputs_;
};

}  // namespace

StatusOr<std::unique_ptr<Step>> MakeControlFlowStep(const onnx::NodeProto& node,
                                                    std::shared_ptr<const StagedContext> context,
                                                    const ConstantTable& constants, int depth) {
  const std::string& op = node.op_type();
  if (op == "If") {
    if (node.input_size() != 1 || node.input(0).empty()) {
      return InvalidModel("{}: has {} inputs, expected the condition only", NodeLabel(node),
                          node.input_size());
    }
    COLLAGE_ASSIGN_OR_RETURN(const onnx::GraphProto* then_graph, GraphAttribute(node, "then_branch"));
    COLLAGE_ASSIGN_OR_RETURN(const onnx::GraphProto* else_graph, GraphAttribute(node, "else_branch"));
    for (const onnx::GraphProto* branch : {then_graph, else_graph}) {
      if (BodyInputCount(*branch) != 0 || branch->output_size() != node.output_size()) {
        return InvalidModel("{}: branch '{}' must take no inputs and give {} outputs",
                            NodeLabel(node), branch->name(), node.output_size());
      }
    }
    COLLAGE_ASSIGN_OR_RETURN(auto then_body, BuildBody(*then_graph, context, constants, depth));
    COLLAGE_ASSIGN_OR_RETURN(auto else_body, BuildBody(*else_graph, context, constants, depth));
    return std::unique_ptr<Step>(new IfStep(node, std::move(then_body), std::move(else_body)));
  }
  COLLAGE_ASSIGN_OR_RETURN(const onnx::GraphProto* body_graph, GraphAttribute(node, "body"));
  if (op == "Loop") {
    const int64_t carried = node.input_size() - 2;
    if (node.input_size() < 2 || BodyInputCount(*body_graph) != carried + 2 ||
        body_graph->output_size() < carried + 1 ||
        node.output_size() > body_graph->output_size() - 1) {
      return InvalidModel("{}: its body must take the iteration number, the condition and the "
                          "{} loop-carried values, and give the condition, those values and "
                          "the scan outputs",
                          NodeLabel(node), std::max<int64_t>(carried, 0));
    }
    COLLAGE_ASSIGN_OR_RETURN(auto body, BuildBody(*body_graph, context, constants, depth));
    return std::unique_ptr<Step>(new LoopStep(node, std::move(body), context));
  }
  // Scan
  if (context->opset < 9) {
    return Unsupported("{}: Scan before opset 9 (a batch axis and sequence lengths) is not "
                       "supported",
                       NodeLabel(node));
  }
  const onnx::AttributeProto* count = FindAttribute(node, "num_scan_inputs");
  if (count == nullptr || count->i() < 1 || count->i() > node.input_size()) {
    return InvalidModel("{}: num_scan_inputs must be 1 to its {} inputs", NodeLabel(node),
                        node.input_size());
  }
  const int64_t states = node.input_size() - count->i();
  if (BodyInputCount(*body_graph) != node.input_size() || body_graph->output_size() < states ||
      node.output_size() > body_graph->output_size()) {
    return InvalidModel("{}: its body must take the {} state values and one slice of each scan "
                        "input, and give the states and the scan outputs",
                        NodeLabel(node), states);
  }
  COLLAGE_ASSIGN_OR_RETURN(auto body, BuildBody(*body_graph, context, constants, depth));
  return std::unique_ptr<Step>(new ScanStep(node, std::move(body), count->i()));
}

}  // namespace collage
