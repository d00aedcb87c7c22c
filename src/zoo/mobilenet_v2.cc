// MobileNetV2 (width 1.0) as torchvision defines it, exported in eval mode: BatchNorm
// folded into the Convs, ReLU6 as Clip with min/max inputs (opset 11+), dropout gone.
#include <cmath>
#include <string>

#include "ops/graph_builder.h"
#include "zoo/layers.h"
#include "zoo/models.h"

namespace collage {

namespace {

using zoo::ConvBias;
using zoo::ConvSpec;

// The projection conv is linear (no ReLU6 after it), so it gets Xavier-like gain 1.
constexpr float kLinearGain = 1.0f;

struct Relu6 {
  ValueId min;
  ValueId max;
  ValueId operator()(GraphBuilder& b, ValueId x, const std::string& name) const {
    return b.Node("Clip", {x, min, max}, {}, name);
  }
};

ValueId InvertedResidual(GraphBuilder& b, const Relu6& relu6, ValueId x, int64_t out_channels,
                         int64_t stride, int64_t expand_ratio) {
  const int64_t in_channels = b.dim(x, 1);
  const int64_t hidden = in_channels * expand_ratio;
  ValueId y = x;
  if (expand_ratio != 1) {
    y = ConvBias(b, y, "expand", {.out_channels = hidden, .kernel = 1});
    y = relu6(b, y, "expand.relu6");
  }
  y = ConvBias(b, y, "depthwise",
               {.out_channels = hidden, .kernel = 3, .stride = stride, .pad = 1, .group = hidden});
  y = relu6(b, y, "depthwise.relu6");
  y = ConvBias(b, y, "project", {.out_channels = out_channels, .kernel = 1, .gain = kLinearGain});
  if (stride == 1 && in_channels == out_channels) y = b.Node("Add", {x, y}, {}, "add");
  return y;
}

}  // namespace

StatusOr<Graph> BuildMobileNetV2() {
  GraphBuilder b("mobilenetv2", /*opset=*/17, /*seed=*/2);
  ValueId x = b.Input("input", DType::kFloat32, {1, 3, 224, 224});
  // One pair of bound constants shared by every Clip.
  const Relu6 relu6{b.Scalar<float>("relu6.min", 0.0f), b.Scalar<float>("relu6.max", 6.0f)};

  x = ConvBias(b, x, "features.0", {.out_channels = 32, .kernel = 3, .stride = 2, .pad = 1});
  x = relu6(b, x, "features.0.relu6");

  struct Setting {
    int64_t expand_ratio;
    int64_t channels;
    int repeats;
    int64_t stride;
  };
  constexpr Setting kSettings[] = {{1, 16, 1, 1},  {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                   {6, 96, 3, 1},  {6, 160, 3, 2}, {6, 320, 1, 1}};
  int index = 1;
  for (const Setting& s : kSettings) {
    for (int i = 0; i < s.repeats; ++i, ++index) {
      auto scope = b.Scope("features." + std::to_string(index));
      x = InvertedResidual(b, relu6, x, s.channels, i == 0 ? s.stride : 1, s.expand_ratio);
    }
  }
  x = ConvBias(b, x, "features.18", {.out_channels = 1280, .kernel = 1});
  x = relu6(b, x, "features.18.relu6");

  x = b.Node("GlobalAveragePool", {x}, {}, "avgpool");
  x = b.Node("Flatten", {x}, {{"axis", 1}}, "flatten");
  x = zoo::LinearGemm(b, x, "classifier.1", 1000, 1.0f / std::sqrt(1280.0f));
  b.Output(x, "logits");
  return std::move(b).Build();
}

}  // namespace collage
