// Loops shared by the elementwise, broadcast, reduction and normalization kernels:
//  - ParallelFor: OpenMP only when a tensor is big enough to pay for the threads;
//  - BroadcastPlan: turns any numpy broadcast of N inputs into runs along the innermost
//    (merged) dimension, where each input is either contiguous or constant, so the loops
//    over a run are plain vectorisable loops (equal shapes and scalars become one run);
//  - AxisSplit: the (outer, axis, inner) view of a tensor around an axis;
//  - integer arithmetic that wraps instead of hitting C++ undefined behaviour.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "collage/tensor.h"
#include "ops/op_helpers.h"

namespace collage {

// Work (elements × cost per element) below which a kernel stays on one thread: starting an
// OpenMP team costs microseconds, as much as ~100k additions.
inline constexpr int64_t kParallelWork = int64_t{1} << 17;

// Calls body(begin, end) over [0, n), split into one contiguous chunk per thread when
// n * cost_per_element is large, else once on the calling thread.
template <typename Body>
void ParallelFor(int64_t n, int64_t cost_per_element, Body&& body) {
  if (n <= 0) return;
  // Saturating: a cost estimate from a hostile attribute (LRN's size) must not wrap into
  // "cheap".
  if (CheckedMul(n, cost_per_element).value_or(INT64_MAX) < kParallelWork || n < 2 ||
      omp_get_max_threads() == 1 || omp_in_parallel()) {
    body(int64_t{0}, n);
    return;
  }
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads();
    const int64_t t = omp_get_thread_num();
    const int64_t chunk = (n + threads - 1) / threads;
    const int64_t begin = std::min(n, t * chunk);
    const int64_t end = std::min(n, begin + chunk);
    if (begin < end) body(begin, end);
  }
}

// out[i] = f(in[i]) for i in [0, n). `in` and `out` may be the same buffer.
template <typename TI, typename TO, typename F>
void MapUnary(const TI* in, TO* out, int64_t n, int64_t cost_per_element, F f) {
  ParallelFor(n, cost_per_element, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = f(in[i]);
  });
}

// Reading N inputs broadcast to an output shape, as runs over the output's flat index.
// Output dims of size 1 are dropped and adjacent dims that every input reads the same way
// (all contiguous, or all broadcast) are merged, so [N,C,H,W] + [1,C,1,1] becomes
// [N, C, H*W] with the second input constant along the inner run.
template <size_t N>
class BroadcastPlan {
 public:
  BroadcastPlan(const std::array<const Shape*, N>& inputs, const Shape& output) {
    std::array<std::vector<int64_t>, N> strides;
    for (size_t k = 0; k < N; ++k) strides[k] = BroadcastStrides(*inputs[k], output);
    for (size_t d = 0; d < output.size(); ++d) {
      if (output[d] == 1) continue;
      bool merge = !sizes_.empty();
      for (size_t k = 0; k < N && merge; ++k) {
        merge = strides_[k].back() == strides[k][d] * output[d];
      }
      if (merge) {
        sizes_.back() *= output[d];
        for (size_t k = 0; k < N; ++k) strides_[k].back() = strides[k][d];
      } else {
        sizes_.push_back(output[d]);
        for (size_t k = 0; k < N; ++k) strides_[k].push_back(strides[k][d]);
      }
    }
    if (sizes_.empty()) {  // a scalar (or all-ones) output: one run of one element
      sizes_.push_back(1);
      for (size_t k = 0; k < N; ++k) strides_[k].push_back(0);
    }
    for (size_t k = 0; k < N; ++k) contiguous_[k] = strides_[k].back() != 0;
    inner_ = sizes_.back();
  }

  // Whether input k advances along a run (stride 1) or stays on one element (stride 0).
  bool contiguous(size_t k) const { return contiguous_[k]; }

