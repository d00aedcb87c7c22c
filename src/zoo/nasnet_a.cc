// NASNet-A Mobile (4@1056) in the shape of Zoph et al., "Learning Transferable Architectures
// for Scalable Image Recognition": a 3x3 stem, two stem reduction cells, then three stages of
// four normal cells separated by reduction cells; filters 44, 88, 176, 1056 channels at the
// end; input 1x3x224x224, 1000 class scores. Every cell combines its two inputs (the last
// two cells' outputs) through five pairs of branches — separable convolutions (ReLU,
// depthwise, pointwise, twice), 3x3 average and max pooling, identities — each pair summed,
// and concatenates the sums. Exported in eval mode: BatchNorm folded into the pointwise
// Convs. Where an input has twice the resolution of the other, a strided 1x1 Conv brings it
// down (the paper's factorized reduction, simplified).
#include <cmath>
#include <string>
#include <vector>

#include "ops/graph_builder.h"
#include "zoo/layers.h"
#include "zoo/models.h"

namespace collage {

namespace {

using zoo::ConvBias;

constexpr int kCellsPerStage = 4;
constexpr int64_t kStemFilters = 32;
constexpr int64_t kFilters = 44;  // of the first stage; doubled by each reduction

// ReLU, depthwise kxk (stride), pointwise 1x1; then again at stride 1 (NASNet's SepConv).
ValueId SeparableConv(GraphBuilder& b, ValueId x, const std::string& name, int64_t filters,
                      int64_t kernel, int64_t stride) {
  auto scope = b.Scope(name);
  for (int i = 1; i <= 2; ++i) {
    const std::string n = std::to_string(i);
    const int64_t channels = b.dim(x, 1);
    x = b.Node("Relu", {x}, {}, "relu" + n);
    x = ConvBias(b, x, "depthwise" + n,
                 {.out_channels = channels,
                  .kernel = kernel,
                  .stride = i == 1 ? stride : 1,
                  .pad = kernel / 2,
                  .group = channels,
                  .gain = 1.0f,
                  .has_bias = false});
    x = ConvBias(b, x, "pointwise" + n, {.out_channels = filters, .kernel = 1});
  }
  return x;
}

ValueId AvgPool3x3(GraphBuilder& b, ValueId x, int64_t stride, const std::string& name) {
  return b.Node("AveragePool", {x},
                {{"count_include_pad", 0},
                 {"kernel_shape", {3, 3}},
                 {"pads", {1, 1, 1, 1}},
                 {"strides", {stride, stride}}},
                name);
}

ValueId MaxPool3x3(GraphBuilder& b, ValueId x, int64_t stride, const std::string& name) {
  return b.Node("MaxPool", {x},
                {{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1, 1}}, {"strides", {stride, stride}}},
                name);
}

// ReLU and 1x1 Conv to `filters` channels, strided when `x` has twice the side of `size`.
ValueId Adjust(GraphBuilder& b, ValueId x, const std::string& name, int64_t filters, int64_t size) {
  const int64_t stride = b.dim(x, 2) > size ? 2 : 1;
  x = b.Node("Relu", {x}, {}, name + ".relu");
  return ConvBias(b, x, name + ".conv", {.out_channels = filters, .kernel = 1, .stride = stride});
}

// NASNet-A normal cell: 6 x filters channels out, at the resolution of `h`.
ValueId NormalCell(GraphBuilder& b, ValueId h, ValueId prev, int64_t filters) {
  ValueId x = Adjust(b, h, "adjust_h", filters, b.dim(h, 2));
  ValueId y = Adjust(b, prev, "adjust_prev", filters, b.dim(h, 2));
  ValueId b0 = b.Node("Add", {SeparableConv(b, x, "comb0.left", filters, 3, 1), x}, {}, "comb0");
  ValueId b1 = b.Node("Add",
                      {SeparableConv(b, y, "comb1.left", filters, 3, 1),
                       SeparableConv(b, x, "comb1.right", filters, 5, 1)},
                      {}, "comb1");
  ValueId b2 = b.Node("Add", {AvgPool3x3(b, x, 1, "comb2.left"), y}, {}, "comb2");
  ValueId b3 = b.Node(
      "Add", {AvgPool3x3(b, y, 1, "comb3.left"), AvgPool3x3(b, y, 1, "comb3.right")}, {}, "comb3");
  ValueId b4 = b.Node("Add",
                      {SeparableConv(b, y, "comb4.left", filters, 5, 1),
                       SeparableConv(b, y, "comb4.right", filters, 3, 1)},
                      {}, "comb4");
  return b.Node("Concat", {y, b0, b1, b2, b3, b4}, {{"axis", 1}}, "concat");
}

// NASNet-A reduction cell: 4 x filters channels out, half the side of `h`.
ValueId ReductionCell(GraphBuilder& b, ValueId h, ValueId prev, int64_t filters) {
  ValueId x = Adjust(b, h, "adjust_h", filters, b.dim(h, 2));
  ValueId y = Adjust(b, prev, "adjust_prev", filters, b.dim(h, 2));
  ValueId c0 = b.Node("Add",
                      {SeparableConv(b, y, "comb0.left", filters, 7, 2),
                       SeparableConv(b, x, "comb0.right", filters, 5, 2)},
                      {}, "comb0");
  ValueId c1 = b.Node(
      "Add", {MaxPool3x3(b, x, 2, "comb1.left"), SeparableConv(b, y, "comb1.right", filters, 7, 2)},
      {}, "comb1");
  ValueId c2 = b.Node(
      "Add", {AvgPool3x3(b, x, 2, "comb2.left"), SeparableConv(b, y, "comb2.right", filters, 5, 2)},
      {}, "comb2");
  ValueId c3 = b.Node(
      "Add",
      {MaxPool3x3(b, x, 2, "comb3.left"), SeparableConv(b, c0, "comb3.right", filters, 3, 1)}, {},
      "comb3");
  ValueId c4 = b.Node("Add", {AvgPool3x3(b, c0, 1, "comb4.left"), c1}, {}, "comb4");
  return b.Node("Concat", {c1, c2, c3, c4}, {{"axis", 1}}, "concat");
}

}  // namespace

