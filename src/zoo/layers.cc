#include "zoo/layers.h"

#include <cmath>

namespace collage::zoo {

ValueId ConvBias(GraphBuilder& b, ValueId x, const std::string& name, const ConvSpec& spec) {
  return ConvNdBias(b, x, name,
                    {.out_channels = spec.out_channels,
                     .kernel = {spec.kernel, spec.kernel},
                     .strides = {spec.stride, spec.stride},
                     .pads = {spec.pad, spec.pad},
                     .group = spec.group,
                     .gain = spec.gain,
                     .has_bias = spec.has_bias});
}

ValueId ConvNdBias(GraphBuilder& b, ValueId x, const std::string& name, const ConvNdSpec& spec) {
  if (!b.ok()) return kNoValue;
  const size_t dims = spec.kernel.size();
  const int64_t in_channels = b.dim(x, 1);
  int64_t fan_in = in_channels / spec.group;
  Shape weight_shape = {spec.out_channels, in_channels / spec.group};
  for (int64_t k : spec.kernel) {
    fan_in *= k;
    weight_shape.push_back(k);
  }
  ValueId w = b.RandomNormal(name + ".weight", weight_shape,
                             spec.gain / std::sqrt(static_cast<float>(fan_in)));
  std::vector<ValueId> inputs = {x, w};
  if (spec.has_bias) {
    inputs.push_back(b.RandomNormal(name + ".bias", {spec.out_channels}, kBiasStddev));
  }
  std::vector<int64_t> strides =
      spec.strides.empty() ? std::vector<int64_t>(dims, 1) : spec.strides;
  const std::vector<int64_t> per_dim =
      spec.pads.empty() ? std::vector<int64_t>(dims, 0) : spec.pads;
  std::vector<int64_t> pads = per_dim;  // ONNX: all begins, then all ends
  pads.insert(pads.end(), per_dim.begin(), per_dim.end());
  return b.Node("Conv", inputs,
                {{"dilations", Attribute(std::vector<int64_t>(dims, 1))},
                 {"group", spec.group},
                 {"kernel_shape", Attribute(spec.kernel)},
                 {"pads", Attribute(pads)},
                 {"strides", Attribute(strides)}},
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

ValueId LayerNorm(GraphBuilder& b, ValueId x, const std::string& name, float epsilon) {
  if (!b.ok()) return kNoValue;
  const int64_t hidden = b.dim(x, -1);
  ValueId gamma = b.RandomUniform(name + ".weight", {hidden}, 0.9f, 1.1f);
  ValueId beta = b.RandomUniform(name + ".bias", {hidden}, -0.1f, 0.1f);
  return b.Node("LayerNormalization", {x, gamma, beta}, {{"axis", -1}, {"epsilon", epsilon}}, name);
}

}  // namespace collage::zoo
