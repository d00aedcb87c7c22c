// Softmax, LogSoftmax and Hardmax (registered by RegisterReductionOps).
// Opset < 13: the input is coerced to 2-D at `axis` (default 1) and each row of
// prod(dims[axis:]) elements is normalised. Opset >= 13: along the single dim `axis`
// (default -1). Both are an [outer, n, inner] view (ReadSoftmaxAxis) of the same kernel.
#include <cmath>
#include <limits>
#include <vector>

#include "collage/sdk/op_params.h"
#include "ops/elementwise.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

Status InferSoftmax(InferContext& ctx) {
  COLLAGE_RETURN_IF_ERROR(RequireDTypeSet(ctx, 0, DTypeSet::kFloat));
  COLLAGE_RETURN_IF_ERROR(
      ReadSoftmaxAxis(ctx.node, ctx.opset, ctx.input_type(0).shape).status());
  ctx.output_types[0] = ctx.input_type(0);
  return Status::Ok();
}

// Hardmax's one is at numpy's argmax, the ONNX reference: the first NaN if there is one.
// (Softmax and LogSoftmax need no such care: a NaN in the row makes the sum, and so every
// output, NaN whatever max was subtracted.)
template <typename T>
bool IsFirstNaN(T v, T max_so_far) {
  return v != v && max_so_far == max_so_far;
}

// One [n, inner] block: y = softmax(x) along n, for each of the inner positions. Stable:
// the maximum is subtracted before exp, so nothing overflows. Sums accumulate in double.
template <SoftmaxKind kKind, typename T>
void SoftmaxBlock(const T* x, T* y, int64_t n, int64_t inner, std::vector<T>& max,
                  std::vector<double>& sum) {
  if (inner == 1) {  // the common case: a contiguous row
    T m = -std::numeric_limits<T>::infinity();
    int64_t arg = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (x[j] > m || (kKind == SoftmaxKind::kHardmax && IsFirstNaN(x[j], m))) {
        m = x[j];
        arg = j;
      }
    }
    if constexpr (kKind == SoftmaxKind::kHardmax) {
      for (int64_t j = 0; j < n; ++j) y[j] = T(j == arg ? 1 : 0);
      return;
    }
    double s = 0;
    for (int64_t j = 0; j < n; ++j) {
      const T e = std::exp(x[j] - m);
      if constexpr (kKind == SoftmaxKind::kSoftmax) y[j] = e;
      s += static_cast<double>(e);
    }
    if constexpr (kKind == SoftmaxKind::kSoftmax) {
      const T scale = static_cast<T>(1.0 / s);
      for (int64_t j = 0; j < n; ++j) y[j] *= scale;
    } else {
      // (x - m) first: adding log(s) to a large m would round it away.
      const T log_sum = static_cast<T>(std::log(s));
      for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - m) - log_sum;
    }
    return;
  }
  // A strided axis: run across the contiguous inner dim instead, one pass per row j.
  max.assign(static_cast<size_t>(inner), -std::numeric_limits<T>::infinity());
  std::vector<int64_t> arg;
  if constexpr (kKind == SoftmaxKind::kHardmax) arg.assign(static_cast<size_t>(inner), 0);
  for (int64_t j = 0; j < n; ++j) {
    const T* row = x + j * inner;
    for (int64_t i = 0; i < inner; ++i) {
      if (row[i] > max[static_cast<size_t>(i)] ||
          (kKind == SoftmaxKind::kHardmax && IsFirstNaN(row[i], max[static_cast<size_t>(i)]))) {
        max[static_cast<size_t>(i)] = row[i];
        if constexpr (kKind == SoftmaxKind::kHardmax) arg[static_cast<size_t>(i)] = j;
      }
    }
  }
  if constexpr (kKind == SoftmaxKind::kHardmax) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < inner; ++i) {
        y[j * inner + i] = T(arg[static_cast<size_t>(i)] == j ? 1 : 0);
      }
    }
    return;
  }
  sum.assign(static_cast<size_t>(inner), 0.0);
  for (int64_t j = 0; j < n; ++j) {
    const T* row = x + j * inner;
    T* out = y + j * inner;
    for (int64_t i = 0; i < inner; ++i) {
      const T e = std::exp(row[i] - max[static_cast<size_t>(i)]);
      if constexpr (kKind == SoftmaxKind::kSoftmax) out[i] = e;
      sum[static_cast<size_t>(i)] += static_cast<double>(e);
    }
  }
  for (int64_t i = 0; i < inner; ++i) {
    const size_t k = static_cast<size_t>(i);
    sum[k] = kKind == SoftmaxKind::kSoftmax ? 1.0 / sum[k] : std::log(sum[k]);
  }
  for (int64_t j = 0; j < n; ++j) {
    const T* row = x + j * inner;
    T* out = y + j * inner;
    for (int64_t i = 0; i < inner; ++i) {
      const T v = static_cast<T>(sum[static_cast<size_t>(i)]);
      if constexpr (kKind == SoftmaxKind::kSoftmax)
        out[i] *= v;
      else
        out[i] = (row[i] - max[static_cast<size_t>(i)]) - v;
    }
  }
}

template <SoftmaxKind kKind>
Status RunSoftmax(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  COLLAGE_ASSIGN_OR_RETURN(const SoftmaxAxis s, ReadSoftmaxAxis(ctx.node, ctx.opset, x.shape()));
  return DispatchFloat(ctx.node, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    T* py = ctx.outputs[0].data_as<T>();
    const int64_t block = s.n * s.inner;
    ParallelFor(s.outer, block * 10, [&](int64_t begin, int64_t end) {
      std::vector<T> max;
      std::vector<double> sum;
      for (int64_t o = begin; o < end; ++o) {
        SoftmaxBlock<kKind, T>(px + o * block, py + o * block, s.n, s.inner, max, sum);
      }
    });
  });
}

}  // namespace

void RegisterSoftmaxOps(OpRegistry& registry) {
  registry.Register(OpDef{"Softmax", "", OpKind::kReduction, 1, 1, 1, 1, InferSoftmax,
                          RunSoftmax<SoftmaxKind::kSoftmax>});
  registry.Register(OpDef{"LogSoftmax", "", OpKind::kReduction, 1, 1, 1, 1, InferSoftmax,
                          RunSoftmax<SoftmaxKind::kLogSoftmax>});
  registry.Register(OpDef{"Hardmax", "", OpKind::kReduction, 1, 1, 1, 1, InferSoftmax,
                          RunSoftmax<SoftmaxKind::kHardmax>});
}

}  // namespace collage
