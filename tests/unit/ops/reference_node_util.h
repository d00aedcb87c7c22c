// Running one node on the reference kernels in a test: a node over numbered values, its
// outputs or status, and checks on them.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collage/sdk/op_registry.h"

namespace collage::testing {

// A node `op` reading values 0..num_inputs-1 and writing 100, 101, ...
inline Node MakeNode(const std::string& op, size_t num_inputs, size_t num_outputs = 1) {
  Node node;
  node.name = "n1";
  node.op_type = op;
  for (size_t i = 0; i < num_inputs; ++i) node.inputs.push_back(static_cast<ValueId>(i));
  for (size_t i = 0; i < num_outputs; ++i) node.outputs.push_back(static_cast<ValueId>(100 + i));
  return node;
}

// Every output (empty tensors, and a test failure, when the node fails).
inline std::vector<Tensor> RunAll(const Node& node, int64_t opset,
                                  const std::vector<Tensor>& inputs) {
  auto result = RunReferenceNode(node, opset, inputs);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : std::vector<Tensor>(node.outputs.size());
}

inline Tensor RunOne(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  return RunAll(node, opset, inputs).at(0);
}

inline Status RunStatus(const Node& node, int64_t opset, const std::vector<Tensor>& inputs) {
  return RunReferenceNode(node, opset, inputs).status();
}

// The error's code, and that its message contains `text`.
inline void ExpectError(const Status& s, StatusCode code, const std::string& text) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
}

// `t` has this shape, T's dtype and these values.
template <typename T>
void Expect(const Tensor& t, const Shape& shape, const std::vector<T>& values) {
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.dtype(), DTypeOf<T>());
  EXPECT_EQ(t.ToVector<T>(), values);
}

inline Tensor Floats(Shape shape, const std::vector<float>& v) {
  return Tensor::FromVector(shape, v);
}
inline Tensor Int64s(Shape shape, const std::vector<int64_t>& v) {
  return Tensor::FromVector(shape, v);
}

}  // namespace collage::testing
