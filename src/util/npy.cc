#include "util/npy.h"

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>

#include "collage/sdk/errors.h"
#include "util/file_io.h"
#include "collage/printable_text.h"

namespace collage {
namespace {

// Tensor data is copied byte for byte, which is only right on a little-endian host.
static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

constexpr std::string_view kMagic("\x93NUMPY", 6);
// numpy aligns the start of the data to 64 bytes (format.ARRAY_ALIGN).
constexpr size_t kArrayAlign = 64;
// numpy pads the header so the leading dim can grow in place (format.GROWTH_AXIS_MAX_DIGITS).
constexpr size_t kGrowthAxisMaxDigits = 21;

struct NpyType {
  DType dtype;
  char kind;  // numpy's dtype.kind
  int size;   // bytes per element
};

constexpr NpyType kNpyTypes[] = {
    {DType::kFloat16, 'f', 2}, {DType::kFloat32, 'f', 4}, {DType::kFloat64, 'f', 8},
    {DType::kInt8, 'i', 1},    {DType::kInt16, 'i', 2},   {DType::kInt32, 'i', 4},
    {DType::kInt64, 'i', 8},   {DType::kUInt8, 'u', 1},   {DType::kUInt16, 'u', 2},
    {DType::kUInt32, 'u', 4},  {DType::kUInt64, 'u', 8},  {DType::kBool, 'b', 1},
};

std::optional<NpyType> FindNpyType(char kind, int size) {
  for (const NpyType& t : kNpyTypes) {
    if (t.kind == kind && t.size == size) return t;
  }
  return std::nullopt;
}

std::optional<NpyType> FindNpyType(DType dtype) {
  for (const NpyType& t : kNpyTypes) {
    if (t.dtype == dtype) return t;
  }
  return std::nullopt;
}

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

// Parses the header: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// with exactly the keys descr, fortran_order and shape, in any order.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source)
      : text_(text), source_(source) {}

