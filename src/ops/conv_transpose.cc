// ConvTranspose (1-D, 2-D, 3-D, any spatial rank really): the adjoint of Conv. Each input
// pixel scatters a kernel-sized patch into the output, which is computed as one GEMM per
// image and group (col = W_g^T · X_g, rows = output channel × kernel offset, columns = input
// pixels) followed by col2im, which adds every column entry into its output pixel.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "collage/sdk/op_params.h"
#include "ops/kernels/gemm_kernel.h"
#include "ops/op_helpers.h"
#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

// Below this many multiply-adds the thread fork costs more than it saves.
constexpr int64_t kParallelMinWork = 1 << 16;

// Division rounding towards -inf / +inf (pads and offsets can be negative).
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

Status InferConvTranspose(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 1));
  const Shape& x = ctx.input_type(0).shape;
  COLLAGE_ASSIGN_OR_RETURN(ConvTransposeParams g,
                           ReadConvTransposeParams(ctx.node, x, ctx.input_type(1).shape));
  if (ctx.has_input(2)) {
    COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 2));
    if (ctx.input_type(2).shape != Shape{g.out_channels}) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "bias B has shape {}, expected {}",
                     ShapeToString(ctx.input_type(2).shape), g.out_channels);
    }
  }
  ctx.output_types[0] = TensorType{ctx.input_type(0).dtype, g.output_shape()};
  return Status::Ok();
}

template <typename T>
void Col2ImTyped(const ConvTransposeParams& g, int64_t channels, const T* col,
                 int64_t col_row_stride, T* dst) {
  const size_t nd = g.in_spatial.size();
  const std::vector<int64_t> in_strides = StridesOf(g.in_spatial);
  const std::vector<int64_t> out_strides = StridesOf(g.out_spatial);
  const std::vector<int64_t> k_strides = StridesOf(g.kernel);
  const int64_t kernel_size = NumElements(g.kernel);
  const int64_t in_size = NumElements(g.in_spatial);
  const int64_t out_size = NumElements(g.out_spatial);
  // Per kernel offset and dim, the input range [lo, hi) whose output coordinate
  // i * stride + offset lands inside; the same for every channel, so computed once.
  std::vector<int64_t> lo(static_cast<size_t>(kernel_size) * nd), hi(lo.size()), offset(lo.size());
  std::vector<char> empty(static_cast<size_t>(kernel_size), 0);
  for (int64_t k_index = 0; k_index < kernel_size; ++k_index) {
    int64_t k_flat = k_index;
    for (size_t d = 0; d < nd; ++d) {
      const size_t at = static_cast<size_t>(k_index) * nd + d;
      const int64_t k = k_flat / k_strides[d];
      k_flat %= k_strides[d];
      offset[at] = k * g.dilations[d] - g.pads_begin[d];
      lo[at] = std::max<int64_t>(0, CeilDiv(-offset[at], g.strides[d]));
      hi[at] =
          std::min(g.in_spatial[d], FloorDiv(g.out_spatial[d] - 1 - offset[at], g.strides[d]) + 1);
      if (lo[at] >= hi[at]) empty[static_cast<size_t>(k_index)] = 1;
    }
  }
  const size_t last = nd - 1;
  const int64_t stride_last = g.strides[last];
  // Channels write disjoint output planes, so they run in parallel.
  const bool parallel =
      !omp_in_parallel() && channels > 1 && channels * kernel_size * in_size >= kParallelMinWork;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t channel = 0; channel < channels; ++channel) {
    std::vector<int64_t> idx(nd);
    T* out = dst + channel * out_size;
    for (int64_t k_index = 0; k_index < kernel_size; ++k_index) {
      if (empty[static_cast<size_t>(k_index)]) continue;
      const int64_t* k_lo = lo.data() + k_index * static_cast<int64_t>(nd);
      const int64_t* k_hi = hi.data() + k_index * static_cast<int64_t>(nd);
      const int64_t* k_offset = offset.data() + k_index * static_cast<int64_t>(nd);
      const T* src = col + (channel * kernel_size + k_index) * col_row_stride;
      if (nd == 2) {  // images, the common case: rows, then the contiguous inner loop
        for (int64_t r = k_lo[0]; r < k_hi[0]; ++r) {
          const T* in = src + r * in_strides[0];
          T* line = out + (r * g.strides[0] + k_offset[0]) * out_strides[0] + k_offset[1];
          for (int64_t i = k_lo[1]; i < k_hi[1]; ++i) line[i * stride_last] += in[i];
        }
        continue;
      }
      std::copy(k_lo, k_lo + nd, idx.begin());
      // Odometer over all dims but the last, which is the contiguous inner loop.
      while (true) {
        int64_t in_base = 0;
        int64_t out_base = k_offset[last];
        for (size_t d = 0; d < last; ++d) {
          in_base += idx[d] * in_strides[d];
          out_base += (idx[d] * g.strides[d] + k_offset[d]) * out_strides[d];
        }
        const T* in = src + in_base;
        T* line = out + out_base;
        for (int64_t i = k_lo[last]; i < k_hi[last]; ++i) line[i * stride_last] += in[i];
        bool done = true;
        for (size_t d = last; d-- > 0;) {
          if (++idx[d] < k_hi[d]) {
            done = false;
            break;
          }
          idx[d] = k_lo[d];
        }
        if (done) break;
      }
    }
  }
}

