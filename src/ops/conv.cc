// Conv over any number of spatial dims (1-D, 2-D, 3-D, ...), with groups, strides, dilations,
// explicit or automatic padding and an optional bias.
//
// General case: per image and group, im2col lays the receptive fields out as a
// [C/group * kernel] x [output pixels] matrix and the shared GEMM multiplies the group's
// weights [M/group x C/group * kernel] by it (im2col is built for blocks of output pixels
// when the whole matrix would exceed 32 MiB). A 1x1 kernel with unit strides and no padding
// needs no im2col (the input already is that matrix). Depthwise-style convs (one input
// channel per group) would be GEMMs with a handful of rows, so they run a direct loop instead
// that accumulates shifted input rows, which vectorises along the output row.
#include <omp.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "collage/sdk/op_params.h"
#include "collage/sdk/op_registry.h"
#include "ops/conv_kernel.h"
#include "ops/kernels/gemm_kernel.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

// Division rounding towards -inf (offsets can be negative).
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// Below this many multiply-adds the helper loops stay single-threaded.
constexpr int64_t kParallelMinWork = 1 << 16;
// Largest im2col matrix built at once, in elements (32 MiB of float).
constexpr int64_t kColBudget = int64_t{8} << 20;

// The geometry (the shared reader's) and the bias's shape check.
StatusOr<ConvParams> ResolveConv(const Node& node, const Shape& x, const Shape& w,
                                 const Shape* bias) {
  COLLAGE_ASSIGN_OR_RETURN(ConvParams g, ReadConvParams(node, x, w));
  if (bias != nullptr && (bias->size() != 1 || (*bias)[0] != g.out_channels)) {
    return OpError(node, StatusCode::kInvalidModel, "bias B has shape {}, expected [{}]",
                   ShapeToString(*bias), g.out_channels);
  }
  return g;
}

Status InferConv(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 1));
  const bool has_bias = ctx.has_input(2);
  if (has_bias) COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 2));
  COLLAGE_ASSIGN_OR_RETURN(ConvParams g,
                           ResolveConv(ctx.node, ctx.input_type(0).shape, ctx.input_type(1).shape,
                                       has_bias ? &ctx.input_type(2).shape : nullptr));
  ctx.output_types[0] = TensorType{ctx.input_type(0).dtype, g.output_shape()};
  return Status::Ok();
}

// For one kernel position (offsets koff[d] = kernel index * dilation - pad_begin), calls
// row(out_offset, in_offset) for every output row (all spatial dims but the last), with
// in_offset the offset of the input row those output pixels read, or -1 when that row lies in
// the padding.
template <typename F>
void ForEachOutputRow(const ConvParams& g, const std::vector<int64_t>& koff, F&& row) {
  const size_t outer = g.out_spatial.size() - 1;
  const int64_t out_w = g.out_spatial.back();
  const int64_t in_w = g.in_spatial.back();
  std::vector<int64_t> o(outer, 0);
  int64_t rows = 1;
  for (size_t d = 0; d < outer; ++d) rows *= g.out_spatial[d];
  for (int64_t r = 0; r < rows; ++r) {
    int64_t in_offset = 0;
    bool inside = true;
    for (size_t d = 0; d < outer; ++d) {
      const int64_t i = o[d] * g.strides[d] + koff[d];
      inside = inside && i >= 0 && i < g.in_spatial[d];
      in_offset = in_offset * g.in_spatial[d] + i;
    }
    row(r * out_w, inside ? in_offset * in_w : -1);
    for (size_t d = outer; d-- > 0;) {  // odometer
      if (++o[d] < g.out_spatial[d]) break;
      o[d] = 0;
    }
  }
}

// The output pixels [lo, hi) of a row whose input column ow * stride + koff is inside [0, in_w).
std::pair<int64_t, int64_t> ValidColumns(int64_t out_w, int64_t in_w, int64_t stride,
                                         int64_t koff) {
  const int64_t lo = std::clamp<int64_t>(CeilDiv(-koff, stride), 0, out_w);
  const int64_t hi = std::clamp<int64_t>(FloorDiv(in_w - 1 - koff, stride) + 1, lo, out_w);
  return {lo, hi};
}

// Kernel offsets of kernel position `kpos` (row-major over the kernel dims).
std::vector<int64_t> KernelOffsets(const ConvParams& g, int64_t kpos) {
  const size_t nd = g.kernel.size();
  std::vector<int64_t> koff(nd);
  for (size_t d = nd; d-- > 0;) {
    koff[d] = (kpos % g.kernel[d]) * g.dilations[d] - g.pads_begin[d];
    kpos /= g.kernel[d];
  }
  return koff;
}

