#include "onnx/tensor_proto.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "onnx/onnx_pb.h"
#include "onnx/onnx_types.h"
#include "collage/sdk/errors.h"
#include "util/file_io.h"

namespace collage {

// raw_data is little-endian by the ONNX spec; we copy it as is.
static_assert(std::endian::native == std::endian::little, "collage assumes a little-endian host");

namespace {

std::string TensorLabel(const onnx::TensorProto& proto) {
  return proto.name().empty() ? std::string("tensor") : fmt::format("tensor '{}'", proto.name());
}

// bool must hold 0 or 1 (anything else is undefined behaviour when read as bool).
void NormalizeBools(Tensor& tensor) {
  if (tensor.dtype() != DType::kBool) return;
  auto* bytes = static_cast<uint8_t*>(tensor.data());
  for (int64_t i = 0; i < tensor.num_elements(); ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
}

// Copies a typed repeated field into the tensor, converting each element to T. For the
// 16-bit float types the int32 field holds the bit pattern in its low 16 bits.
template <typename T, typename Field>
void CopyField(const Field& field, Tensor& tensor) {
  T* out = static_cast<T*>(tensor.data());
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
}

Status CopyTypedFields(const onnx::TensorProto& proto, Tensor& tensor) {
  const int64_t n = tensor.num_elements();
  auto check_count = [&](int count, const char* field) -> Status {
    if (count != n) {
      return InvalidModel("{} has {} values in {} for shape {} ({} elements)", TensorLabel(proto),
                          count, field, ShapeToString(tensor.shape()), n);
    }
    return Status::Ok();
  };
  switch (tensor.dtype()) {
    case DType::kFloat32:
      COLLAGE_RETURN_IF_ERROR(check_count(proto.float_data_size(), "float_data"));
      CopyField<float>(proto.float_data(), tensor);
      break;
    case DType::kFloat64:
      COLLAGE_RETURN_IF_ERROR(check_count(proto.double_data_size(), "double_data"));
      CopyField<double>(proto.double_data(), tensor);
      break;
    case DType::kInt64:
      COLLAGE_RETURN_IF_ERROR(check_count(proto.int64_data_size(), "int64_data"));
      CopyField<int64_t>(proto.int64_data(), tensor);
      break;
    case DType::kUInt32:
      COLLAGE_RETURN_IF_ERROR(check_count(proto.uint64_data_size(), "uint64_data"));
      CopyField<uint32_t>(proto.uint64_data(), tensor);
      break;
    case DType::kUInt64:
      COLLAGE_RETURN_IF_ERROR(check_count(proto.uint64_data_size(), "uint64_data"));
      CopyField<uint64_t>(proto.uint64_data(), tensor);
      break;
    case DType::kInt32:
      COLLAGE_RETURN_IF_ERROR(check_count(proto.int32_data_size(), "int32_data"));
      CopyField<int32_t>(proto.int32_data(), tensor);
      break;
    case DType::kInt16:
      COLLAGE_RETURN_IF_ERROR(check_count(proto.int32_data_size(), "int32_data"));
      CopyField<int16_t>(proto.int32_data(), tensor);
      break;
    case DType::kInt8:
      COLLAGE_RETURN_IF_ERROR(check_count(proto.int32_data_size(), "int32_data"));
      CopyField<int8_t>(proto.int32_data(), tensor);
      break;
    case DType::kUInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      COLLAGE_RETURN_IF_ERROR(check_count(proto.int32_data_size(), "int32_data"));
      CopyField<uint16_t>(proto.int32_data(), tensor);
      break;
    case DType::kUInt8:
      COLLAGE_RETURN_IF_ERROR(check_count(proto.int32_data_size(), "int32_data"));
      CopyField<uint8_t>(proto.int32_data(), tensor);
      break;
    case DType::kBool: {
      COLLAGE_RETURN_IF_ERROR(check_count(proto.int32_data_size(), "int32_data"));
      auto* out = static_cast<uint8_t*>(tensor.data());
      for (int i = 0; i < proto.int32_data_size(); ++i) out[i] = proto.int32_data(i) != 0 ? 1 : 0;
      break;
    }
    default:
      return Unsupported("{} has element type {}, which is not supported", TensorLabel(proto),
                         DTypeName(tensor.dtype()));
  }
  return Status::Ok();
}

StatusOr<int64_t> ParseNonNegative(const onnx::TensorProto& proto, const std::string& key,
                                   const std::string& text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) {
    return InvalidModel("{}: external data {} '{}' is not a non-negative integer",
                        TensorLabel(proto), key, text);
  }
  return v;
}

// Reads external data (the ONNX external-data convention: location relative to the model's
// directory, optional offset and length). Locations that leave the model's directory are
// refused: a model file must not make us read arbitrary files.
StatusOr<Tensor> ReadExternalData(const onnx::TensorProto& proto, const std::string& base_dir,
                                  DType dtype, const Shape& shape, int64_t nbytes) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      COLLAGE_ASSIGN_OR_RETURN(offset, ParseNonNegative(proto, "offset", entry.value()));
    } else if (entry.key() == "length") {
      COLLAGE_ASSIGN_OR_RETURN(length, ParseNonNegative(proto, "length", entry.value()));
    }
  }
  if (location.empty()) {
    return InvalidModel("{} has external data without a location", TensorLabel(proto));
  }
  const std::filesystem::path relative(location);
  if (relative.is_absolute() || relative.has_root_name()) {
    return InvalidModel(
        "{}: external data location '{}' is an absolute path; it must be "
        "relative to the model's directory",
        TensorLabel(proto), location);
  }
  for (const auto& part : relative) {
    if (part == "..") {
      return InvalidModel("{}: external data location '{}' leaves the model's directory",
                          TensorLabel(proto), location);
    }
  }
  if (length >= 0 && length != nbytes) {
    return InvalidModel("{}: external data length {} does not match shape {} of {} ({} bytes)",
                        TensorLabel(proto), length, ShapeToString(shape), DTypeName(dtype), nbytes);
  }
  // Without the model's own directory (a model given as bytes) there is no place external
  // data may safely come from.
  if (base_dir.empty()) {
    return Unsupported("{}: external data '{}' can only be read for a model loaded from a file",
                       TensorLabel(proto), location);
  }
  const std::string context = TensorLabel(proto) + ": external data";
  // Opened inside the model's folder with symlinks refused at every step: a model (or an
  // archive it came in) must not make us read a file elsewhere on the machine.
  auto file = ConfinedFile::Open(base_dir, location);
  if (!file.ok()) return file.status().WithContext(context);
  // The file must hold the whole range before anything is allocated: dims are untrusted.
  if (offset > file->size() || nbytes > file->size() - offset) {
    return InvalidModel("{}: '{}' has {} bytes, but {} bytes are needed at offset {}", context,
                        file->path(), file->size(), nbytes, offset);
  }
  Tensor tensor(dtype, shape);
  Status read = file->ReadRange(offset, nbytes, tensor.data());
  if (!read.ok()) return read.WithContext(context);
  NormalizeBools(tensor);
  return tensor;
}

}  // namespace

StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir) {
  auto dtype = DTypeFromOnnx(proto.data_type());
  if (!dtype.ok()) return dtype.status().WithContext(TensorLabel(proto));
  if (proto.has_segment()) {
    return Unsupported("{} is segmented, which is not supported", TensorLabel(proto));
  }
  Shape shape(proto.dims().begin(), proto.dims().end());
  const std::optional<int64_t> bytes = CheckedNumBytes(TensorType{*dtype, shape});
  if (!bytes) {
    return InvalidModel("{} has invalid dims [{}]", TensorLabel(proto), fmt::join(shape, ", "));
  }

  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return ReadExternalData(proto, base_dir, *dtype, shape, *bytes);
  }
  if (proto.has_raw_data()) {
    // Size checked before allocating: dims in a model are untrusted.
    if (static_cast<int64_t>(proto.raw_data().size()) != *bytes) {
      return InvalidModel("{} has {} bytes of raw_data, but shape {} of {} needs {}",
                          TensorLabel(proto), proto.raw_data().size(), ShapeToString(shape),
                          DTypeName(*dtype), *bytes);
    }
    Tensor tensor(*dtype, shape);
    if (*bytes > 0)
      std::memcpy(tensor.data(), proto.raw_data().data(), static_cast<size_t>(*bytes));
    NormalizeBools(tensor);
    return tensor;
  }
  // Typed fields. The allocation is bounded by the values actually present (dims are
  // untrusted); the exact count of the field the dtype uses is checked while copying.
  const int64_t n = *CheckedNumElements(shape);
  const int64_t available =
      std::max({proto.float_data_size(), proto.int32_data_size(), proto.int64_data_size(),
                proto.double_data_size(), proto.uint64_data_size()});
  if (n > available) {
    if (available == 0) {
      return InvalidModel("{} of shape {} has no data", TensorLabel(proto), ShapeToString(shape));
    }
    return InvalidModel("{} has {} values for shape {} ({} elements)", TensorLabel(proto),
                        available, ShapeToString(shape), n);
  }
  Tensor tensor(*dtype, shape);
  COLLAGE_RETURN_IF_ERROR(CopyTypedFields(proto, tensor));
  return tensor;
}

