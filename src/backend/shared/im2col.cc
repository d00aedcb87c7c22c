#include "backend/shared/im2col.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "collage/sdk/errors.h"
#include "collage/sdk/op_params.h"

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
  COLLAGE_ASSIGN_OR_RETURN(const ConvParams p, ReadConvParams(node, x, w));
  Conv2dGeometry g;
  g.batch = p.batch;
  g.in_channels = p.in_channels;
  g.out_channels = p.out_channels;
  g.group = p.group;
  g.in_h = p.in_spatial[0];
  g.in_w = p.in_spatial[1];
  g.kernel_h = p.kernel[0];
  g.kernel_w = p.kernel[1];
  g.out_h = p.out_spatial[0];
  g.out_w = p.out_spatial[1];
  g.stride_h = p.strides[0];
  g.stride_w = p.strides[1];
  g.dilation_h = p.dilations[0];
  g.dilation_w = p.dilations[1];
  g.pad_top = p.pads_begin[0];
  g.pad_left = p.pads_begin[1];
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
