#include "runtime/layout_conversion.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "collage/sdk/errors.h"

namespace collage {
namespace {

// Plain [N][C][S] ↔ channels-last [N][S][C] (S = the spatial dims flattened): per image, a
// C×S matrix transpose, done in square tiles so both sides are read and written in cache
// lines. Works on bytes, so it serves every dtype.
class ChannelsLastTranspose : public Kernel {
 public:
  ChannelsLastTranspose(const TensorType& type, bool to_channels_last)
      : to_channels_last_(to_channels_last), element_bytes_(DTypeSize(type.dtype)) {
    batch_ = type.shape[0];
    channels_ = type.shape[1];
    spatial_ = 1;
    for (size_t i = 2; i < type.shape.size(); ++i) spatial_ *= type.shape[i];
    input_layouts_ = {to_channels_last ? Layout::Plain() : Layout::ChannelsLast()};
    output_layouts_ = {to_channels_last ? Layout::ChannelsLast() : Layout::Plain()};
  }

  Status Run(const KernelBuffers& buffers) const override {
    // The element copied as an integer of its size: a memcpy of a run-time size per element
    // is a library call each, about ten times slower than the transpose's memory traffic.
    switch (element_bytes_) {
      case 1: Transpose<uint8_t>(buffers); break;
      case 2: Transpose<uint16_t>(buffers); break;
      case 4: Transpose<uint32_t>(buffers); break;
      case 8: Transpose<uint64_t>(buffers); break;
      default: return Internal("layout conversion of {}-byte elements", element_bytes_);
    }
    return Status();
  }

 private:
  template <typename Element>
  void Transpose(const KernelBuffers& buffers) const {
    const auto* src = static_cast<const Element*>(buffers.inputs[0]);
    auto* dst = static_cast<Element*>(buffers.outputs[0]);
    // Source viewed as rows × cols, destination as cols × rows.
    const int64_t rows = to_channels_last_ ? channels_ : spatial_;
    const int64_t cols = to_channels_last_ ? spatial_ : channels_;
    const int64_t image = rows * cols;
    constexpr int64_t kTile = 32;
    const int64_t row_tiles = (rows + kTile - 1) / kTile;
    const int64_t col_tiles = (cols + kTile - 1) / kTile;
#pragma omp parallel for collapse(2) schedule(static) if (batch_ * rows * cols > 16384)
    for (int64_t n = 0; n < batch_; ++n) {
      for (int64_t rt = 0; rt < row_tiles; ++rt) {
        const Element* s = src + n * image;
        Element* d = dst + n * image;
        for (int64_t ct = 0; ct < col_tiles; ++ct) {
          const int64_t r_end = std::min(rows, (rt + 1) * kTile);
          const int64_t c_end = std::min(cols, (ct + 1) * kTile);
          for (int64_t r = rt * kTile; r < r_end; ++r) {
            for (int64_t c = ct * kTile; c < c_end; ++c) d[c * rows + r] = s[r * cols + c];
          }
        }
      }
    }
  }

  bool to_channels_last_;
  size_t element_bytes_;
  int64_t batch_ = 0, channels_ = 0, spatial_ = 0;
};

// Two conversions in a row through an intermediate buffer at the start of the workspace
// (from → middle → to); the inner kernels' workspace follows it.
class ChainedConversion : public Kernel {
 public:
  ChainedConversion(std::unique_ptr<Kernel> first, std::unique_ptr<Kernel> second,
                    size_t middle_bytes)
      : first_(std::move(first)), second_(std::move(second)) {
    inner_workspace_offset_ = AlignUp(middle_bytes);
    workspace_bytes_ = inner_workspace_offset_ +
                       AlignUp(std::max(first_->workspace_bytes(), second_->workspace_bytes()));
    input_layouts_ = first_->input_layouts();
    output_layouts_ = second_->output_layouts();
  }

  Status Run(const KernelBuffers& buffers) const override {
    char* workspace = static_cast<char*>(buffers.workspace);
    void* middle = workspace;
    void* inner_workspace = workspace + inner_workspace_offset_;
    const void* first_in[] = {buffers.inputs[0]};
    void* first_out[] = {middle};
    COLLAGE_RETURN_IF_ERROR(first_->Run({first_in, first_out, inner_workspace}));
    const void* second_in[] = {middle};
    void* second_out[] = {buffers.outputs[0]};
    return second_->Run({second_in, second_out, inner_workspace});
  }

 private:
  static size_t AlignUp(size_t bytes) { return (bytes + 63) / 64 * 64; }
  std::unique_ptr<Kernel> first_, second_;
  size_t inner_workspace_offset_ = 0;
};

StatusOr<std::unique_ptr<Kernel>> CompileDirect(const TensorType& type, const Layout& from,
                                                const Layout& to,
                                                const BackendRegistry& registry) {
  const bool from_opaque = from.kind() == LayoutKind::kOpaque;
  const bool to_opaque = to.kind() == LayoutKind::kOpaque;
  if (!from_opaque && !to_opaque) {
    return std::unique_ptr<Kernel>(
        new ChannelsLastTranspose(type, to.kind() == LayoutKind::kChannelsLast));
  }
  // Ask the owner of the opaque side (the source first: it knows its own format best).
  const Layout& opaque = from_opaque ? from : to;
  const Backend* owner = registry.Find(opaque.owner());
  if (owner == nullptr) {
    return NotFound("no backend '{}' to convert its layout '{}'", opaque.owner(), opaque.name());
  }
  auto kernel = owner->CompileConversion(type, from, to);
  if (kernel.ok() || !(from_opaque && to_opaque)) return kernel;
  const Backend* other = registry.Find(to.owner());
  if (other == nullptr || other == owner) return kernel;
  return other->CompileConversion(type, from, to);
}

}  // namespace


StatusOr<std::unique_ptr<Kernel>> CompileLayoutConversion(const TensorType& type,
                                                          const Layout& from, const Layout& to,
                                                          const BackendRegistry& registry) {
  if (from == to) return InvalidArgument("no conversion needed: both layouts are {}", from.name());
  for (const Layout* layout : {&from, &to}) {
    if (!layout->AppliesTo(type)) {
      return InvalidArgument("layout {} does not apply to {}", layout->name(), type.ToString());
    }
  }
  auto direct = CompileDirect(type, from, to, registry);
  if (direct.ok()) return direct;
  if (from.kind() == LayoutKind::kPlain || to.kind() == LayoutKind::kPlain) return direct;
  // No single kernel: go through plain.
  auto first = CompileDirect(type, from, Layout::Plain(), registry);
  if (!first.ok()) return first.status();
  auto second = CompileDirect(type, Layout::Plain(), to, registry);
  if (!second.ok()) return second.status();
  return std::unique_ptr<Kernel>(
      new ChainedConversion(std::move(*first), std::move(*second), type.nbytes()));
}

}  // namespace collage
