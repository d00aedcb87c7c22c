// 3D-ResNet-50 for video clips (Hara et al., "Can Spatiotemporal 3D CNNs Retrace the History
// of 2D CNNs and ImageNet?", the Kinetics-400 model): ResNet-50's bottlenecks with every
// convolution three-dimensional (1x1x1, 3x3x3, 1x1x1), a 7x7x7 stem that keeps the frame
// rate, projection shortcuts (type B), a 16-frame 112x112 clip in and 400 class scores out.
// Exported in eval mode: BatchNorm folded into the Convs.
#include <cmath>
#include <string>

#include "ops/graph_builder.h"
#include "zoo/layers.h"
#include "zoo/models.h"

namespace collage {

namespace {

using zoo::ConvNdBias;

constexpr int64_t kFrames = 16;
constexpr int64_t kSize = 112;
constexpr int64_t kClasses = 400;
// As in the 2-D ResNet: damped residual branches keep 16 unnormalized blocks in range.
constexpr float kResidualGain = 0.5f;
constexpr float kShortcutGain = 1.0f;

std::vector<int64_t> Cube(int64_t n) { return {n, n, n}; }

ValueId Bottleneck3d(GraphBuilder& b, ValueId x, int64_t planes, int64_t stride, bool downsample) {
  ValueId identity = x;
  ValueId y = ConvNdBias(b, x, "conv1", {.out_channels = planes, .kernel = Cube(1)});
  y = b.Node("Relu", {y}, {}, "relu1");
  y = ConvNdBias(
      b, y, "conv2",
      {.out_channels = planes, .kernel = Cube(3), .strides = Cube(stride), .pads = Cube(1)});
  y = b.Node("Relu", {y}, {}, "relu2");
  y = ConvNdBias(b, y, "conv3",
                 {.out_channels = planes * 4, .kernel = Cube(1), .gain = kResidualGain});
  if (downsample) {
    identity = ConvNdBias(b, x, "downsample.0",
                          {.out_channels = planes * 4,
                           .kernel = Cube(1),
                           .strides = Cube(stride),
                           .gain = kShortcutGain});
  }
  y = b.Node("Add", {y, identity}, {}, "add");
  return b.Node("Relu", {y}, {}, "relu3");
}

}  // namespace

StatusOr<Graph> BuildResNet3d50() {
  GraphBuilder b("resnet3d50", /*opset=*/17, /*seed=*/350);
  ValueId x = b.Input("input", DType::kFloat32, {1, 3, kFrames, kSize, kSize});
  x = ConvNdBias(b, x, "conv1",
                 {.out_channels = 64, .kernel = Cube(7), .strides = {1, 2, 2}, .pads = Cube(3)});
  x = b.Node("Relu", {x}, {}, "relu");
  x = b.Node("MaxPool", {x},
             {{"ceil_mode", 0},
              {"kernel_shape", {3, 3, 3}},
              {"pads", {1, 1, 1, 1, 1, 1}},
              {"strides", {2, 2, 2}}},
             "maxpool");

  x = zoo::ResNet50Stages(b, x, Bottleneck3d);

  x = b.Node("GlobalAveragePool", {x}, {}, "avgpool");
  x = b.Node("Flatten", {x}, {{"axis", 1}}, "flatten");
  x = zoo::LinearGemm(b, x, "fc", kClasses, 1.0f / std::sqrt(2048.0f));
  b.Output(x, "logits");
  return std::move(b).Build();
}

}  // namespace collage
