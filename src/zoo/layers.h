// Layers the zoo's models share, written the way PyTorch's exporter emits them for an
// eval-mode model (BatchNorm folded into the preceding Conv's weight and bias).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/graph_builder.h"

namespace collage::zoo {

// Stddev of the random biases (what BatchNorm folding leaves); small, so the weights'
// scaling, not the biases, sets the activations' range.
inline constexpr float kBiasStddev = 0.02f;

struct ConvSpec {
  int64_t out_channels = 0;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t pad = 0;
  int64_t group = 1;
  // Weight stddev is gain / sqrt(fan_in): sqrt(2) (Kaiming) before a ReLU keeps the
  // activations' scale through depth; smaller gains damp residual branches.
  float gain = 1.41421356f;
  // False for a Conv exported without bias (one followed by a BatchNorm that folded into
  // the next layer instead).
  bool has_bias = true;
};

// Square-kernel 2-D Conv: node `name`, constants `name`.weight / `name`.bias.
ValueId ConvBias(GraphBuilder& b, ValueId x, const std::string& name, const ConvSpec& spec);

// Conv over as many spatial dims as `kernel` has (Conv3D for three), with
// per-dim strides and symmetric pads.
struct ConvNdSpec {
  int64_t out_channels = 0;
  std::vector<int64_t> kernel = {};
  std::vector<int64_t> strides = {};  // empty: 1 along every dim
  std::vector<int64_t> pads = {};     // per dim, both sides; empty: 0
  int64_t group = 1;
  float gain = 1.41421356f;
  bool has_bias = true;
};
ValueId ConvNdBias(GraphBuilder& b, ValueId x, const std::string& name, const ConvNdSpec& spec);

// torch.nn.Linear as exported for a 2-D input: Gemm(x, W[out, in], bias, transB=1).
ValueId LinearGemm(GraphBuilder& b, ValueId x, const std::string& name, int64_t out_features,
                   float weight_stddev);

// torch.nn.Linear as exported for an N-D input: MatMul(x, W[in, out]) then Add(bias), in
// scope `name` (nodes `name`.matmul / `name`.add).
ValueId LinearMatMul(GraphBuilder& b, ValueId x, const std::string& name, int64_t out_features,
                     float weight_stddev);

// LayerNormalization over the last axis with gamma near 1 and beta near 0 (random, so a
// backend that ignores either is caught): constants `name`.weight / `name`.bias.
ValueId LayerNorm(GraphBuilder& b, ValueId x, const std::string& name, float epsilon);

// ResNet-50's four stages of bottlenecks (layer1..layer4), shared by the 2-D ResNets and
// the 3-D one: `block(b, x, planes, stride, downsample)` builds one bottleneck inside scope
// "layer<s>.<i>". The first block of each stage changes the width (and, after layer1, the
// resolution), so it takes the stage's stride and a projection shortcut.
template <typename Block>
ValueId ResNet50Stages(GraphBuilder& b, ValueId x, const Block& block) {
  struct Stage {
    int64_t planes;
    int blocks;
    int64_t stride;
  };
  constexpr Stage kStages[] = {{64, 3, 1}, {128, 4, 2}, {256, 6, 2}, {512, 3, 2}};
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < kStages[s].blocks; ++i) {
      auto scope = b.Scope("layer" + std::to_string(s + 1) + "." + std::to_string(i));
      x = block(b, x, kStages[s].planes, i == 0 ? kStages[s].stride : 1, i == 0);
    }
  }
  return x;
}

}  // namespace collage::zoo
