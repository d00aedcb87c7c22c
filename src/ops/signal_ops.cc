// The signal ops of opset 17: DFT (opset 20: its axis an input), STFT and MelWeightMatrix.
//
// Complex values are a trailing dimension of 2 (real, imaginary); a real signal has a trailing
// dimension of 1. The transforms are the plain O(n^2) sums, in double precision (the sizes
// models use, a few hundred points per frame, keep that cheap next to the convolutions around
// them), then rounded to the output type.
#include <cmath>

#include "ops/data_movement.h"
#include "ops/op_helpers.h"

namespace collage {
namespace {

constexpr double kPi = 3.14159265358979323846;

// An integer scalar input (a length, a step), known when the model compiles.
StatusOr<int64_t> ScalarInt(const InferContext& ctx, size_t input, const char* what) {
  COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, input, {DType::kInt32, DType::kInt64}));
  const Tensor* value = ctx.input_value(input);
  if (value == nullptr) {
    return OpError(ctx.node, StatusCode::kUnsupported,
                   "input {} ({}) is not constant; collage needs its value to know the output "
                   "shape",
                   input, what);
  }
  if (value->num_elements() != 1) {
    return OpError(ctx.node, StatusCode::kInvalidModel, "input {} ({}) must be one value", input,
                   what);
  }
  return value->ToVector<int64_t>()[0];
}

// One transform of `n_out` points of a line of `n_in` complex points (stride `stride` between
// points, in complex elements; `imag` false: real input, no imaginary part), zero-padded or
// truncated to `length`.
void Transform(const double* re, const double* im, int64_t n_in, int64_t length, int64_t n_out,
               bool inverse, double* out_re, double* out_im) {
  const double sign = inverse ? 1.0 : -1.0;
  const int64_t used = std::min(n_in, length);
  for (int64_t k = 0; k < n_out; ++k) {
    double sum_re = 0, sum_im = 0;
    for (int64_t t = 0; t < used; ++t) {
      // The angle's argument reduced modulo length keeps it exact for long transforms.
      const double angle = sign * 2 * kPi * static_cast<double>((k * t) % length) /
                           static_cast<double>(length);
      const double c = std::cos(angle), s = std::sin(angle);
      const double x_im = im != nullptr ? im[t] : 0.0;
      sum_re += re[t] * c - x_im * s;
      sum_im += re[t] * s + x_im * c;
    }
    if (inverse) {
      sum_re /= static_cast<double>(length);
      sum_im /= static_cast<double>(length);
    }
    out_re[k] = sum_re;
    out_im[k] = sum_im;
  }
}

// ---- DFT ----

struct DftParams {
  int64_t axis = 1;
  int64_t length = 0;  // the transform's length (dft_length, else the axis's)
  int64_t out_length = 0;
  bool inverse = false;
};

StatusOr<DftParams> DftParamsOf(const Node& node, int64_t opset, const Shape& x,
                                const std::optional<int64_t>& dft_length,
                                const std::optional<int64_t>& axis_input) {
  DftParams p;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 2 || (x.back() != 1 && x.back() != 2)) {
    return OpError(node, StatusCode::kInvalidModel,
                   "input must end in a dimension of 1 (real) or 2 (complex), is {}",
                   ShapeToString(x));
  }
  int64_t axis = opset >= 20 ? axis_input.value_or(-2) : node.attributes.GetInt("axis", 1);
  // The last dimension holds the complex parts: the signal's axes are the others.
  if (axis < -(rank - 1) || axis >= rank - 1) {
    return OpError(node, StatusCode::kInvalidModel, "axis {} is outside the signal's {} axes",
                   axis, rank - 1);
  }
  if (axis < 0) axis += rank - 1;
  p.axis = axis;
  p.inverse = node.attributes.GetInt("inverse", 0) != 0;
  const bool onesided = node.attributes.GetInt("onesided", 0) != 0;
  p.length = dft_length.value_or(x[static_cast<size_t>(axis)]);
  if (p.length < 1) {
    return OpError(node, StatusCode::kInvalidModel, "dft_length {} is not positive", p.length);
  }
  if (onesided && x.back() == 2) {
    return OpError(node, StatusCode::kInvalidModel, "onesided needs a real input");
  }
  if (onesided && p.inverse) {
    return OpError(node, StatusCode::kUnsupported, "an inverse onesided DFT is not supported");
  }
  p.out_length = onesided ? p.length / 2 + 1 : p.length;
  return p;
}

