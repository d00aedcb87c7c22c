#include "collage/sdk/layout.h"

#include "collage/sdk/graph.h"

namespace collage {

Layout Layout::ChannelsLast() {
  Layout layout;
  layout.kind_ = LayoutKind::kChannelsLast;
  layout.name_ = "channels_last";
  return layout;
}

Layout Layout::Opaque(std::string owner, std::string format, size_t bytes) {
  Layout layout;
  layout.kind_ = LayoutKind::kOpaque;
  layout.name_ = owner + ":" + format;
  layout.owner_ = std::move(owner);
  layout.format_ = std::move(format);
  layout.opaque_bytes_ = bytes;
  return layout;
}

size_t Layout::BufferBytes(const TensorType& type) const {
  if (kind_ == LayoutKind::kOpaque) return std::max(opaque_bytes_, type.nbytes());
  return type.nbytes();
}

bool Layout::AppliesTo(const TensorType& type) const {
  if (kind_ != LayoutKind::kChannelsLast) return true;
  return type.shape.size() >= 3 && type.shape.size() <= 5;
}

bool Layout::SameBytesAs(const Layout& other, const TensorType& type) const {
  if (*this == other) return true;
  if (kind_ == LayoutKind::kOpaque || other.kind_ == LayoutKind::kOpaque) return false;
  // One plain, one channels-last: [N][C][S] and [N][S][C] agree when C or S is 1.
  if (type.shape.size() < 3) return false;
  int64_t spatial = 1;
  for (size_t i = 2; i < type.shape.size(); ++i) spatial *= type.shape[i];
  return type.shape[1] == 1 || spatial == 1;
}

}  // namespace collage
