// Physical layout of a tensor in memory. The logical shape is always the ONNX one (NCHW for
// images); a layout says how the elements are placed. Kernels declare the layout of every
// input and output, and the runtime inserts conversion kernels where a producer and a
// consumer disagree.
#pragma once

#include <cstddef>
#include <string>

namespace collage {

struct TensorType;

enum class LayoutKind {
  kPlain,         // row-major in the logical (ONNX) dim order
  kChannelsLast,  // dim 1 (channels) moved last: NCHW → NHWC, NCDHW → NDHWC, NCW → NWC
  kOpaque,        // a backend's own format (e.g. oneDNN's blocked layouts); only the backend
                  // that named it can read, write or convert it
};

class Layout {
 public:
  Layout() = default;
  static Layout Plain() { return Layout(); }
  static Layout ChannelsLast();
  // A format of backend `owner` (its registered name, which converts it), described by
  // `format` completely: two opaque layouts of one owner with the same format hold the same
  // bytes for the same logical tensor, so no conversion is needed between them. `bytes` is
  // the buffer size it needs (blocked formats pad); it must be at least the plain size.
  static Layout Opaque(std::string owner, std::string format, size_t bytes);

  LayoutKind kind() const { return kind_; }
  // "plain", "channels_last" or, for an opaque layout, "<owner>:<format>".
  const std::string& name() const { return name_; }
  // The backend that named an opaque layout; empty for plain and channels-last.
  const std::string& owner() const { return owner_; }
  // What the owner said the opaque format is; empty for plain and channels-last.
  const std::string& format() const { return format_; }
  // Bytes a buffer of `type` in this layout needs.
  size_t BufferBytes(const TensorType& type) const;
  // Only rank-3..5 tensors have a channels-last form; plain and opaque apply to all ranks.
  bool AppliesTo(const TensorType& type) const;

  // True when both layouts place every element of `type` at the same byte (plain and
  // channels-last agree when there is one channel or one spatial position): no conversion is
  // needed between them.
  bool SameBytesAs(const Layout& other, const TensorType& type) const;

  bool operator==(const Layout& other) const {
    return kind_ == other.kind_ && owner_ == other.owner_ && name_ == other.name_ &&
           opaque_bytes_ == other.opaque_bytes_;
  }
  bool operator!=(const Layout& other) const { return !(*this == other); }

 private:
  LayoutKind kind_ = LayoutKind::kPlain;
  std::string name_ = "plain";
  std::string owner_;
  std::string format_;
  size_t opaque_bytes_ = 0;
};

}  // namespace collage