Status InferDft(InferContext& ctx) {
  const TensorType& x = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(DispatchFloat(ctx.node, x.dtype, [](auto) {}));
  std::optional<int64_t> length, axis;
  if (ctx.has_input(1)) {
    COLLAGE_ASSIGN_OR_RETURN(length, ScalarInt(ctx, 1, "dft_length"));
  }
  if (ctx.opset >= 20 && ctx.has_input(2)) {
    COLLAGE_ASSIGN_OR_RETURN(axis, ScalarInt(ctx, 2, "axis"));
  }
  COLLAGE_ASSIGN_OR_RETURN(DftParams p, DftParamsOf(ctx.node, ctx.opset, x.shape, length, axis));
  Shape out = x.shape;
  out[static_cast<size_t>(p.axis)] = p.out_length;
  out.back() = 2;
  ctx.output_types[0] = {x.dtype, out};
  return Status::Ok();
}

Status RunDft(KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  std::optional<int64_t> length, axis;
  if (ctx.has_input(1)) length = ctx.inputs[1].ToVector<int64_t>()[0];
  if (ctx.opset >= 20 && ctx.has_input(2)) axis = ctx.inputs[2].ToVector<int64_t>()[0];
  COLLAGE_ASSIGN_OR_RETURN(DftParams p, DftParamsOf(ctx.node, ctx.opset, x.shape(), length, axis));
  const int64_t parts = x.shape().back();
  const int64_t n_in = x.dim(p.axis);
  const int64_t outer = DimProduct(x.shape(), 0, p.axis);
  const int64_t inner = DimProduct(x.shape(), p.axis + 1, x.rank() - 1);  // points apart
  return DispatchFloat(ctx.node, x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = x.data_as<T>();
    T* out = ctx.outputs[0].data_as<T>();
    std::vector<double> re(static_cast<size_t>(n_in)), im(static_cast<size_t>(n_in));
    std::vector<double> out_re(static_cast<size_t>(p.out_length)), out_im(out_re.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t t = 0; t < n_in; ++t) {
          const T* point = in + ((o * n_in + t) * inner + i) * parts;
          re[static_cast<size_t>(t)] = static_cast<double>(point[0]);
          im[static_cast<size_t>(t)] = parts == 2 ? static_cast<double>(point[1]) : 0.0;
        }
        Transform(re.data(), parts == 2 ? im.data() : nullptr, n_in, p.length, p.out_length,
                  p.inverse, out_re.data(), out_im.data());
        for (int64_t k = 0; k < p.out_length; ++k) {
          T* point = out + ((o * p.out_length + k) * inner + i) * 2;
          point[0] = static_cast<T>(out_re[static_cast<size_t>(k)]);
          point[1] = static_cast<T>(out_im[static_cast<size_t>(k)]);
        }
      }
    }
  });
}

// ---- STFT ----

struct StftParams {
  int64_t step = 0;
  int64_t frame_length = 0;
  int64_t frames = 0;
  int64_t bins = 0;
};

StatusOr<StftParams> StftParamsOf(const Node& node, const Shape& signal, int64_t step,
                                  const std::optional<int64_t>& window_length,
                                  const std::optional<int64_t>& frame_length) {
  if (signal.size() != 3 || (signal[2] != 1 && signal[2] != 2)) {
    return OpError(node, StatusCode::kInvalidModel,
                   "signal must be [batch, length, 1 or 2], is {}", ShapeToString(signal));
  }
  StftParams p;
  p.step = step;
  if (!window_length && !frame_length) {
    return OpError(node, StatusCode::kInvalidModel, "needs a window or a frame_length");
  }
  if (window_length && frame_length && *window_length != *frame_length) {
    return OpError(node, StatusCode::kInvalidModel,
                   "the window has {} points, frame_length says {}", *window_length, *frame_length);
  }
  p.frame_length = frame_length.value_or(window_length.value_or(0));
  if (p.step < 1 || p.frame_length < 1 || p.frame_length > signal[1]) {
    return OpError(node, StatusCode::kInvalidModel,
                   "frame_step {} and frame_length {} must be positive, the frame no longer than "
                   "the signal ({})",
                   p.step, p.frame_length, signal[1]);
  }
  const bool onesided = node.attributes.GetInt("onesided", 1) != 0;
  if (onesided && signal[2] == 2) {
    return OpError(node, StatusCode::kInvalidModel, "onesided needs a real signal");
  }
  p.frames = (signal[1] - p.frame_length) / p.step + 1;
  p.bins = onesided ? p.frame_length / 2 + 1 : p.frame_length;
  return p;
}

