// ResNet-50 v1.5 and ResNeXt-50 (32x4d) as torchvision defines them (the stride of a
// downsampling bottleneck sits on its 3x3 conv, grouped in ResNeXt), exported in eval mode:
// every BatchNorm folded into its Conv's bias.
#include <cmath>
#include <string>

#include "ops/graph_builder.h"
#include "zoo/layers.h"
#include "zoo/models.h"

namespace collage {

namespace {

using zoo::ConvBias;
using zoo::ConvSpec;

// Without BatchNorm to renormalize, each residual add grows the activations; a damped last
// conv (gain 0.5) keeps them within a few units through all 16 blocks.
constexpr float kResidualGain = 0.5f;
constexpr float kShortcutGain = 1.0f;

// torchvision's groups / width_per_group: ResNet-50 is 1 / 64, ResNeXt-50 32x4d is 32 / 4.
struct Cardinality {
  int64_t groups = 1;
  int64_t width_per_group = 64;
};

ValueId Bottleneck(GraphBuilder& b, ValueId x, int64_t planes, int64_t stride, bool downsample,
                   Cardinality cardinality) {
  const int64_t width = planes * cardinality.width_per_group / 64 * cardinality.groups;
  ValueId identity = x;
  ValueId y = ConvBias(b, x, "conv1", {.out_channels = width, .kernel = 1});
  y = b.Node("Relu", {y}, {}, "relu1");
  y = ConvBias(b, y, "conv2",
               {.out_channels = width,
                .kernel = 3,
                .stride = stride,
                .pad = 1,
                .group = cardinality.groups});
  y = b.Node("Relu", {y}, {}, "relu2");
  y = ConvBias(b, y, "conv3", {.out_channels = planes * 4, .kernel = 1, .gain = kResidualGain});
  if (downsample) {
    identity = ConvBias(
        b, x, "downsample.0",
        {.out_channels = planes * 4, .kernel = 1, .stride = stride, .gain = kShortcutGain});
  }
  y = b.Node("Add", {y, identity}, {}, "add");
  return b.Node("Relu", {y}, {}, "relu3");
}

StatusOr<Graph> BuildBottleneckResNet(const std::string& name, uint64_t seed,
                                      Cardinality cardinality) {
  GraphBuilder b(name, /*opset=*/17, seed);
  ValueId x = b.Input("input", DType::kFloat32, {1, 3, 224, 224});
  x = ConvBias(b, x, "conv1", {.out_channels = 64, .kernel = 7, .stride = 2, .pad = 3});
  x = b.Node("Relu", {x}, {}, "relu");
  x = b.Node(
      "MaxPool", {x},
      {{"ceil_mode", 0}, {"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}},
      "maxpool");

  x = zoo::ResNet50Stages(
      b, x, [&](GraphBuilder& g, ValueId in, int64_t planes, int64_t stride, bool downsample) {
        return Bottleneck(g, in, planes, stride, downsample, cardinality);
      });

  x = b.Node("GlobalAveragePool", {x}, {}, "avgpool");
  x = b.Node("Flatten", {x}, {{"axis", 1}}, "flatten");
  x = zoo::LinearGemm(b, x, "fc", 1000, 1.0f / std::sqrt(2048.0f));
  b.Output(x, "logits");
  return std::move(b).Build();
}

}  // namespace

StatusOr<Graph> BuildResNet50() { return BuildBottleneckResNet("resnet50", 50, {}); }

StatusOr<Graph> BuildResNeXt50() {
  return BuildBottleneckResNet("resnext50", 5032, {.groups = 32, .width_per_group = 4});
}

}  // namespace collage