// The im2col matrix of output pixels [p0, p1) (row-major over the output's spatial dims):
// col[(c * kernel_size + kpos) * (p1 - p0) + p - p0] = the input value kernel position kpos of
// channel c reads for output pixel p, or 0 in the padding.
template <typename T>
void Im2Col(const ConvParams& g, const T* x, int64_t channels, int64_t p0, int64_t p1, T* col) {
  const int64_t kernel_size = NumElements(g.kernel);
  const int64_t in_size = NumElements(g.in_spatial);
  const int64_t out_w = g.out_spatial.back();
  const int64_t in_w = g.in_spatial.back();
  const int64_t stride = g.strides.back();
  const int64_t width = p1 - p0;
  const size_t outer = g.out_spatial.size() - 1;
  const int64_t rows = channels * kernel_size;
  const bool parallel = !omp_in_parallel() && rows * width >= kParallelMinWork;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t row = 0; row < rows; ++row) {
    const T* xc = x + (row / kernel_size) * in_size;
    T* dst = col + row * width;
    const std::vector<int64_t> koff = KernelOffsets(g, row % kernel_size);
    const int64_t kw = koff.back();
    const auto [lo, hi] = ValidColumns(out_w, in_w, stride, kw);
    // Output rows (all dims but the last) overlapping [p0, p1), each cut to [a, b).
    for (int64_t r = p0 / out_w; r * out_w < p1; ++r) {
      const int64_t a = std::max(p0 - r * out_w, int64_t{0});
      const int64_t b = std::min(p1 - r * out_w, out_w);
      T* d = dst + (r * out_w + a - p0);  // d[ow - a] is output pixel (r, ow)
      // The input row this output row reads, unless that lies in the padding.
      int64_t in_row = 0;
      int64_t in_row_stride = 1;
      int64_t rest = r;
      bool inside = true;
      for (size_t dim = outer; dim-- > 0;) {
        const int64_t i = (rest % g.out_spatial[dim]) * g.strides[dim] + koff[dim];
        rest /= g.out_spatial[dim];
        inside = inside && i >= 0 && i < g.in_spatial[dim];
        in_row += i * in_row_stride;
        in_row_stride *= g.in_spatial[dim];
      }
      const int64_t va = inside ? std::clamp(lo, a, b) : b;  // the valid part [va, vb)
      const int64_t vb = inside ? std::clamp(hi, va, b) : b;
      for (int64_t ow = a; ow < va; ++ow) d[ow - a] = T{0};
      if (va < vb) {
        const T* xrow = xc + in_row * in_w;
        if (stride == 1) {
          for (int64_t ow = va; ow < vb; ++ow) d[ow - a] = xrow[ow + kw];
        } else {
          for (int64_t ow = va; ow < vb; ++ow) d[ow - a] = xrow[ow * stride + kw];
        }
      }
      for (int64_t ow = vb; ow < b; ++ow) d[ow - a] = T{0};
    }
  }
}

// One input channel per group: y[n][oc] = bias + sum over kernel positions of the weight
// times the shifted (strided) input plane of channel oc / (M / group).
template <typename T>
void DirectDepthwise(const ConvParams& g, const T* x, const T* w, const T* bias, T* y) {
  const int64_t kernel_size = NumElements(g.kernel);
  const int64_t in_size = NumElements(g.in_spatial);
  const int64_t out_size = NumElements(g.out_spatial);
  const int64_t out_w = g.out_spatial.back();
  const int64_t in_w = g.in_spatial.back();
  const int64_t stride = g.strides.back();
  const int64_t per_group = g.out_channels / g.group;
  const int64_t planes = g.batch * g.out_channels;
  std::vector<std::vector<int64_t>> koffs;
  for (int64_t kpos = 0; kpos < kernel_size; ++kpos) koffs.push_back(KernelOffsets(g, kpos));
  const bool parallel = !omp_in_parallel() && planes * out_size * kernel_size >= kParallelMinWork;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const int64_t n = plane / g.out_channels;
    const int64_t oc = plane % g.out_channels;
    const T* xc = x + (n * g.in_channels + oc / per_group) * in_size;
    const T* wc = w + oc * kernel_size;
    T* yc = y + plane * out_size;
    std::fill(yc, yc + out_size, bias != nullptr ? bias[oc] : T{0});
    for (int64_t kpos = 0; kpos < kernel_size; ++kpos) {
      const T wv = wc[kpos];
      const std::vector<int64_t>& koff = koffs[static_cast<size_t>(kpos)];
      // Plain variables, not a structured binding: older clang cannot capture those.
      const std::pair<int64_t, int64_t> valid = ValidColumns(out_w, in_w, stride, koff.back());
      const int64_t lo = valid.first;
      const int64_t hi = valid.second;
      ForEachOutputRow(g, koff, [&](int64_t out_offset, int64_t in_offset) {
        if (in_offset < 0) return;
        T* d = yc + out_offset;
        const T* xrow = xc + in_offset;
        const int64_t kw = koff.back();
        if (stride == 1) {
          for (int64_t ow = lo; ow < hi; ++ow) d[ow] += wv * xrow[ow + kw];
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) d[ow] += wv * xrow[ow * stride + kw];
        }
      });
    }
  }
}

}  // namespace

