// The DCGAN generator (Radford et al., as in PyTorch's DCGAN example with ngf = 64): a
// latent vector of 100 taken as 100x1x1 and grown by strided ConvTranspose to a 3x64x64
// image. Exported in eval mode: each BatchNorm folded into the transposed convolution
// before it (which then carries a bias), ReLU between; the last layer has no BatchNorm, so
// no bias, and a Tanh.
#include <cmath>
#include <string>
#include <vector>

#include "ops/graph_builder.h"
#include "zoo/layers.h"
#include "zoo/models.h"

namespace collage {

namespace {

constexpr int64_t kLatent = 100;
constexpr int64_t kBaseWidth = 64;  // ngf

// ConvTranspose with a 4x4 kernel; W is [in, out, 4, 4] as ONNX lays transposed weights out.
ValueId UpConv(GraphBuilder& b, ValueId x, const std::string& name, int64_t out_channels,
               int64_t stride, int64_t pad, float gain, bool has_bias = true) {
  if (!b.ok()) return kNoValue;
  const int64_t in_channels = b.dim(x, 1);
  // Each output pixel sums in_channels x (4/stride)^2 products: that is its fan-in.
  const int64_t taps_per_dim = 4 / stride;
  const float stddev =
      gain / std::sqrt(static_cast<float>(in_channels * taps_per_dim * taps_per_dim));
  ValueId w = b.RandomNormal(name + ".weight", {in_channels, out_channels, 4, 4}, stddev);
  std::vector<ValueId> inputs = {x, w};
  if (has_bias) inputs.push_back(b.RandomNormal(name + ".bias", {out_channels}, zoo::kBiasStddev));
  return b.Node("ConvTranspose", inputs,
                {{"dilations", {1, 1}},
                 {"group", 1},
                 {"kernel_shape", {4, 4}},
                 {"pads", {pad, pad, pad, pad}},
                 {"strides", {stride, stride}}},
                name);
}

}  // namespace

StatusOr<Graph> BuildDcganGenerator() {
  GraphBuilder b("dcgan", /*opset=*/17, /*seed=*/64);
  ValueId x = b.Input("latent", DType::kFloat32, {1, kLatent, 1, 1});
  // 1x1 → 4x4 (stride 1, no padding), then each stride-2 layer doubles the side.
  x = UpConv(b, x, "main.0", kBaseWidth * 8, 1, 0, 1.41421356f);
  x = b.Node("Relu", {x}, {}, "main.2");
  x = UpConv(b, x, "main.3", kBaseWidth * 4, 2, 1, 1.41421356f);
  x = b.Node("Relu", {x}, {}, "main.5");
  x = UpConv(b, x, "main.6", kBaseWidth * 2, 2, 1, 1.41421356f);
  x = b.Node("Relu", {x}, {}, "main.8");
  x = UpConv(b, x, "main.9", kBaseWidth, 2, 1, 1.41421356f);
  x = b.Node("Relu", {x}, {}, "main.11");
  x = UpConv(b, x, "main.12", 3, 2, 1, 1.0f, /*has_bias=*/false);
  x = b.Node("Tanh", {x}, {}, "main.13");
  b.Output(x, "image");
  return std::move(b).Build();
}

}  // namespace collage
