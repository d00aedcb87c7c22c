#include "onnx/onnx_attributes.h"

#include "onnx/onnx_pb.h"
#include "onnx/tensor_proto.h"
#include "collage/sdk/errors.h"

namespace collage {

namespace {

using AttrType = onnx::AttributeProto::AttributeType;

// IR version 1 models may leave `type` unset; the populated field then says what it is.
AttrType EffectiveType(const onnx::AttributeProto& proto) {
  if (proto.type() != onnx::AttributeProto::UNDEFINED) return proto.type();
  if (proto.ints_size() > 0) return onnx::AttributeProto::INTS;
  if (proto.floats_size() > 0) return onnx::AttributeProto::FLOATS;
  if (proto.strings_size() > 0) return onnx::AttributeProto::STRINGS;
  if (proto.tensors_size() > 0) return onnx::AttributeProto::TENSORS;
  if (proto.graphs_size() > 0) return onnx::AttributeProto::GRAPHS;
  if (proto.has_t()) return onnx::AttributeProto::TENSOR;
  if (proto.has_g()) return onnx::AttributeProto::GRAPH;
  if (proto.has_sparse_tensor()) return onnx::AttributeProto::SPARSE_TENSOR;
  if (proto.has_s()) return onnx::AttributeProto::STRING;
  if (proto.has_f()) return onnx::AttributeProto::FLOAT;
  if (proto.has_i()) return onnx::AttributeProto::INT;
  return onnx::AttributeProto::UNDEFINED;
}

}  // namespace

int EffectiveAttributeType(const onnx::AttributeProto& proto) { return EffectiveType(proto); }

StatusOr<Attribute> AttributeFromProto(const onnx::AttributeProto& proto,
                                       const std::string& base_dir) {
  if (!proto.ref_attr_name().empty()) {
    return Unsupported(
        "attribute '{}' refers to a function attribute ('{}'), which is not "
        "supported",
        proto.name(), proto.ref_attr_name());
  }
  const AttrType type = EffectiveType(proto);
  switch (type) {
    case onnx::AttributeProto::INT: return Attribute(static_cast<int64_t>(proto.i()));
    case onnx::AttributeProto::FLOAT: return Attribute(proto.f());
    case onnx::AttributeProto::STRING: return Attribute(proto.s());
    case onnx::AttributeProto::INTS:
      return Attribute(std::vector<int64_t>(proto.ints().begin(), proto.ints().end()));
    case onnx::AttributeProto::FLOATS:
      return Attribute(std::vector<float>(proto.floats().begin(), proto.floats().end()));
    case onnx::AttributeProto::STRINGS:
      return Attribute(std::vector<std::string>(proto.strings().begin(), proto.strings().end()));
    case onnx::AttributeProto::TENSOR: {
      auto tensor = TensorFromProto(proto.t(), base_dir);
      if (!tensor.ok()) return tensor.status().WithContext("attribute '" + proto.name() + "'");
      return Attribute(std::move(tensor).value());
    }
    case onnx::AttributeProto::UNDEFINED:
      return InvalidModel("attribute '{}' has no type and no value", proto.name());
    default: {
      const std::string type_name = onnx::AttributeProto::AttributeType_IsValid(type)
                                        ? onnx::AttributeProto::AttributeType_Name(type)
                                        : std::string("unknown");
      return Unsupported("attribute '{}' of type {} is not supported", proto.name(), type_name);
    }
  }
}

Status AttributeToProto(const std::string& name, const Attribute& attribute,
                        onnx::AttributeProto& proto) {
  proto.Clear();
  proto.set_name(name);
  if (const auto* i = std::get_if<int64_t>(&attribute)) {
    proto.set_type(onnx::AttributeProto::INT);
    proto.set_i(*i);
  } else if (const auto* f = std::get_if<float>(&attribute)) {
    proto.set_type(onnx::AttributeProto::FLOAT);
    proto.set_f(*f);
  } else if (const auto* s = std::get_if<std::string>(&attribute)) {
    proto.set_type(onnx::AttributeProto::STRING);
    proto.set_s(*s);
  } else if (const auto* ints = std::get_if<std::vector<int64_t>>(&attribute)) {
    proto.set_type(onnx::AttributeProto::INTS);
    for (int64_t v : *ints) proto.add_ints(v);
  } else if (const auto* floats = std::get_if<std::vector<float>>(&attribute)) {
    proto.set_type(onnx::AttributeProto::FLOATS);
    for (float v : *floats) proto.add_floats(v);
  } else if (const auto* strings = std::get_if<std::vector<std::string>>(&attribute)) {
    proto.set_type(onnx::AttributeProto::STRINGS);
    for (const std::string& v : *strings) proto.add_strings(v);
  } else if (const auto* t = std::get_if<Tensor>(&attribute)) {
    if (t->empty()) return Internal("attribute '{}' holds an empty tensor", name);
    proto.set_type(onnx::AttributeProto::TENSOR);
    TensorToProto(*t, "", *proto.mutable_t());
  } else {
    return Internal("attribute '{}' has an unknown type", name);
  }
  return Status::Ok();
}

}  // namespace collage
