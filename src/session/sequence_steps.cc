#include "session/sequence_steps.h"

#include "collage/sdk/errors.h"
#include "collage/sdk/op_registry.h"
#include "session/tensor_slices.h"

namespace collage {
namespace {

int64_t IntAttribute(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == name) return attr.i();
  }
  return fallback;
}

// A position input: one integer (int32 or int64), in [-size, limit].
StatusOr<int64_t> Position(const Tensor& tensor, int64_t size, int64_t limit,
                           const std::string& where) {
  int64_t at = 0;
  if (tensor.num_elements() != 1 ||
      (tensor.dtype() != DType::kInt64 && tensor.dtype() != DType::kInt32)) {
    return InvalidArgument("{}: the position must be one int32 or int64 value, is {} {}", where,
                           DTypeName(tensor.dtype()), ShapeToString(tensor.shape()));
  }
  at = tensor.dtype() == DType::kInt64 ? *tensor.data_as<int64_t>() : *tensor.data_as<int32_t>();
  if (at < -size || at > limit) {
    return InvalidArgument("{}: position {} is outside [{}, {}] for a sequence of {}", where, at,
                           -size, limit, size);
  }
  return at < 0 ? at + size : at;
}

// The same bytes under another shape (as many elements).
Tensor Reshaped(const Tensor& tensor, Shape shape) {
  Tensor out(tensor.dtype(), std::move(shape));
  if (tensor.nbytes() > 0) std::memcpy(out.data(), tensor.data(), tensor.nbytes());
  return out;
}

class SequenceStep : public Step {
 public:
  SequenceStep(const onnx::NodeProto& node, int64_t opset)
      : node_(&node), opset_(opset), label_(NodeLabel(node) + " (on the host)") {}

  Status Run(Scope& scope, const ConstantTable& constants) const override {
    const std::string& op = node_->op_type();
    std::vector<RunValue> inputs;
    for (const std::string& name : node_->input()) {
      if (name.empty()) {
        inputs.emplace_back();
        continue;
      }
      COLLAGE_ASSIGN_OR_RETURN(RunValue value, ReadRunValue(scope, constants, name, label_));
      inputs.push_back(std::move(value));
    }
    StatusOr<RunValue> result = Compute(op, inputs);
    if (!result.ok()) return result.status();
    if (node_->output_size() > 0 && !node_->output(0).empty()) {
      scope.Set(node_->output(0), std::move(result).value());
    }
    return Status::Ok();
  }
  int num_compiled() const override { return 0; }
  const std::string& Describe() const override { return label_; }

 private:
  StatusOr<const std::vector<Tensor>*> SequenceIn(const std::vector<RunValue>& inputs,
                                                  size_t i) const {
    if (i >= inputs.size() || !inputs[i].is_sequence()) {
      return InvalidModel("{}: input {} must be a sequence", label_, i);
    }
    return inputs[i].sequence.get();
  }
  StatusOr<Tensor> TensorIn(const std::vector<RunValue>& inputs, size_t i) const {
    if (i >= inputs.size() || inputs[i].is_sequence() || inputs[i].tensor.dtype() == DType::kUndefined) {
      return InvalidModel("{}: input {} must be a tensor", label_, i);
    }
    return inputs[i].tensor;
  }
  bool Has(const std::vector<RunValue>& inputs, size_t i) const {
    return i < inputs.size() && (inputs[i].is_sequence() || inputs[i].tensor.dtype() != DType::kUndefined);
  }

