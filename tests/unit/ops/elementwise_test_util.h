// Helpers for the op tests of the elementwise, binary, reduction and normalization families:
// building a node, running it on the reference kernels, comparing to expected values, and
// an independent (slow, obvious) numpy-broadcast index mapping to check kernels against.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "collage/tensor.h"
#include "collage/sdk/graph.h"
#include "collage/sdk/op_registry.h"

namespace collage::testing {

// Row-major unravel of `index` over `dims` (the naive reference loops of conv and pool).
inline std::vector<int64_t> Unravel(int64_t index, const Shape& dims) {
  std::vector<int64_t> out(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    out[d] = index % dims[d];
    index /= dims[d];
  }
  return out;
}

// A node with `num_inputs` inputs and the given outputs (false = an unused optional output).
inline Node MakeNode(const std::string& op_type, size_t num_inputs,
                     std::vector<bool> outputs = {true}, Attributes attributes = {}) {
  Node node;
  node.name = "n_" + op_type;
  node.op_type = op_type;
  node.attributes = std::move(attributes);
  for (size_t i = 0; i < num_inputs; ++i) node.inputs.push_back(static_cast<ValueId>(i));
  ValueId next = static_cast<ValueId>(num_inputs);
  for (bool used : outputs) node.outputs.push_back(used ? next++ : kNoValue);
  return node;
}

inline Attributes Attrs(std::initializer_list<std::pair<const char*, Attribute>> values) {
  Attributes a;
  for (const auto& [name, value] : values) a.Set(name, value);
  return a;
}

// Runs `op_type` with one output; fails the test on error.
inline Tensor RunOne(const std::string& op_type, int64_t opset, const std::vector<Tensor>& inputs,
                     Attributes attributes = {}) {
  Node node = MakeNode(op_type, inputs.size(), {true}, std::move(attributes));
  auto result = RunReferenceNode(node, opset, inputs);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (!result.ok()) return Tensor();
  return result.value()[0];
}

// The status of running `op_type` (for error paths).
inline Status RunStatus(const std::string& op_type, int64_t opset,
                        const std::vector<Tensor>& inputs, Attributes attributes = {},
                        std::vector<bool> outputs = {true}) {
  Node node = MakeNode(op_type, inputs.size(), std::move(outputs), std::move(attributes));
  return RunReferenceNode(node, opset, inputs).status();
}

template <typename T>
Tensor T1(Shape shape, std::vector<T> values) {
  return Tensor::FromVector<T>(std::move(shape), values);
}

inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Checks dtype, shape and every value (relative + absolute tolerance; NaN equals NaN).
template <typename T>
void ExpectTensor(const Tensor& t, const Shape& shape, const std::vector<T>& expected,
                  double tolerance = 0.0) {
  ASSERT_EQ(t.dtype(), DTypeOf<T>());
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(static_cast<size_t>(t.num_elements()), expected.size());
  const T* got = t.data_as<T>();
  for (size_t i = 0; i < expected.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(expected[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
        continue;
      }
      if (std::isinf(expected[i])) {
        EXPECT_EQ(got[i], expected[i]) << "element " << i;
        continue;
      }
      const double tol = tolerance * (1.0 + std::abs(static_cast<double>(expected[i])));
      EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
    } else {
      EXPECT_EQ(got[i], expected[i]) << "element " << i;
    }
  }
}

// Row-major multi-index of flat index i in `shape`.
inline std::vector<int64_t> Unflatten(int64_t i, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

// Flat index into `in` of output multi-index `out_idx` under numpy broadcasting.
inline int64_t BroadcastSource(const std::vector<int64_t>& out_idx, const Shape& in) {
  const size_t offset = out_idx.size() - in.size();
  int64_t flat = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    flat = flat * in[d] + (in[d] == 1 ? 0 : out_idx[offset + d]);
  }
  return flat;
}

}  // namespace collage::testing