  // Calls body(out_offset, in_offsets, length) for the runs covering flat output
  // elements [begin, end); in_offsets[k] is where input k's part of the run starts.
  template <typename Body>
  void ForRange(int64_t begin, int64_t end, Body&& body) const {
    if (begin >= end) return;
    const size_t outer_rank = sizes_.size() - 1;
    int64_t run = begin / inner_;
    int64_t pos = begin % inner_;
    // Decode the run index into coordinates of the outer dims.
    std::vector<int64_t> coord(outer_rank, 0);
    std::array<int64_t, N> base{};
    int64_t rest = run;
    for (size_t d = outer_rank; d-- > 0;) {
      coord[d] = rest % sizes_[d];
      rest /= sizes_[d];
      for (size_t k = 0; k < N; ++k) base[k] += coord[d] * strides_[k][d];
    }
    int64_t out = begin;
    while (out < end) {
      const int64_t len = std::min(inner_ - pos, end - out);
      std::array<int64_t, N> offsets;
      for (size_t k = 0; k < N; ++k) offsets[k] = base[k] + (contiguous_[k] ? pos : 0);
      body(out, offsets, len);
      out += len;
      pos = 0;
      // Next run: odometer over the outer dims.
      for (size_t d = outer_rank; d-- > 0;) {
        for (size_t k = 0; k < N; ++k) base[k] += strides_[k][d];
        if (++coord[d] < sizes_[d]) break;
        for (size_t k = 0; k < N; ++k) base[k] -= coord[d] * strides_[k][d];
        coord[d] = 0;
      }
    }
  }

 private:
  std::vector<int64_t> sizes_;
  std::array<std::vector<int64_t>, N> strides_;
  std::array<bool, N> contiguous_{};
  int64_t inner_ = 1;
};

// out = f(a, b) with numpy broadcasting; out must already have the broadcast shape.
// `out` may alias `a` or `b` when that input has the output's shape.
template <typename TA, typename TB, typename TO, typename F>
void BroadcastBinary(const Tensor& a, const Tensor& b, Tensor& out, int64_t cost_per_element, F f) {
  const BroadcastPlan<2> plan({&a.shape(), &b.shape()}, out.shape());
  const TA* pa = a.data_as<TA>();
  const TB* pb = b.data_as<TB>();
  TO* po = out.data_as<TO>();
  const bool ca = plan.contiguous(0);
  const bool cb = plan.contiguous(1);
  ParallelFor(out.num_elements(), cost_per_element, [&](int64_t begin, int64_t end) {
    plan.ForRange(begin, end, [&](int64_t o, const std::array<int64_t, 2>& off, int64_t len) {
      const TA* x = pa + off[0];
      const TB* y = pb + off[1];
      TO* z = po + o;
      if (ca && cb) {
        for (int64_t i = 0; i < len; ++i) z[i] = f(x[i], y[i]);
      } else if (ca) {
        const TB s = *y;
        for (int64_t i = 0; i < len; ++i) z[i] = f(x[i], s);
      } else if (cb) {
        const TA s = *x;
        for (int64_t i = 0; i < len; ++i) z[i] = f(s, y[i]);
      } else {
        const TO v = f(*x, *y);
        for (int64_t i = 0; i < len; ++i) z[i] = v;
      }
    });
  });
}

// A tensor seen as [outer, axis, inner] around `axis` (inner is contiguous).
struct AxisSplit {
  int64_t outer = 1;
  int64_t axis = 1;
  int64_t inner = 1;
};
// [prod(dims[:axis]), dims[axis], prod(dims[axis+1:])].
inline AxisSplit SplitAtAxis(const Shape& shape, int64_t axis) {
  AxisSplit s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    int64_t size = shape[static_cast<size_t>(d)];
    if (d < axis)
      s.outer *= size;
    else if (d == axis)
      s.axis = size;
    else
      s.inner *= size;
  }
  return s;
}
// [prod(dims[:axis]), prod(dims[axis:]), 1]: the 2-D coercion of opset < 13 Softmax.
inline AxisSplit SplitAsMatrix(const Shape& shape, int64_t axis) {
  AxisSplit s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    (d < axis ? s.outer : s.axis) *= shape[static_cast<size_t>(d)];
  }
  return s;
}

// Integer arithmetic in the unsigned type of at least int's width, so that overflow wraps
// (what ONNX runtimes do) instead of being undefined; floats pass through.
template <typename T>
using WrapType =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <typename T>
T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T WrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
  } else {
    return a - b;
  }
}
template <typename T>
T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  } else {
    return a * b;
  }
}
template <typename T>
T WrapNeg(T a) {
  // Floats negate the sign bit (-0.0 for 0.0, as IEEE negation does); 0 - a would give +0.
  if constexpr (std::is_floating_point_v<T>) return -a;
  return WrapSub(T{0}, a);
}