Status InferStft(InferContext& ctx) {
  const TensorType& signal = ctx.input_type(0);
  COLLAGE_RETURN_IF_ERROR(DispatchFloat(ctx.node, signal.dtype, [](auto) {}));
  COLLAGE_ASSIGN_OR_RETURN(int64_t step, ScalarInt(ctx, 1, "frame_step"));
  std::optional<int64_t> window_length, frame_length;
  if (ctx.has_input(2)) {
    COLLAGE_RETURN_IF_ERROR(RequireSameDType(ctx, 0, 2));
    if (ctx.input_type(2).shape.size() != 1) {
      return OpError(ctx.node, StatusCode::kInvalidModel, "the window must be 1-D, is {}",
                     ShapeToString(ctx.input_type(2).shape));
    }
    window_length = ctx.input_type(2).shape[0];
  }
  if (ctx.has_input(3)) {
    COLLAGE_ASSIGN_OR_RETURN(frame_length, ScalarInt(ctx, 3, "frame_length"));
  }
  COLLAGE_ASSIGN_OR_RETURN(StftParams p,
                           StftParamsOf(ctx.node, signal.shape, step, window_length, frame_length));
  ctx.output_types[0] = {signal.dtype, {signal.shape[0], p.frames, p.bins, 2}};
  return Status::Ok();
}

Status RunStft(KernelContext& ctx) {
  const Tensor& signal = ctx.inputs[0];
  const int64_t step = ctx.inputs[1].ToVector<int64_t>()[0];
  std::optional<int64_t> window_length, frame_length;
  if (ctx.has_input(2)) window_length = ctx.inputs[2].dim(0);
  if (ctx.has_input(3)) frame_length = ctx.inputs[3].ToVector<int64_t>()[0];
  COLLAGE_ASSIGN_OR_RETURN(StftParams p, StftParamsOf(ctx.node, signal.shape(), step,
                                                      window_length, frame_length));
  const int64_t parts = signal.dim(2);
  const int64_t length = signal.dim(1);
  std::vector<double> window(static_cast<size_t>(p.frame_length), 1.0);
  if (ctx.has_input(2)) window = ctx.inputs[2].ToVector<double>();
  return DispatchFloat(ctx.node, signal.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = signal.data_as<T>();
    T* out = ctx.outputs[0].data_as<T>();
    std::vector<double> re(static_cast<size_t>(p.frame_length)), im(re.size());
    std::vector<double> out_re(static_cast<size_t>(p.bins)), out_im(out_re.size());
    for (int64_t b = 0; b < signal.dim(0); ++b) {
      for (int64_t f = 0; f < p.frames; ++f) {
        for (int64_t t = 0; t < p.frame_length; ++t) {
          const T* point = in + (b * length + f * p.step + t) * parts;
          const double w = window[static_cast<size_t>(t)];
          re[static_cast<size_t>(t)] = static_cast<double>(point[0]) * w;
          im[static_cast<size_t>(t)] = parts == 2 ? static_cast<double>(point[1]) * w : 0.0;
        }
        Transform(re.data(), parts == 2 ? im.data() : nullptr, p.frame_length, p.frame_length,
                  p.bins, /*inverse=*/false, out_re.data(), out_im.data());
        for (int64_t k = 0; k < p.bins; ++k) {
          T* point = out + ((b * p.frames + f) * p.bins + k) * 2;
          point[0] = static_cast<T>(out_re[static_cast<size_t>(k)]);
          point[1] = static_cast<T>(out_im[static_cast<size_t>(k)]);
        }
      }
    }
  });
}

// ---- MelWeightMatrix ----

// The spec's triangular filters: num_mel_bins + 2 points evenly spaced on the mel scale
// between the edges, each mapped to the DFT bin floor((dft_length + 1) * hertz / sample_rate);
// filter i rises from point i to point i + 1 and falls to point i + 2.
struct MelParams {
  int64_t mel_bins = 0;
  int64_t dft_length = 0;
  int64_t sample_rate = 0;
  double lower_hz = 0;
  double upper_hz = 0;
};