void TensorToProto(const Tensor& tensor, const std::string& name, onnx::TensorProto& proto) {
  proto.Clear();
  proto.set_name(name);
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  const size_t nbytes = tensor.empty() ? 0 : tensor.nbytes();
  proto.set_raw_data(static_cast<const char*>(tensor.data()), nbytes);
}

StatusOr<Tensor> ReadTensorProtoFile(const std::string& path, std::string* name) {
  COLLAGE_ASSIGN_OR_RETURN(std::string bytes, ReadRegularFile(path, INT32_MAX, "protobuf cannot parse a TensorProto file over 2 GiB"));
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgument("'{}' is not a TensorProto file (protobuf parse failed)", path);
  }
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  auto tensor = TensorFromProto(proto, base_dir);
  if (!tensor.ok()) return tensor.status().WithContext(path);
  if (name != nullptr) *name = proto.name();
  return tensor;
}

Status WriteTensorProtoFile(const Tensor& tensor, const std::string& name,
                            const std::string& path) {
  if (tensor.empty()) return InvalidArgument("cannot write an empty tensor to '{}'", path);
  onnx::TensorProto proto;
  TensorToProto(tensor, name, proto);
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    return Internal("cannot serialize tensor '{}' (larger than 2 GiB?)", name);
  }
  return WriteFileAtomically(path, bytes);
}

StatusOr<Tensor> ConstantNodeValue(const onnx::NodeProto& node, const std::string& where,
                                   const std::string& base_dir) {
  if (node.attribute_size() != 1) {
    return InvalidModel("{} must have exactly one attribute, has {}", where,
                        node.attribute_size());
  }
  const onnx::AttributeProto& attr = node.attribute(0);
  if (attr.name() == "value") {
    auto t = TensorFromProto(attr.t(), base_dir);
    if (!t.ok()) return t.status().WithContext(where);
    return t;
  }
  if (attr.name() == "value_float") return Tensor::Scalar<float>(attr.f());
  if (attr.name() == "value_floats") {
    return Tensor::FromVector<float>(
        {attr.floats_size()}, std::vector<float>(attr.floats().begin(), attr.floats().end()));
  }
  if (attr.name() == "value_int") return Tensor::Scalar<int64_t>(attr.i());
  if (attr.name() == "value_ints") {
    return Tensor::FromVector<int64_t>(
        {attr.ints_size()}, std::vector<int64_t>(attr.ints().begin(), attr.ints().end()));
  }
  if (attr.name() == "value_string" || attr.name() == "value_strings" ||
      attr.name() == "sparse_value") {
    return Unsupported("{}: attribute '{}' is not supported (string and sparse constants)",
                       where, attr.name());
  }
  return InvalidModel("{} has an unknown attribute '{}'", where, attr.name());
}

}  // namespace collage
