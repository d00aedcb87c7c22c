// Helpers shared by the zoo tests: a minimal graph interpreter over the reference kernels
// (independent of the runtime), deterministic inputs, and tensor comparisons.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "collage/status.h"
#include "collage/tensor.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/op_registry.h"
#include "collage/random_tensor.h"

namespace collage::zoo_test {

// Seeded random data (util/random_tensor.h) for every graph input, by name.
inline std::map<std::string, Tensor> RandomGraphInputs(const Graph& graph, unsigned seed) {
  std::mt19937 rng(seed);
  std::map<std::string, Tensor> inputs;
  for (ValueId in : graph.inputs()) {
    const Value& value = graph.value(in);
    inputs[value.name] = RandomTensor(value.type.dtype, value.type.shape, rng);
  }
  return inputs;
}

// Runs `graph` node by node with RunReferenceNode; frees each value after its last use.
inline StatusOr<std::map<std::string, Tensor>> RunWithReferenceKernels(
    const Graph& graph, const std::map<std::string, Tensor>& inputs) {
  std::vector<Tensor> env(static_cast<size_t>(graph.num_values()));
  std::vector<int> last_use(env.size(), -1);
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    for (ValueId in : graph.node(n).inputs) {
      if (in != kNoValue) last_use[static_cast<size_t>(in)] = n;
    }
  }
  for (ValueId out : graph.outputs()) last_use[static_cast<size_t>(out)] = graph.num_nodes();
  for (ValueId v = 0; v < graph.num_values(); ++v) {
    if (graph.value(v).is_constant()) env[static_cast<size_t>(v)] = *graph.value(v).constant;
  }
  for (ValueId in : graph.inputs()) {
    auto it = inputs.find(graph.value(in).name);
    if (it == inputs.end()) {
      return Status(StatusCode::kInvalidArgument, "missing input " + graph.value(in).name);
    }
    env[static_cast<size_t>(in)] = it->second;
  }
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    std::vector<Tensor> args;
    for (ValueId in : node.inputs) args.push_back(in == kNoValue ? Tensor() : env[static_cast<size_t>(in)]);
    COLLAGE_ASSIGN_OR_RETURN(std::vector<Tensor> results, RunReferenceNode(node, graph.opset(), args));
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] != kNoValue) env[static_cast<size_t>(node.outputs[i])] = results[i];
    }
    for (ValueId in : node.inputs) {
      if (in != kNoValue && last_use[static_cast<size_t>(in)] == n && !graph.value(in).is_constant()) {
        env[static_cast<size_t>(in)] = Tensor();
      }
    }
  }
  std::map<std::string, Tensor> outputs;
  for (ValueId out : graph.outputs()) outputs[graph.value(out).name] = env[static_cast<size_t>(out)];
  return outputs;
}

// Deterministic pseudo-random data: floats roughly N(0, 1)-like in [-2, 2), or token ids.
inline Tensor PatternFloats(Shape shape, uint32_t seed) {
  Tensor t(DType::kFloat32, std::move(shape));
  uint32_t s = seed * 2654435761u + 1;
  float* p = t.data_as<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 8) / 16777216.0f * 4.0f - 2.0f;
  }
  return t;
}

inline Tensor PatternIds(Shape shape, int64_t vocab, uint32_t seed) {
  Tensor t(DType::kInt64, std::move(shape));
  uint32_t s = seed * 2654435761u + 7;
  int64_t* p = t.data_as<int64_t>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<int64_t>(s >> 8) % vocab;
  }
  return t;
}

struct Stats {
  double mean = 0;
  double stddev = 0;
  double max_abs = 0;
  int64_t non_finite = 0;
};

inline Stats ComputeStats(const Tensor& t) {
  Stats s;
  const std::vector<double> v = t.ToVector<double>();
  double sum = 0, sq = 0;
  int64_t n = 0;
  for (double x : v) {
    if (!std::isfinite(x)) {
      ++s.non_finite;
      continue;
    }
    sum += x;
    sq += x * x;
    s.max_abs = std::max(s.max_abs, std::abs(x));
    ++n;
  }
  if (n > 0) {
    s.mean = sum / static_cast<double>(n);
    s.stddev = std::sqrt(std::max(0.0, sq / static_cast<double>(n) - s.mean * s.mean));
  }
  return s;
}

// Largest |a - b| relative to max(1, max |b|); infinity if shapes or dtypes differ.
inline double MaxRelativeDifference(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return INFINITY;
  const std::vector<double> x = a.ToVector<double>();
  const std::vector<double> y = b.ToVector<double>();
  double scale = 1, diff = 0;
  for (size_t i = 0; i < y.size(); ++i) scale = std::max(scale, std::abs(y[i]));
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = std::abs(x[i] - y[i]);
    if (!(d <= diff)) diff = std::isnan(d) ? INFINITY : d;
  }
  return diff / scale;
}

}  // namespace collage::zoo_test