// Whether v is NaN (false for every integer).
template <typename T>
bool IsNaNValue(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return v != v;
  else
    return false;
}

// Min/max that propagate NaN, as numpy's minimum/maximum (and ONNX's Min/Max) do.
template <typename T>
T NanMin(T a, T b) {
  return (a < b || IsNaNValue(a)) ? a : b;
}
template <typename T>
T NanMax(T a, T b) {
  return (a > b || IsNaNValue(a)) ? a : b;
}

// Families of dtypes an op accepts, checked in type inference and used to instantiate
// kernels only for the C++ types that can reach them.
enum class DTypeSet {
  kFloat,          // float32, float64
  kSignedOrFloat,  // int8..int64, float32, float64
  kNumeric,        // every integer type, float32, float64
  kUnsigned,       // uint8..uint64
  kInteger,        // int8..int64, uint8..uint64
  kBool,
  kAny,  // kNumeric and bool
};

template <typename T>
constexpr bool InDTypeSet(DTypeSet set) {
  switch (set) {
    case DTypeSet::kFloat: return std::is_floating_point_v<T>;
    case DTypeSet::kSignedOrFloat:
      return std::is_floating_point_v<T> || (std::is_signed_v<T> && !std::is_same_v<T, bool>);
    case DTypeSet::kNumeric: return !std::is_same_v<T, bool>;
    case DTypeSet::kUnsigned: return std::is_unsigned_v<T> && !std::is_same_v<T, bool>;
    case DTypeSet::kInteger: return std::is_integral_v<T> && !std::is_same_v<T, bool>;
    case DTypeSet::kBool: return std::is_same_v<T, bool>;
    case DTypeSet::kAny: return true;
  }
  return false;
}

// Unsupported error (listing the accepted dtypes) unless input i's dtype is in `set`.
inline Status RequireDTypeSet(const InferContext& ctx, size_t input, DTypeSet set) {
  switch (set) {
    case DTypeSet::kFloat: return RequireDType(ctx, input, {DType::kFloat32, DType::kFloat64});
    case DTypeSet::kSignedOrFloat:
      return RequireDType(ctx, input,
                          {DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kInt16,
                           DType::kInt32, DType::kInt64});
    case DTypeSet::kNumeric:
      return RequireDType(
          ctx, input,
          {DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kInt16, DType::kInt32,
           DType::kInt64, DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64});
    case DTypeSet::kUnsigned:
      return RequireDType(ctx, input,
                          {DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64});
    case DTypeSet::kInteger:
      return RequireDType(ctx, input,
                          {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8,
                           DType::kUInt16, DType::kUInt32, DType::kUInt64});
    case DTypeSet::kBool: return RequireDType(ctx, input, {DType::kBool});
    case DTypeSet::kAny:
      return RequireDType(ctx, input,
                          {DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kInt16,
                           DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt16,
                           DType::kUInt32, DType::kUInt64, DType::kBool});
  }
  return Status::Ok();
}

// Base of the elementwise functors that read no attribute (functors are built from the
// node's attributes, then applied to each element).
struct NoAttributes {
  explicit NoAttributes(const Attributes&) {}
};

// An optional extra check in type inference (attribute values, ...).
using InferCheckFn = Status (*)(const InferContext&);

// One value of From as To. Float to integer is where C++ has undefined behaviour and ONNX
// leaves the result unspecified: NaN gives 0 and out-of-range values saturate to the
// integer type's limits; in range it truncates toward zero, as the spec and numpy do.
template <typename To, typename From>
To SaturatingCast(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (IsNaNValue(v)) return To(0);
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) {
      return std::numeric_limits<To>::lowest();
    }
    // max() as From rounds up to a power of two for 32/64-bit types, so >= is exact.
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// Families split over more than one file: RegisterUnaryOps calls RegisterCastOps,
// RegisterReductionOps calls RegisterSoftmaxOps.
void RegisterCastOps(OpRegistry& registry);     // cast.cc: Cast, CastLike, Identity, Dropout
void RegisterSoftmaxOps(OpRegistry& registry);  // softmax.cc: Softmax, LogSoftmax, Hardmax

}  // namespace collage
