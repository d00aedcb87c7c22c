// MatMul and Gemm nodes run through RunReferenceNode, against naive loops written here.
// Float results must match within 1e-4 relative to the sum of the magnitudes of the terms;
// integer results exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/op_helpers.h"
#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

Node MakeNode(const std::string& op_type, Attributes attributes, int num_inputs) {
  Node node;
  node.name = "n0";
  node.op_type = op_type;
  node.attributes = std::move(attributes);
  for (int i = 0; i < num_inputs; ++i) node.inputs.push_back(i);
  node.outputs.push_back(num_inputs);
  return node;
}

template <typename T>
Tensor Random(const Shape& shape, std::mt19937& rng) {
  Tensor t(DTypeOf<T>(), shape);
  T* d = t.data_as<T>();
  // Small integers keep integer products exact in the double reference; unsigned types get
  // non-negative ones.
  std::uniform_int_distribution<int> small(std::is_unsigned_v<T> ? 0 : -5, 5);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      d[i] = static_cast<T>(real(rng));
    } else {
      d[i] = static_cast<T>(small(rng));
    }
  }
  return t;
}

// The numpy matmul of a and b: 1-D operands promoted, batch dims broadcast. Also returns, per
// element, the sum of the magnitudes of its terms (the tolerance scale).
struct Expected {
  Shape shape;
  std::vector<double> values;
  std::vector<double> magnitude;
};

Expected NaiveMatMul(const Tensor& a, const Tensor& b) {
  Shape as = a.shape(), bs = b.shape();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(a_batch.size(), b_batch.size());
  a_batch.insert(a_batch.begin(), rank - a_batch.size(), 1);
  b_batch.insert(b_batch.begin(), rank - b_batch.size(), 1);
  Shape batch(rank);
  for (size_t d = 0; d < rank; ++d) batch[d] = std::max(a_batch[d], b_batch[d]);
  const std::vector<double> av = a.ToVector<double>(), bv = b.ToVector<double>();
  Expected e;
  e.shape = batch;
  if (!a_vec) e.shape.push_back(m);
  if (!b_vec) e.shape.push_back(n);
  const int64_t count = NumElements(batch);
  for (int64_t bi = 0; bi < count; ++bi) {
    // Unravel bi over batch, then ravel over each operand's (broadcast) batch dims.
    int64_t rest = bi, a_index = 0, b_index = 0, a_mul = 1, b_mul = 1;
    for (size_t d = rank; d-- > 0;) {
      const int64_t i = rest % batch[d];
      rest /= batch[d];
      a_index += (a_batch[d] == 1 ? 0 : i) * a_mul;
      b_index += (b_batch[d] == 1 ? 0 : i) * b_mul;
      a_mul *= a_batch[d];
      b_mul *= b_batch[d];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0, mag = 0.0;
        for (int64_t q = 0; q < k; ++q) {
          const double t = av[static_cast<size_t>(a_index * m * k + i * k + q)] *
                           bv[static_cast<size_t>(b_index * k * n + q * n + j)];
          sum += t;
          mag += std::fabs(t);
        }
        e.values.push_back(sum);
        e.magnitude.push_back(mag);
      }
    }
  }
  return e;
}

void ExpectClose(const Tensor& got, const Expected& want) {
  ASSERT_EQ(got.shape(), want.shape);
  const std::vector<double> g = got.ToVector<double>();
  ASSERT_EQ(g.size(), want.values.size());
  int failures = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (!(std::fabs(g[i] - want.values[i]) <= 1e-4 * (want.magnitude[i] + 1e-3)) &&
        ++failures <= 5) {
      ADD_FAILURE() << "element " << i << ": " << g[i] << ", expected " << want.values[i];
    }
  }
}

template <typename T>
void CheckMatMul(const Shape& a_shape, const Shape& b_shape, uint32_t seed) {
  SCOPED_TRACE(ShapeToString(a_shape) + " x " + ShapeToString(b_shape) + " " +
               DTypeName(DTypeOf<T>()));
  std::mt19937 rng(seed);
  Tensor a = Random<T>(a_shape, rng), b = Random<T>(b_shape, rng);
  auto out = RunReferenceNode(MakeNode("MatMul", {}, 2), 13, {a, b});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectClose((*out)[0], NaiveMatMul(a, b));
}

TEST(MatMulTest, TwoDimensional) {
  CheckMatMul<float>({3, 4}, {4, 5}, 1);
  CheckMatMul<float>({1, 1}, {1, 1}, 2);
  CheckMatMul<float>({67, 129}, {129, 35}, 3);
  CheckMatMul<float>({130, 300}, {300, 70}, 4);
  CheckMatMul<float>({1, 2048}, {2048, 1000}, 5);  // the GEMV path
}

