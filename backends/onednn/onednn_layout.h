// Memory formats as collage layouts. A descriptor that is dense row-major is Layout::Plain,
// dense channels-last is Layout::ChannelsLast (so other backends read it without a
// conversion), anything else is Layout::Opaque("onednn", "<order>[:<blocks>]", bytes), e.g.
// format "abcd:16b" for nChw16c: the outer dims from the largest stride to the smallest, then
// the inner blocks, outermost first. The name and the tensor type rebuild the descriptor.
//
// The "_blocked" rule variants run activations in the format oneDNN's convolution picks for
// them (ActivationDesc): producers and consumers then agree without a reorder. On AVX-512
// with oneDNN 2.6 that is channels-last (brgconv); on AVX2 machines nChw8c.
#pragma once

#include <memory>
#include <string>

#include "onednn_util.h"

namespace collage::onednn {

// The canonical format for an activation of `shape`: what a convolution with format_tag::any
// chooses for it (cached per shape); plain for ranks other than 3..5 or when `blocked` is
// false.
dnnl::memory::desc ActivationDesc(const Shape& shape, bool blocked);
// True when ActivationDesc(shape, true) is not plain: only then is a "_blocked" variant a
// different candidate.
bool HasBlockedForm(const Shape& shape);

// A descriptor for `shape` in the same format as `like` (its dim order and blocks): pooling
// and other primitives whose optimized implementations want src and dst alike.
dnnl::memory::desc SameFormatAs(const dnnl::memory::desc& like, const Shape& shape);

// The collage layout of a descriptor.
Layout LayoutOf(const dnnl::memory::desc& desc);
// The descriptor a layout names for `type` (plain, channels-last or "onednn:...").
StatusOr<dnnl::memory::desc> DescOf(const TensorType& type, const Layout& layout);

// A reorder kernel between two layouts of `type`, at least one of them "onednn:...".
StatusOr<std::unique_ptr<Kernel>> CompileReorder(const TensorType& type, const Layout& from,
                                                 const Layout& to);
// A reorder kernel from `src` to `dst` (any descriptors over the same dims) that reads a buffer
// in layout `from` and writes one in `to`: a strided view's reorder is a data movement of
// its own (a channel shuffle).
StatusOr<std::unique_ptr<Kernel>> ReorderKernel(const std::string& what,
                                                const dnnl::memory::desc& src,
                                                const dnnl::memory::desc& dst, const Layout& from,
                                                const Layout& to);

}  // namespace collage::onednn