  StatusOr<RunValue> Compute(const std::string& op, const std::vector<RunValue>& inputs) const {
    if (op == "Identity") {
      if (inputs.empty()) return InvalidModel("{}: no input", label_);
      return inputs[0];
    }
    if (op == "SequenceEmpty") return RunValue::Sequence({});
    if (op == "SequenceConstruct") {
      std::vector<Tensor> items;
      for (size_t i = 0; i < inputs.size(); ++i) {
        COLLAGE_ASSIGN_OR_RETURN(Tensor item, TensorIn(inputs, i));
        if (!items.empty() && item.dtype() != items.front().dtype()) {
          return InvalidModel("{}: the tensors of a sequence share one dtype ({} and {})", label_,
                              DTypeName(items.front().dtype()), DTypeName(item.dtype()));
        }
        items.push_back(std::move(item));
      }
      return RunValue::Sequence(std::move(items));
    }
    COLLAGE_ASSIGN_OR_RETURN(const std::vector<Tensor>* sequence,
                             op == "SplitToSequence" ? StatusOr<const std::vector<Tensor>*>(nullptr)
                                                     : SequenceIn(inputs, 0));
    const int64_t size = sequence != nullptr ? static_cast<int64_t>(sequence->size()) : 0;
    if (op == "SequenceLength") return RunValue(Tensor::Scalar<int64_t>(size));
    if (op == "SequenceAt") {
      COLLAGE_ASSIGN_OR_RETURN(Tensor position, TensorIn(inputs, 1));
      COLLAGE_ASSIGN_OR_RETURN(int64_t at, Position(position, size, size - 1, label_));
      RunValue item((*sequence)[static_cast<size_t>(at)]);
      item.borrowed = true;  // a sequence may hold an input or a constant
      return item;
    }
    if (op == "SequenceInsert") {
      COLLAGE_ASSIGN_OR_RETURN(Tensor item, TensorIn(inputs, 1));
      if (size > 0 && item.dtype() != sequence->front().dtype()) {
        return InvalidModel("{}: inserts {} into a sequence of {}", label_, DTypeName(item.dtype()),
                            DTypeName(sequence->front().dtype()));
      }
      int64_t at = size;
      if (Has(inputs, 2)) {
        COLLAGE_ASSIGN_OR_RETURN(Tensor position, TensorIn(inputs, 2));
        COLLAGE_ASSIGN_OR_RETURN(at, Position(position, size, size, label_));
      }
      std::vector<Tensor> items = *sequence;
      items.insert(items.begin() + at, std::move(item));
      return RunValue::Sequence(std::move(items));
    }
    if (op == "SequenceErase") {
      if (size == 0) return InvalidArgument("{}: erases from an empty sequence", label_);
      int64_t at = size - 1;
      if (Has(inputs, 1)) {
        COLLAGE_ASSIGN_OR_RETURN(Tensor position, TensorIn(inputs, 1));
        COLLAGE_ASSIGN_OR_RETURN(at, Position(position, size, size - 1, label_));
      }
      std::vector<Tensor> items = *sequence;
      items.erase(items.begin() + at);
      return RunValue::Sequence(std::move(items));
    }
    if (op == "ConcatFromSequence") return Concat(*sequence);
    if (op == "SplitToSequence") return Split(inputs);
    return Unsupported("{}: not a sequence op", label_);
  }

  // Concat along `axis`, or stacked along a new one (new_axis = 1).
  StatusOr<RunValue> Concat(const std::vector<Tensor>& items) const {
    if (items.empty()) {
      return InvalidArgument("{}: concatenates an empty sequence (no dtype or shape to give)",
                             label_);
    }
    const int64_t rank = items.front().rank();
    const bool new_axis = IntAttribute(*node_, "new_axis", 0) == 1;
    const int64_t out_rank = rank + (new_axis ? 1 : 0);
    int64_t axis = IntAttribute(*node_, "axis", 0);
    if (axis < -out_rank || axis >= out_rank) {
      return InvalidModel("{}: axis {} is outside [{}, {}]", label_, axis, -out_rank, out_rank - 1);
    }
    if (axis < 0) axis += out_rank;
    if (new_axis) {
      COLLAGE_ASSIGN_OR_RETURN(Tensor stacked, StackAlong(items, axis, label_.c_str()));
      return RunValue(std::move(stacked));
    }
    Node concat;
    concat.name = label_;
    concat.op_type = "Concat";
    concat.attributes.Set("axis", axis);
    for (size_t i = 0; i < items.size(); ++i) concat.inputs.push_back(static_cast<ValueId>(i));
    concat.outputs = {static_cast<ValueId>(items.size())};
    StatusOr<std::vector<Tensor>> out = RunReferenceNode(concat, std::max<int64_t>(opset_, 13), items);
    if (!out.ok()) return out.status().WithContext(label_);
    return RunValue(std::move(out->front()));
  }