template <typename T>
void ConvTransposeKernel(const ConvTransposeParams& g, const T* xd, const T* wd, const T* bias, T* yd) {
  const int64_t cg = g.in_channels / g.group;
  const int64_t mg = g.out_channels / g.group;
  const int64_t kernel_size = NumElements(g.kernel);
  const int64_t in_size = NumElements(g.in_spatial);
  const int64_t out_size = NumElements(g.out_spatial);
  // Start from the bias (or zero), then accumulate the scatter.
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t m = 0; m < g.out_channels; ++m) {
      std::fill_n(yd + (n * g.out_channels + m) * out_size, out_size,
                  bias != nullptr ? bias[m] : T(0));
    }
  }
  std::vector<T> col(static_cast<size_t>(mg * kernel_size * in_size));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t grp = 0; grp < g.group; ++grp) {
      // W_g is (cg) × (mg · kernel_size), X_g is (cg) × in_size.
      const T* w_g = wd + grp * cg * mg * kernel_size;
      const T* x_g = xd + (n * g.in_channels + grp * cg) * in_size;
      Gemm<T>(/*trans_a=*/true, /*trans_b=*/false, mg * kernel_size, in_size, cg, T(1), w_g,
              mg * kernel_size, x_g, in_size, T(0), col.data(), in_size);
      Col2Im(g, mg, col.data(), in_size, yd + (n * g.out_channels + grp * mg) * out_size);
    }
  }
}

Status RunConvTranspose(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(ConvTransposeParams g,
                           ReadConvTransposeParams(ctx.node, x.shape(), ctx.inputs[1].shape()));
  // The kernel's col matrix, (M / group · kernel) × input pixels, is no tensor of the model,
  // so no output size check has bounded it.
  const int64_t mg_kernel = g.out_channels / g.group * NumElements(g.kernel);  // <= W's size
  COLLAGE_RETURN_IF_ERROR(CheckedValue(ctx.node, CheckedInt(mg_kernel) * NumElements(g.in_spatial),
                                       "the col matrix {} x {} input pixels", mg_kernel,
                                       NumElements(g.in_spatial))
                              .status());
  return DispatchFloat(ctx.node, x.dtype(), [&](auto t) {
    using T = decltype(t);
    ConvTransposeKernel<T>(g, x.data_as<T>(), ctx.inputs[1].data_as<T>(),
                           ctx.has_input(2) ? ctx.inputs[2].data_as<T>() : nullptr,
                           ctx.outputs[0].data_as<T>());
  });
}

}  // namespace

void Col2Im(const ConvTransposeParams& g, int64_t channels, const float* col,
            int64_t col_row_stride, float* dst) {
  Col2ImTyped(g, channels, col, col_row_stride, dst);
}

void Col2Im(const ConvTransposeParams& g, int64_t channels, const double* col,
            int64_t col_row_stride, double* dst) {
  Col2ImTyped(g, channels, col, col_row_stride, dst);
}

void RegisterConvTransposeOps(OpRegistry& registry) {
  registry.Register(OpDef{.op_type = "ConvTranspose",
                          .domain = "",
                          .kind = OpKind::kOutEWiseFusable,
                          .min_inputs = 2,
                          .max_inputs = 3,
                          .min_outputs = 1,
                          .max_outputs = 1,
                          .infer = InferConvTranspose,
                          .run = RunConvTranspose});
}

}  // namespace collage
