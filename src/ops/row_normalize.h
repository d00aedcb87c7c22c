// One row of a layer normalization, as ONNX Runtime's fused normalizations compute it
// (SkipLayerNormalization, EmbedLayerNormalization, the RMS forms): statistics over the row,
// then y = (x - mean) * inv_std * gamma + beta, or y = x * inv_rms * gamma without centering.
// Statistics accumulate in double over two passes (MeanAndVariance, which normalization.cc's
// kernels use too), so the reference is closer to exact than a float32 sum and a variance is
// never negative.
#pragma once

#include <cmath>
#include <cstdint>

namespace collage {

// What a row's normalization used: the mean subtracted (0 for RMS) and 1 / sqrt(var + eps)
// (1 / sqrt(mean of squares + eps) for RMS): the optional mean and inv_std_var outputs.
struct RowStatistics {
  float mean = 0;
  float inv_std = 0;
};

enum class RowNorm {
  kLayer,  // centered: LayerNormalization
  kRms,    // not centered: SimplifiedLayerNormalization (RMSNorm)
};

// The mean of (x - center)^2 over x[0, n), in double (0 for n = 0).
template <typename T>
double MeanSquaredDeviation(const T* x, int64_t n, double center) {
  double squares = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - center;
    squares += d * d;
  }
  return n > 0 ? squares / static_cast<double>(n) : 0.0;
}

// Mean and population variance of x[0, n), in double, over two passes.
template <typename T>
void MeanAndVariance(const T* x, int64_t n, double& mean, double& variance) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]);
  mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  variance = MeanSquaredDeviation(x, n, mean);
}

// Normalizes x[0, n) into y (which may be x); gamma scales, beta (nullptr: none) shifts.
inline RowStatistics NormalizeRow(RowNorm norm, const float* x, int64_t n, float epsilon,
                                  const float* gamma, const float* beta, float* y) {
  double mean = 0, variance = 0;
  if (norm == RowNorm::kLayer) {
    MeanAndVariance(x, n, mean, variance);
  } else {
    variance = MeanSquaredDeviation(x, n, 0.0);
  }
  const double inv_std = 1.0 / std::sqrt(variance + static_cast<double>(epsilon));
  for (int64_t i = 0; i < n; ++i) {
    double v = (static_cast<double>(x[i]) - mean) * inv_std * static_cast<double>(gamma[i]);
    if (beta != nullptr) v += static_cast<double>(beta[i]);
    y[i] = static_cast<float>(v);
  }
  return {static_cast<float>(mean), static_cast<float>(inv_std)};
}

}  // namespace collage