  // Pieces of `split` sizes (a scalar: pieces of that size, the last smaller; absent: pieces
  // of 1, without the axis unless keepdims).
  StatusOr<RunValue> Split(const std::vector<RunValue>& inputs) const {
    COLLAGE_ASSIGN_OR_RETURN(Tensor input, TensorIn(inputs, 0));
    const int64_t rank = input.rank();
    int64_t axis = IntAttribute(*node_, "axis", 0);
    if (axis < -rank || axis >= rank) {
      return InvalidModel("{}: axis {} is outside [{}, {}]", label_, axis, -rank, rank - 1);
    }
    if (axis < 0) axis += rank;
    const int64_t length = input.dim(axis);
    std::vector<int64_t> sizes;
    const bool given = Has(inputs, 1);
    if (given) {
      COLLAGE_ASSIGN_OR_RETURN(Tensor split, TensorIn(inputs, 1));
      if (split.dtype() != DType::kInt64 && split.dtype() != DType::kInt32) {
        return InvalidModel("{}: split must be int32 or int64", label_);
      }
      auto value = [&](int64_t i) {
        return split.dtype() == DType::kInt64 ? split.data_as<int64_t>()[i]
                                              : static_cast<int64_t>(split.data_as<int32_t>()[i]);
      };
      if (split.rank() == 0) {
        const int64_t piece = value(0);
        if (piece <= 0) return InvalidArgument("{}: split size {} is not positive", label_, piece);
        for (int64_t done = 0; done < length; done += piece) sizes.push_back(std::min(piece, length - done));
      } else {
        int64_t total = 0;
        for (int64_t i = 0; i < split.num_elements(); ++i) {
          if (value(i) < 0) return InvalidArgument("{}: split size {} is negative", label_, value(i));
          sizes.push_back(value(i));
          total += value(i);
        }
        if (total != length) {
          return InvalidArgument("{}: the split sizes add up to {}, the axis is {} long", label_,
                                 total, length);
        }
      }
    } else {
      sizes.assign(static_cast<size_t>(length), 1);
    }
    const bool keepdims = IntAttribute(*node_, "keepdims", 1) == 1 || given;
    std::vector<Tensor> pieces;
    int64_t start = 0;
    for (int64_t piece : sizes) {
      std::vector<Tensor> rows;
      for (int64_t i = 0; i < piece; ++i) rows.push_back(SliceAlong(input, axis, start + i));
      start += piece;
      Shape shape = input.shape();
      if (piece == 0) {
        shape[static_cast<size_t>(axis)] = 0;
        pieces.emplace_back(input.dtype(), shape);
        continue;
      }
      COLLAGE_ASSIGN_OR_RETURN(Tensor stacked, StackAlong(rows, axis, label_.c_str()));
      if (!keepdims) {
        shape.erase(shape.begin() + axis);
        stacked = Reshaped(stacked, shape);
      }
      pieces.push_back(std::move(stacked));
    }
    return RunValue::Sequence(std::move(pieces));
  }

  const onnx::NodeProto* node_;
  int64_t opset_;
  std::string label_;
};

}  // namespace

StatusOr<std::unique_ptr<Step>> MakeSequenceStep(const onnx::NodeProto& node, int64_t opset) {
  return std::unique_ptr<Step>(new SequenceStep(node, opset));
}

}  // namespace collage