StatusOr<MelParams> MelParamsOf(const Node& node, const std::vector<const Tensor*>& values) {
  MelParams p;
  p.mel_bins = values[0]->ToVector<int64_t>()[0];
  p.dft_length = values[1]->ToVector<int64_t>()[0];
  p.sample_rate = values[2]->ToVector<int64_t>()[0];
  p.lower_hz = values[3]->ToVector<double>()[0];
  p.upper_hz = values[4]->ToVector<double>()[0];
  if (p.mel_bins < 1 || p.dft_length < 1 || p.sample_rate < 1 || p.lower_hz < 0 ||
      p.upper_hz < p.lower_hz) {
    return OpError(node, StatusCode::kInvalidModel,
                   "needs num_mel_bins, dft_length and sample_rate positive and 0 <= "
                   "lower_edge_hertz <= upper_edge_hertz (got {}, {}, {}, {}, {})",
                   p.mel_bins, p.dft_length, p.sample_rate, p.lower_hz, p.upper_hz);
  }
  return p;
}

Status InferMelWeightMatrix(InferContext& ctx) {
  std::vector<const Tensor*> values;
  static const char* kNames[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                                 "upper_edge_hertz"};
  for (size_t i = 0; i < 5; ++i) {
    COLLAGE_RETURN_IF_ERROR(RequireDType(ctx, i, i < 3 ? std::initializer_list<DType>{DType::kInt32, DType::kInt64}
                                                       : std::initializer_list<DType>{DType::kFloat32, DType::kFloat64}));
    if (ctx.input_value(i) == nullptr || ctx.input_value(i)->num_elements() != 1) {
      return OpError(ctx.node, StatusCode::kUnsupported,
                     "input {} ({}) must be one constant value: collage needs it to know the "
                     "output shape",
                     i, kNames[i]);
    }
    values.push_back(ctx.input_value(i));
  }
  COLLAGE_ASSIGN_OR_RETURN(MelParams p, MelParamsOf(ctx.node, values));
  const DType dtype = static_cast<DType>(ctx.attributes().GetInt("output_datatype", 1));
  COLLAGE_RETURN_IF_ERROR(DispatchFloat(ctx.node, dtype, [](auto) {}));
  ctx.output_types[0] = {dtype, {p.dft_length / 2 + 1, p.mel_bins}};
  return Status::Ok();
}

Status RunMelWeightMatrix(KernelContext& ctx) {
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < 5; ++i) values.push_back(&ctx.inputs[i]);
  COLLAGE_ASSIGN_OR_RETURN(MelParams p, MelParamsOf(ctx.node, values));
  const int64_t spectrum_bins = p.dft_length / 2 + 1;
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double low = to_mel(p.lower_hz);
  const double step = (to_mel(p.upper_hz) - low) / static_cast<double>(p.mel_bins + 2);
  std::vector<int64_t> points(static_cast<size_t>(p.mel_bins + 2));
  for (int64_t i = 0; i < p.mel_bins + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low) / 2595.0) - 1.0);
    points[static_cast<size_t>(i)] = static_cast<int64_t>(
        std::floor(static_cast<double>(p.dft_length + 1) * hz / static_cast<double>(p.sample_rate)));
  }
  std::vector<double> weights(static_cast<size_t>(spectrum_bins * p.mel_bins), 0.0);
  auto at = [&](int64_t bin, int64_t mel) -> double* {
    if (bin < 0 || bin >= spectrum_bins) return nullptr;  // a point beyond the spectrum
    return &weights[static_cast<size_t>(bin * p.mel_bins + mel)];
  };
  for (int64_t i = 0; i < p.mel_bins; ++i) {
    const int64_t left = points[static_cast<size_t>(i)];
    const int64_t center = points[static_cast<size_t>(i + 1)];
    const int64_t right = points[static_cast<size_t>(i + 2)];
    if (center == left) {
      if (double* w = at(center, i)) *w = 1.0;
    } else {
      for (int64_t j = left; j <= center; ++j) {
        if (double* w = at(j, i)) *w = static_cast<double>(j - left) / static_cast<double>(center - left);
      }
    }
    for (int64_t j = center; j < right; ++j) {
      if (double* w = at(j, i)) *w = static_cast<double>(right - j) / static_cast<double>(right - center);
    }
  }
  return DispatchFloat(ctx.node, ctx.outputs[0].dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* out = ctx.outputs[0].data_as<T>();
    for (size_t k = 0; k < weights.size(); ++k) out[k] = static_cast<T>(weights[k]);
  });
}

}  // namespace

void RegisterSignalOps(OpRegistry& registry) {
  registry.Register(MakeOpDef("DFT", OpKind::kOpaque, 1, 3, InferDft, RunDft));
  registry.Register(MakeOpDef("STFT", OpKind::kOpaque, 2, 4, InferStft, RunStft));
  registry.Register(
      MakeOpDef("MelWeightMatrix", OpKind::kOpaque, 5, 5, InferMelWeightMatrix, RunMelWeightMatrix));
}

}  // namespace collage