  Status Parse(NpyHeader* out) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    SkipSpace();
    if (!Consume('{')) return Error("expected '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      std::string key;
      COLLAGE_RETURN_IF_ERROR(ParseString(&key));
      SkipSpace();
      if (!Consume(':')) return Error("expected ':' after key '" + key + "'");
      SkipSpace();
      if (key == "descr" && !seen_descr) {
        if (Peek() == '[') {
          return Unsupported("{}: structured .npy dtypes are not supported", source_);
        }
        COLLAGE_RETURN_IF_ERROR(ParseString(&out->descr));
        seen_descr = true;
      } else if (key == "fortran_order" && !seen_fortran) {
        COLLAGE_RETURN_IF_ERROR(ParseBool(&out->fortran_order));
        seen_fortran = true;
      } else if (key == "shape" && !seen_shape) {
        COLLAGE_RETURN_IF_ERROR(ParseShape(&out->shape));
        seen_shape = true;
      } else {
        return Error("unexpected or repeated key '" + key + "'");
      }
      SkipSpace();
      if (Consume(',')) continue;
      if (Consume('}')) break;
      return Error("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("trailing characters after '}'");
    if (!seen_descr || !seen_fortran || !seen_shape) {
      return Error("missing one of the keys 'descr', 'fortran_order', 'shape'");
    }
    return Status::Ok();
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Consume(char c) {
    if (Peek() != c || pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  Status ParseString(std::string* out) {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Error("expected a quoted string");
    ++pos_;
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return Error("unterminated string");
    *out = std::string(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return Status::Ok();
  }

  Status ParseBool(bool* out) {
    if (text_.substr(pos_, 4) == "True") {
      *out = true;
      pos_ += 4;
    } else if (text_.substr(pos_, 5) == "False") {
      *out = false;
      pos_ += 5;
    } else {
      return Error("fortran_order must be True or False");
    }
    return Status::Ok();
  }

  Status ParseShape(Shape* out) {
    out->clear();
    if (!Consume('(')) return Error("shape must be a tuple");
    bool comma_after_last = false;
    while (true) {
      SkipSpace();
      if (Consume(')')) break;
      if (Peek() < '0' || Peek() > '9') return Error("shape holds a non-integer or negative dim");
      int64_t dim = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        const int digit = Peek() - '0';
        if (dim > (INT64_MAX - digit) / 10) return Error("shape dim overflows int64");
        dim = dim * 10 + digit;
        ++pos_;
      }
      Consume('L');  // Python 2 longs ("3L"), written by old numpy
      out->push_back(dim);
      SkipSpace();
      comma_after_last = Consume(',');
      if (comma_after_last) continue;
      if (Consume(')')) break;
      return Error("expected ',' or ')' in shape");
    }
    // "(3)" is just the int 3 in Python, not a tuple; numpy writes "(3,)" and rejects "(3)".
    if (out->size() == 1 && !comma_after_last) return Error("shape '(N)' is not a tuple");
    return Status::Ok();
  }

  // The header as one printable line: its closing newline and padding dropped, any other
  // control byte written as \xNN (a message is one line on the terminal).
  Status Error(const std::string& what) const {
    std::string_view shown = text_.substr(0, 200);
    while (!shown.empty() && (shown.back() == '\n' || shown.back() == ' ')) shown.remove_suffix(1);
    return InvalidArgument("{}: corrupt .npy header: {} (header: {})", source_, what,
                           PrintableText(shown));
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
};

uint32_t ReadLittleEndian(std::string_view bytes, size_t offset, size_t width) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i) {
    v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return v;
}

// Maps descr ("<f4", "|b1", ...) to a dtype, refusing what cannot be read as-is.
StatusOr<DType> DTypeFromDescr(const std::string& descr, const std::string& source) {
  if (descr.size() < 3) return Unsupported("{}: .npy dtype '{}' is not supported", source, descr);
  const char order = descr[0];
  const char kind = descr[1];
  int size = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9' || size > 1000) {
      return Unsupported("{}: .npy dtype '{}' is not supported", source, descr);
    }
    size = size * 10 + (descr[i] - '0');
  }
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    return Unsupported("{}: .npy dtype '{}' is not supported", source, descr);
  }
  const std::optional<NpyType> type = FindNpyType(kind, size);
  if (!type) {
    return Unsupported("{}: .npy dtype '{}' is not supported (supported: f2 f4 f8 i1 i2 i4 i8 "
                       "u1 u2 u4 u8 b1)", source, descr);
  }
  if (order == '>' && size > 1) {
    return Unsupported("{}: big-endian .npy data ('{}') is not supported; save it "
                       "little-endian (arr.astype(arr.dtype.newbyteorder('<')))", source, descr);
  }
  return type->dtype;
}

// Fortran and C order lay the data out alike when at most one dim exceeds 1 (or it is empty).
bool FortranOrderMatchesC(const Shape& shape) {
  int dims_above_one = 0;
  for (int64_t d : shape) {
    if (d == 0) return true;
    if (d > 1) ++dims_above_one;
  }
  return dims_above_one <= 1;
}

std::string ShapeRepr(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

}  // namespace

StatusOr<Tensor> NpyFromBytes(std::string_view bytes, const std::string& source_name) {
  const std::string& src = source_name;
  if (bytes.size() < kMagic.size() + 2 || bytes.substr(0, kMagic.size()) != kMagic) {
    return InvalidArgument("{}: not a .npy file (bad magic string)", src);
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  size_t length_width = 0;
  if (major == 1 && minor == 0) {
    length_width = 2;
  } else if ((major == 2 || major == 3) && minor == 0) {
    length_width = 4;  // 3.0 differs from 2.0 only in allowing a UTF-8 header
  } else {
    return Unsupported("{}: .npy format version {}.{} is not supported (only 1.0, 2.0, 3.0)", src,
                       major, minor);
  }
  const size_t prefix = kMagic.size() + 2 + length_width;
  if (bytes.size() < prefix) return InvalidArgument("{}: .npy file truncated in its header", src);
  const size_t header_len = ReadLittleEndian(bytes, kMagic.size() + 2, length_width);
  if (bytes.size() - prefix < header_len) {
    return InvalidArgument("{}: .npy file truncated: header says {} bytes, file has {}", src,
                           header_len, bytes.size() - prefix);
  }

  NpyHeader header;
  COLLAGE_RETURN_IF_ERROR(HeaderParser(bytes.substr(prefix, header_len), src).Parse(&header));
  COLLAGE_ASSIGN_OR_RETURN(DType dtype, DTypeFromDescr(header.descr, src));
  if (header.fortran_order && !FortranOrderMatchesC(header.shape)) {
    return Unsupported("{}: Fortran-ordered .npy data (shape {}) is not supported; save "
                       "np.ascontiguousarray(arr)", src, ShapeToString(header.shape));
  }

  // Element count and byte size, refusing overflow rather than wrapping. The dims other than
  // 0 must multiply within int64 even when a 0 makes the tensor empty: strides and element
  // counts over part of the shape are computed from them later.
  uint64_t expected = DTypeSize(dtype);
  bool empty = false;
  for (int64_t d : header.shape) {
    empty = empty || d == 0;
    if (d != 0 && (__builtin_mul_overflow(expected, static_cast<uint64_t>(d), &expected) ||
                   expected > static_cast<uint64_t>(INT64_MAX))) {
      return InvalidArgument("{}: .npy shape {} is too large", src, ShapeToString(header.shape));
    }
  }
  if (empty) expected = 0;
  const std::string_view data = bytes.substr(prefix + header_len);
  if (data.size() < expected) {
    return InvalidArgument("{}: .npy data truncated: shape {} of {} needs {} bytes, file has {}",
                           src, ShapeToString(header.shape), DTypeName(dtype), expected,
                           data.size());
  }
  if (data.size() > expected) {
    return InvalidArgument("{}: .npy file has {} bytes after the data of shape {} of {}", src,
                           data.size() - expected, ShapeToString(header.shape), DTypeName(dtype));
  }
  if (dtype == DType::kBool) {
    for (size_t i = 0; i < data.size(); ++i) {
      if (data[i] != 0 && data[i] != 1) {
        return InvalidArgument("{}: .npy bool element {} is {}, not 0 or 1", src, i,
                               static_cast<int>(static_cast<unsigned char>(data[i])));
      }
    }
  }

  Tensor tensor(dtype, header.shape);
  if (expected > 0) std::memcpy(tensor.data(), data.data(), expected);
  return tensor;
}

StatusOr<Tensor> ReadNpyFile(const std::string& path) {
  COLLAGE_ASSIGN_OR_RETURN(std::string bytes, ReadRegularFile(path));
  return NpyFromBytes(bytes, path);
}

StatusOr<std::string> NpyToBytes(const Tensor& tensor) {
  const std::optional<NpyType> type = FindNpyType(tensor.dtype());
  if (!type) {
    return Unsupported("cannot write a {} tensor as .npy (numpy has no such dtype here)",
                       DTypeName(tensor.dtype()));
  }
  const char order = type->size == 1 ? '|' : '<';
  std::string header = fmt::format("{{'descr': '{}{}{}', 'fortran_order': False, 'shape': {}, }}",
                                   order, type->kind, type->size, ShapeRepr(tensor.shape()));
  if (tensor.rank() > 0) {
    const size_t digits = std::to_string(tensor.dim(0)).size();
    if (digits < kGrowthAxisMaxDigits) header.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  // Like numpy: pad with spaces, end with '\n', so the data starts 64-byte aligned; the padding
  // is a full 64 when already aligned. Version 2.0 only when the length needs 4 bytes.
  size_t length_width = 2;
  size_t hlen = header.size() + 1;
  size_t padlen = kArrayAlign - (kMagic.size() + 2 + length_width + hlen) % kArrayAlign;
  if (hlen + padlen > 0xFFFF) {
    length_width = 4;
    padlen = kArrayAlign - (kMagic.size() + 2 + length_width + hlen) % kArrayAlign;
  }
  const size_t total_header = hlen + padlen;
  std::string out(kMagic);
  out += static_cast<char>(length_width == 2 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < length_width; ++i) out += static_cast<char>((total_header >> (8 * i)) & 0xFF);
  out += header;
  out.append(padlen, ' ');
  out += '\n';
  out.append(static_cast<const char*>(tensor.data()), tensor.nbytes());
  return out;
}

Status WriteNpyFile(const Tensor& tensor, const std::string& path) {
  COLLAGE_ASSIGN_OR_RETURN(std::string bytes, NpyToBytes(tensor));
  return WriteFileAtomically(path, bytes);
}

}  // namespace collage