template <typename T>
void ConvTyped(const ConvParams& g, const T* x, const T* w, const T* bias, T* y) {
  const int64_t in_size = NumElements(g.in_spatial);
  const int64_t out_size = NumElements(g.out_spatial);
  const int64_t kernel_size = NumElements(g.kernel);
  const int64_t cg = g.in_channels / g.group;
  const int64_t mg = g.out_channels / g.group;
  if (g.batch == 0 || g.out_channels == 0 || out_size == 0) return;
  if (cg == 1 && g.group > 1) {
    DirectDepthwise(g, x, w, bias, y);
    return;
  }
  const int64_t kdim = cg * kernel_size;
  bool pointwise = true;  // the input already is the im2col matrix
  for (size_t d = 0; d < g.kernel.size(); ++d) {
    pointwise = pointwise && g.kernel[d] == 1 && g.strides[d] == 1 && g.pads_begin[d] == 0 &&
                g.pads_end[d] == 0;
  }
  // The im2col matrix is built for blocks of output pixels so that it stays within
  // kColBudget elements (a 3-D conv's full matrix can be gigabytes).
  // kdim is 0 for zero input channels: the output is then just the bias (or zeros).
  const int64_t block =
      pointwise || kdim == 0 ? out_size : std::clamp(kColBudget / kdim, int64_t{1}, out_size);
  thread_local std::vector<T> col;
  if (!pointwise) col.resize(static_cast<size_t>(kdim * block));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const T* xg = x + (n * g.in_channels + grp * cg) * in_size;
      T* yg = y + (n * g.out_channels + grp * mg) * out_size;
      if (bias != nullptr) {  // start from the bias and let the GEMM accumulate onto it
        for (int64_t oc = 0; oc < mg; ++oc) {
          std::fill(yg + oc * out_size, yg + (oc + 1) * out_size, bias[grp * mg + oc]);
        }
      }
      for (int64_t p0 = 0; p0 < out_size; p0 += block) {
        const int64_t width = std::min(block, out_size - p0);
        const T* matrix = xg;  // pointwise: the input already is the matrix (one block)
        if (!pointwise) {
          Im2Col(g, xg, cg, p0, p0 + width, col.data());
          matrix = col.data();
        }
        Gemm<T>(false, false, mg, width, kdim, T{1}, w + grp * mg * kdim, kdim, matrix, width,
                bias != nullptr ? T{1} : T{0}, yg + p0, out_size);
      }
    }
  }
}

template void ConvTyped<float>(const ConvParams&, const float*, const float*, const float*, float*);
template void ConvTyped<double>(const ConvParams&, const double*, const double*, const double*,
                                double*);
template void ConvTyped<int32_t>(const ConvParams&, const int32_t*, const int32_t*, const int32_t*,
                                 int32_t*);

namespace {

Status RunConv(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const Tensor& w = ctx.inputs[1];
  const Tensor* bias = ctx.has_input(2) ? &ctx.inputs[2] : nullptr;
  COLLAGE_ASSIGN_OR_RETURN(ConvParams g, ResolveConv(ctx.node, x.shape(), w.shape(),
                                                       bias != nullptr ? &bias->shape() : nullptr));
  return DispatchFloat(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    ConvTyped<T>(g, x.data_as<T>(), w.data_as<T>(), bias != nullptr ? bias->data_as<T>() : nullptr,
                 ctx.outputs[0].data_as<T>());
  });
}

}  // namespace

void RegisterConvOps(OpRegistry& registry) {
  registry.Register(OpDef{.op_type = "Conv",
                          .domain = "",
                          .kind = OpKind::kOutEWiseFusable,
                          .min_inputs = 2,
                          .max_inputs = 3,
                          .min_outputs = 1,
                          .max_outputs = 1,
                          .infer = InferConv,
                          .run = RunConv});
}

}  // namespace collage
