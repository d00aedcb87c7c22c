#include "zoo/layers.h"

#include <cmath>

namespace collage::zoo {

ValueId ConvBias(GraphBuilder& b, ValueId x, const std::string& name, const ConvSpec& spec) {
  if (!b.ok()) return kNoValue;
  const int64_t in_channels = b.dim(x, 1);
  const int64_t fan_in = in_channels / spec.group * spec.kernel * spec.kernel;
  ValueId w = b.RandomNormal(name + ".weight",
                             {spec.out_channels, in_channels / spec.group, spec.kernel, spec.kernel},
                             spec.gain / std::sqrt(static_cast<float>(fan_in)));
  ValueId bias = b.RandomNormal(name + ".bias", {spec.out_channels}, kBiasStddev);
  const int64_t p = spec.pad;
  return b.Node("Conv", {x, w, bias},
                {{"dilations", {1, 1}},
                 {"group", spec.group},
                 {"kernel_shape", {spec.kernel, spec.kernel}},
                 {"pads", {p, p, p, p}},
                 {"strides", {spec.stride, spec.stride}}},
                name);
}

ValueId LinearGemm(GraphBuilder& b, ValueId x, const std::string& name, int64_t out_features,
                   float weight_stddev) {
  if (!b.ok()) return kNoValue;
  const int64_t in_features = b.dim(x, -1);
  ValueId w = b.RandomNormal(name + ".weight", {out_features, in_features}, weight_stddev);
  ValueId bias = b.RandomNormal(name + ".bias", {out_features}, kBiasStddev);
  return b.Node("Gemm", {x, w, bias}, {{"alpha", 1.0f}, {"beta", 1.0f}, {"transB", 1}}, name);
}

ValueId LinearMatMul(GraphBuilder& b, ValueId x, const std::string& name, int64_t out_features,
                     float weight_stddev) {
  if (!b.ok()) return kNoValue;
  const int64_t in_features = b.dim(x, -1);
  auto scope = b.Scope(name);
  ValueId w = b.RandomNormal("weight", {in_features, out_features}, weight_stddev);
  ValueId bias = b.RandomNormal("bias", {out_features}, kBiasStddev);
  ValueId y = b.Node("MatMul", {x, w});
  return b.Node("Add", {y, bias});
}

}  // namespace collage::zoo
