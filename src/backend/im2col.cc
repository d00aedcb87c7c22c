#include "collage/sdk/im2col.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "collage/sdk/errors.h"

namespace collage {
namespace {

// Below this many elements a parallel region costs more than it saves.
constexpr int64_t kParallelMinElements = int64_t{1} << 15;

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// One row of col: kernel tap (kh, kw) of one channel, over every output pixel.
void Im2ColRow(const Conv2dGeometry& g, const float* xc, int64_t kh, int64_t kw, float* dst) {
  const int64_t koff_w = kw * g.dilation_w - g.pad_left;
  // Output columns whose input column ow * stride + koff_w lies inside [0, in_w).
  const int64_t lo = std::clamp<int64_t>(CeilDiv(-koff_w, g.stride_w), 0, g.out_w);
  const int64_t hi =
      std::clamp<int64_t>(FloorDiv(g.in_w - 1 - koff_w, g.stride_w) + 1, lo, g.out_w);
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    float* out = dst + oh * g.out_w;
    const int64_t ih = oh * g.stride_h + kh * g.dilation_h - g.pad_top;
    if (ih < 0 || ih >= g.in_h) {
      std::fill(out, out + g.out_w, 0.0f);
      continue;
    }
    const int64_t base = ih * g.in_w + koff_w;  // input index of output column 0 (may be < 0)
    std::fill(out, out + lo, 0.0f);
    if (g.stride_w == 1) {
      std::memcpy(out + lo, xc + base + lo, sizeof(float) * static_cast<size_t>(hi - lo));
    } else {
      for (int64_t ow = lo; ow < hi; ++ow) out[ow] = xc[base + ow * g.stride_w];
    }
    std::fill(out + hi, out + g.out_w, 0.0f);
  }
}

}  // namespace

StatusOr<Conv2dGeometry> ReadConv2dGeometry(const Node& node, const Shape& x, const Shape& w) {
  if (x.size() != 4 || w.size() != 4) {
    return Unsupported("Conv with X {} and W {}: only 2-D convolution is supported",
                       ShapeToString(x), ShapeToString(w));
  }
  const Attributes& attrs = node.attributes;
  Conv2dGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.in_h = x[2];
  g.in_w = x[3];
  g.out_channels = w[0];
  g.kernel_h = w[2];
  g.kernel_w = w[3];
  g.group = attrs.GetInt("group", 1);
  if (g.group < 1 || w[1] * g.group != g.in_channels || g.out_channels % g.group != 0) {
    return InvalidArgument("Conv group {} does not fit X {} and W {}", g.group, ShapeToString(x),
                           ShapeToString(w));
  }
  const std::vector<int64_t> strides = attrs.GetInts("strides", {1, 1});
  const std::vector<int64_t> dilations = attrs.GetInts("dilations", {1, 1});
  const std::vector<int64_t> pads = attrs.GetInts("pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4) {
    return InvalidArgument("Conv strides/dilations/pads have the wrong length");
  }
  g.stride_h = strides[0];
  g.stride_w = strides[1];
  g.dilation_h = dilations[0];
  g.dilation_w = dilations[1];
  const std::string auto_pad = attrs.GetString("auto_pad", "NOTSET");
  const int64_t in[2] = {g.in_h, g.in_w};
  const int64_t kernel[2] = {g.kernel_h, g.kernel_w};
  int64_t begin[2] = {pads[0], pads[1]};
  int64_t end[2] = {pads[2], pads[3]};
  int64_t out[2] = {0, 0};
  for (int d = 0; d < 2; ++d) {
    const int64_t s = strides[static_cast<size_t>(d)];
    const int64_t extent = (kernel[d] - 1) * dilations[static_cast<size_t>(d)] + 1;
    if (s < 1 || dilations[static_cast<size_t>(d)] < 1)
      return InvalidArgument("Conv stride/dilation < 1");
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // ONNX: output = ceil(in / stride); the odd pad goes at the end for SAME_UPPER.
      const int64_t o = (in[d] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (o - 1) * s + extent - in[d]);
      begin[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end[d] = total - begin[d];
    } else if (auto_pad == "VALID") {
      begin[d] = end[d] = 0;
    } else if (auto_pad != "NOTSET") {
      return Unsupported("Conv auto_pad '{}'", auto_pad);
    }
    const int64_t span = in[d] + begin[d] + end[d] - extent;
    if (span < 0) return InvalidArgument("Conv kernel is larger than the padded input");
    out[d] = span / s + 1;
  }
  g.pad_top = begin[0];
  g.pad_left = begin[1];
  g.out_h = out[0];
  g.out_w = out[1];
  return g;
}

void Im2Col(const Conv2dGeometry& g, const float* x, float* col) {
  const int64_t taps = g.kernel_h * g.kernel_w;
  const int64_t rows = g.patch();
  const int64_t width = g.out_pixels();
  const bool parallel = !omp_in_parallel() && rows * width >= kParallelMinElements;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = r / taps;
    const int64_t tap = r % taps;
    Im2ColRow(g, x + c * g.in_h * g.in_w, tap / g.kernel_w, tap % g.kernel_w, col + r * width);
  }
}

void AddBiasRelu(const Conv2dGeometry& g, float* image_out, std::span<const float> bias, bool relu,
                 int num_threads) {
  if (bias.empty() && !relu) return;
  const int64_t pixels = g.out_pixels();
  const bool parallel = !omp_in_parallel() && g.out_channels * pixels >= (int64_t{1} << 15);
#pragma omp parallel for schedule(static) num_threads(std::max(1, num_threads)) if (parallel)
  for (int64_t c = 0; c < g.out_channels; ++c) {
    float* plane = image_out + c * pixels;
    const float b = bias.empty() ? 0.0f : bias[static_cast<size_t>(c)];
    if (relu) {
      for (int64_t p = 0; p < pixels; ++p) plane[p] = std::max(plane[p] + b, 0.0f);
    } else {
      for (int64_t p = 0; p < pixels; ++p) plane[p] += b;
    }
  }
}

}  // namespace collage