TEST(MatMulTest, VectorOperandsArePromotedAndDropped) {
  CheckMatMul<float>({7}, {7, 5}, 1);        // -> [5]
  CheckMatMul<float>({6, 7}, {7}, 2);        // -> [6]
  CheckMatMul<float>({7}, {7}, 3);           // -> scalar
  CheckMatMul<float>({7}, {2, 3, 7, 4}, 4);  // -> [2, 3, 4]
  CheckMatMul<float>({2, 3, 5, 7}, {7}, 5);  // -> [2, 3, 5]
  auto out = RunReferenceNode(MakeNode("MatMul", {}, 2), 13,
                              {Tensor(DType::kFloat32, {7}), Tensor(DType::kFloat32, {7})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape(), Shape{});
}

TEST(MatMulTest, BatchedWithBroadcasting) {
  CheckMatMul<float>({2, 3, 4}, {2, 4, 5}, 1);
  CheckMatMul<float>({2, 1, 3, 4}, {5, 4, 6}, 2);  // -> [2, 5, 3, 6]
  CheckMatMul<float>({4, 33, 40}, {40, 17}, 3);    // B shared: folded into one GEMM
  CheckMatMul<float>({33, 40}, {3, 40, 17}, 4);    // A shared
  CheckMatMul<float>({3, 1, 8, 9}, {1, 2, 9, 10}, 5);
  CheckMatMul<float>({12, 128, 64}, {12, 64, 128}, 6);  // attention-like
  CheckMatMul<float>({2, 0, 4}, {4, 3}, 7);             // empty batch
  CheckMatMul<float>({2, 5, 0}, {0, 3}, 8);             // k == 0: zeros
}

TEST(MatMulTest, OtherDTypes) {
  CheckMatMul<double>({2, 3, 4}, {4, 5}, 1);
  CheckMatMul<double>({9}, {3, 9, 2}, 2);
  CheckMatMul<int32_t>({2, 3, 4}, {2, 4, 5}, 3);
  CheckMatMul<int64_t>({5, 6}, {6}, 4);
  CheckMatMul<uint32_t>({4, 4}, {4, 4}, 5);
}

TEST(MatMulTest, RejectsBadInputs) {
  const Node node = MakeNode("MatMul", {}, 2);
  auto bad_k = RunReferenceNode(node, 13,
                                {Tensor(DType::kFloat32, {2, 3}), Tensor(DType::kFloat32, {4, 5})});
  EXPECT_EQ(bad_k.status().code(), StatusCode::kInvalidModel);
  auto bad_batch = RunReferenceNode(
      node, 13, {Tensor(DType::kFloat32, {2, 2, 3}), Tensor(DType::kFloat32, {3, 3, 5})});
  EXPECT_EQ(bad_batch.status().code(), StatusCode::kInvalidModel);
  auto scalar =
      RunReferenceNode(node, 13, {Tensor::Scalar<float>(1.0f), Tensor(DType::kFloat32, {1, 5})});
  EXPECT_EQ(scalar.status().code(), StatusCode::kInvalidModel);
  auto mixed = RunReferenceNode(node, 13,
                                {Tensor(DType::kFloat32, {2, 3}), Tensor(DType::kFloat64, {3, 5})});
  EXPECT_EQ(mixed.status().code(), StatusCode::kInvalidModel);
  auto int8 =
      RunReferenceNode(node, 13, {Tensor(DType::kInt8, {2, 3}), Tensor(DType::kInt8, {3, 5})});
  EXPECT_EQ(int8.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(int8.status().message().find("MatMul node 'n0'"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Gemm

struct GemmCase {
  int64_t m, n, k;
  bool trans_a, trans_b;
  float alpha, beta;
  bool has_c;
  Shape c_shape;
};

Expected NaiveGemm(const GemmCase& g, const Tensor& a, const Tensor& b, const Tensor* c) {
  const std::vector<double> av = a.ToVector<double>(), bv = b.ToVector<double>();
  const std::vector<double> cv = c != nullptr ? c->ToVector<double>() : std::vector<double>();
  const std::vector<int64_t> cs =
      c != nullptr ? BroadcastStrides(c->shape(), {g.m, g.n}) : std::vector<int64_t>{0, 0};
  Expected e;
  e.shape = {g.m, g.n};
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0.0, mag = 0.0;
      for (int64_t q = 0; q < g.k; ++q) {
        const double t = av[static_cast<size_t>(g.trans_a ? q * g.m + i : i * g.k + q)] *
                         bv[static_cast<size_t>(g.trans_b ? j * g.k + q : q * g.n + j)];
        sum += t;
        mag += std::fabs(t);
      }
      double v = g.alpha * sum;
      mag *= std::fabs(g.alpha);
      if (c != nullptr) {
        const double cval = cv[static_cast<size_t>(i * cs[0] + j * cs[1])];
        v += g.beta * cval;
        mag += std::fabs(g.beta * cval);
      }
      e.values.push_back(v);
      e.magnitude.push_back(mag);
    }
  }
  return e;
}

template <typename T>
void CheckGemm(const GemmCase& g, uint32_t seed, int64_t opset = 13) {
  SCOPED_TRACE(testing::Message() << "m=" << g.m << " n=" << g.n << " k=" << g.k
                                  << " tA=" << g.trans_a << " tB=" << g.trans_b
                                  << " C=" << (g.has_c ? ShapeToString(g.c_shape) : "none"));
  std::mt19937 rng(seed);
  Tensor a = Random<T>(g.trans_a ? Shape{g.k, g.m} : Shape{g.m, g.k}, rng);
  Tensor b = Random<T>(g.trans_b ? Shape{g.n, g.k} : Shape{g.k, g.n}, rng);
  Attributes attrs;
  attrs.Set("transA", int64_t{g.trans_a});
  attrs.Set("transB", int64_t{g.trans_b});
  attrs.Set("alpha", g.alpha);
  attrs.Set("beta", g.beta);
  std::vector<Tensor> inputs = {a, b};
  if (g.has_c) inputs.push_back(Random<T>(g.c_shape, rng));
  auto out =
      RunReferenceNode(MakeNode("Gemm", attrs, static_cast<int>(inputs.size())), opset, inputs);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ExpectClose((*out)[0], NaiveGemm(g, a, b, g.has_c ? &inputs[2] : nullptr));
}

TEST(GemmTest, TransposesAlphaBetaAndBiasShapes) {
  uint32_t seed = 1;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      CheckGemm<float>({5, 7, 3, ta, tb, 1.0f, 1.0f, false, {}}, seed++);
      CheckGemm<float>({5, 7, 3, ta, tb, 0.5f, 2.0f, true, {5, 7}}, seed++);
      CheckGemm<float>({65, 90, 130, ta, tb, -1.5f, 0.25f, true, {90}}, seed++);
      CheckGemm<float>({1, 1000, 512, ta, tb, 1.0f, 1.0f, true, {1, 1000}}, seed++);
    }
  }
  CheckGemm<float>({4, 6, 5, false, false, 1.0f, 1.0f, true, {}}, seed++);      // scalar C
  CheckGemm<float>({4, 6, 5, false, false, 1.0f, 1.0f, true, {1}}, seed++);     // [1]
  CheckGemm<float>({4, 6, 5, false, true, 1.0f, 3.0f, true, {4, 1}}, seed++);   // column
  CheckGemm<float>({4, 6, 5, true, false, 1.0f, -1.0f, true, {1, 6}}, seed++);  // row
  CheckGemm<float>({4, 6, 5, false, false, 2.0f, 0.0f, true, {4, 6}}, seed++);  // beta 0
}

TEST(GemmTest, OtherDTypes) {
  CheckGemm<double>({6, 5, 4, true, false, 0.5f, 2.0f, true, {5}}, 1);
  CheckGemm<int32_t>({6, 5, 4, false, true, 2.0f, -1.0f, true, {6, 5}}, 2);
  CheckGemm<int64_t>({3, 8, 9, true, true, 1.0f, 1.0f, true, {1}}, 3);
}

TEST(GemmTest, OptionalC) {
  // Absent C is allowed from opset 11, required before.
  CheckGemm<float>({3, 4, 5, false, false, 1.0f, 1.0f, false, {}}, 1, 11);
  Tensor a(DType::kFloat32, {3, 5}), b(DType::kFloat32, {5, 4});
  auto old = RunReferenceNode(MakeNode("Gemm", {}, 2), 9, {a, b});
  EXPECT_EQ(old.status().code(), StatusCode::kInvalidModel);
}

TEST(GemmTest, RejectsBadInputs) {
  Tensor a(DType::kFloat32, {3, 5}), b(DType::kFloat32, {5, 4});
  auto bad_c =
      RunReferenceNode(MakeNode("Gemm", {}, 3), 13, {a, b, Tensor(DType::kFloat32, {2, 4})});
  EXPECT_EQ(bad_c.status().code(), StatusCode::kInvalidModel);
  auto bad_k = RunReferenceNode(MakeNode("Gemm", {}, 2), 13, {a, Tensor(DType::kFloat32, {4, 4})});
  EXPECT_EQ(bad_k.status().code(), StatusCode::kInvalidModel);
  auto rank3 =
      RunReferenceNode(MakeNode("Gemm", {}, 2), 13, {Tensor(DType::kFloat32, {1, 3, 5}), b});
  EXPECT_EQ(rank3.status().code(), StatusCode::kInvalidModel);
  Attributes half;
  half.Set("alpha", 0.5f);
  auto int_alpha = RunReferenceNode(MakeNode("Gemm", half, 2), 13,
                                    {Tensor(DType::kInt32, {3, 5}), Tensor(DType::kInt32, {5, 4})});
  EXPECT_EQ(int_alpha.status().code(), StatusCode::kUnsupported);
}

TEST(GemmTest, KindsAreOutElementwiseFusable) {
  EXPECT_EQ(OpRegistry::Global().Find("", "MatMul")->kind, OpKind::kOutEWiseFusable);
  EXPECT_EQ(OpRegistry::Global().Find("", "Gemm")->kind, OpKind::kOutEWiseFusable);
}

}  // namespace
}  // namespace collage