StatusOr<Graph> BuildNasNetA() {
  GraphBuilder b("nasnet_a", /*opset=*/17, /*seed=*/1056);
  ValueId input = b.Input("input", DType::kFloat32, {1, 3, 224, 224});
  ValueId stem = ConvBias(b, input, "conv0",
                          {.out_channels = kStemFilters, .kernel = 3, .stride = 2, .pad = 1});
  ValueId prev = stem;
  ValueId h;
  {
    auto scope = b.Scope("cell_stem_0");
    h = ReductionCell(b, stem, stem, kFilters / 4);
  }
  {
    auto scope = b.Scope("cell_stem_1");
    ValueId next = ReductionCell(b, h, prev, kFilters / 2);
    prev = h;
    h = next;
  }
  int64_t filters = kFilters;
  int cell = 0;
  for (int stage = 0; stage < 3; ++stage) {
    if (stage > 0) {
      filters *= 2;
      auto scope = b.Scope("reduction_cell_" + std::to_string(stage - 1));
      ValueId next = ReductionCell(b, h, prev, filters);
      prev = h;
      h = next;
    }
    for (int i = 0; i < kCellsPerStage; ++i, ++cell) {
      auto scope = b.Scope("cell_" + std::to_string(cell));
      ValueId next = NormalCell(b, h, prev, filters);
      prev = h;
      h = next;
    }
  }
  h = b.Node("Relu", {h}, {}, "relu");
  h = b.Node("GlobalAveragePool", {h}, {}, "avgpool");
  h = b.Node("Flatten", {h}, {{"axis", 1}}, "flatten");
  h = zoo::LinearGemm(b, h, "last_linear", 1000, 1.0f / std::sqrt(static_cast<float>(6 * filters)));
  b.Output(h, "logits");
  return std::move(b).Build();
}

}  // namespace collage
