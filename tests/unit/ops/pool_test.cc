// Pooling nodes run through RunReferenceNode against naive loops written here: the output
// shape from the spec's formulas, then every kernel position of every window visited with an
// explicit bounds check. Max results and indices must match exactly, averages within 1e-5
// relative. Large planes make the kernels go parallel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "elementwise_test_util.h"
#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

using testing::Unravel;

struct PoolCase {
  Shape x;
  Shape kernel;
  std::vector<int64_t> strides = {};
  std::vector<int64_t> pads = {};
  std::vector<int64_t> dilations = {};
  std::string auto_pad = "";
  int64_t ceil_mode = 0;
  int64_t count_include_pad = 0;
  int64_t storage_order = 0;
};

std::string Describe(const PoolCase& c) {
  auto ints = [](const std::vector<int64_t>& v) {
    std::string s = "[";
    for (int64_t x : v) s += std::to_string(x) + ",";
    return s + "]";
  };
  return "x=" + ShapeToString(c.x) + " k=" + ShapeToString(c.kernel) + " s=" + ints(c.strides) +
         " p=" + ints(c.pads) + " d=" + ints(c.dilations) + " auto_pad=" + c.auto_pad +
         " ceil=" + std::to_string(c.ceil_mode) + " cip=" + std::to_string(c.count_include_pad) +
         " order=" + std::to_string(c.storage_order);
}


struct Reference {
  Shape shape;
  std::vector<double> values;
  std::vector<int64_t> indices;
};

// is_max: max (with indices) or average.
Reference NaivePool(const PoolCase& c, const std::vector<double>& x, bool is_max) {
  const size_t nd = c.kernel.size();
  std::vector<int64_t> s = c.strides.empty() ? std::vector<int64_t>(nd, 1) : c.strides;
  std::vector<int64_t> dil = c.dilations.empty() ? std::vector<int64_t>(nd, 1) : c.dilations;
  std::vector<int64_t> pads = c.pads.empty() ? std::vector<int64_t>(2 * nd, 0) : c.pads;
  Shape in(c.x.begin() + 2, c.x.end()), out(nd);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t eff = (c.kernel[d] - 1) * dil[d] + 1;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      out[d] = (in[d] + s[d] - 1) / s[d];
      const int64_t total = std::max<int64_t>(0, (out[d] - 1) * s[d] + eff - in[d]);
      pads[d] = c.auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
      pads[d + nd] = total - pads[d];
    } else {
      if (c.auto_pad == "VALID") pads[d] = pads[d + nd] = 0;
      const double exact =
          static_cast<double>(in[d] + pads[d] + pads[d + nd] - eff) / static_cast<double>(s[d]);
      out[d] = static_cast<int64_t>(c.ceil_mode ? std::ceil(exact) : std::floor(exact)) + 1;
      // Windows starting in the end padding are dropped.
      if (c.ceil_mode && (out[d] - 1) * s[d] >= in[d] + pads[d]) --out[d];
    }
  }
  Reference r;
  r.shape = {c.x[0], c.x[1]};
  r.shape.insert(r.shape.end(), out.begin(), out.end());
  const int64_t planes = c.x[0] * c.x[1], in_size = NumElements(in);
  const int64_t out_size = NumElements(out), k_size = NumElements(c.kernel);
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t o = 0; o < out_size; ++o) {
      const std::vector<int64_t> opos = Unravel(o, out);
      double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
      int64_t best_index = -1, count = 0, padded_count = 0;
      for (int64_t kp = 0; kp < k_size; ++kp) {
        const std::vector<int64_t> kpos = Unravel(kp, c.kernel);
        bool inside = true, inside_padded = true;
        std::vector<int64_t> ipos(nd);
        for (size_t d = 0; d < nd; ++d) {
          ipos[d] = opos[d] * s[d] + kpos[d] * dil[d] - pads[d];
          inside = inside && ipos[d] >= 0 && ipos[d] < in[d];
          inside_padded = inside_padded && ipos[d] >= -pads[d] && ipos[d] < in[d] + pads[d + nd];
        }
        padded_count += inside_padded;
        if (!inside) continue;
        int64_t row_major = 0, col_major = 0, mul = 1;
        for (size_t d = 0; d < nd; ++d) {
          row_major = row_major * in[d] + ipos[d];
          col_major += ipos[d] * mul;
          mul *= in[d];
        }
        const double v = x[static_cast<size_t>(p * in_size + row_major)];
        ++count;
        sum += v;
        if (v > best) {
          best = v;
          best_index = p * in_size + (c.storage_order == 1 ? col_major : row_major);
        }
      }
      if (is_max) {
        r.values.push_back(best);
        r.indices.push_back(best_index);
      } else {
        r.values.push_back(sum / static_cast<double>(c.count_include_pad ? padded_count : count));
      }
    }
  }
  return r;
}

Node PoolNode(const std::string& op, const PoolCase& c, int num_outputs = 1) {
  Node node;
  node.name = "pool0";
  node.op_type = op;
  node.inputs = {0};
  for (int i = 0; i < num_outputs; ++i) node.outputs.push_back(1 + i);
  node.attributes.Set("kernel_shape", std::vector<int64_t>(c.kernel));
  if (!c.strides.empty()) node.attributes.Set("strides", c.strides);
  if (!c.pads.empty()) node.attributes.Set("pads", c.pads);
  if (!c.dilations.empty()) node.attributes.Set("dilations", c.dilations);
  if (!c.auto_pad.empty()) node.attributes.Set("auto_pad", c.auto_pad);
  if (c.ceil_mode != 0) node.attributes.Set("ceil_mode", c.ceil_mode);
  if (op == "AveragePool") node.attributes.Set("count_include_pad", c.count_include_pad);
  if (c.storage_order != 0) node.attributes.Set("storage_order", c.storage_order);
  return node;
}

// Distinct values (a shuffled ramp) so that the argmax is unique.
template <typename T>
Tensor RandomInput(const Shape& shape, std::mt19937& rng) {
  Tensor t(DTypeOf<T>(), shape);
  std::vector<int64_t> order(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t i = 0; i < order.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      t.data_as<T>()[i] = static_cast<T>(order[i]) * T(0.01) - T(1);
    } else {
      t.data_as<T>()[i] = static_cast<T>(order[i] % 250 + std::numeric_limits<T>::min());
    }
  }
  return t;
}

// Runs the node with and without the Indices output: they take different kernels (per-window
// with argmax, row-wise without), and both must give the reference values.
template <typename T = float>
void CheckMaxPool(const PoolCase& c, uint32_t seed) {
  SCOPED_TRACE(Describe(c));
  std::mt19937 rng(seed);
  Tensor x = RandomInput<T>(c.x, rng);
  const Reference want = NaivePool(c, x.ToVector<double>(), true);
  for (bool with_indices : {true, false}) {
    SCOPED_TRACE(with_indices ? "with Indices" : "without Indices");
    auto out = RunReferenceNode(PoolNode("MaxPool", c, with_indices ? 2 : 1), 12, {x});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ((*out)[0].dtype(), DTypeOf<T>());
    ASSERT_EQ((*out)[0].shape(), want.shape);
    EXPECT_EQ((*out)[0].ToVector<double>(), want.values);
    if (with_indices) {
      ASSERT_EQ((*out)[1].dtype(), DType::kInt64);
      ASSERT_EQ((*out)[1].shape(), want.shape);
      EXPECT_EQ((*out)[1].ToVector<int64_t>(), want.indices);
    }
  }
}

void CheckAveragePool(const PoolCase& c, uint32_t seed, DType dtype = DType::kFloat32) {
  SCOPED_TRACE(Describe(c));
  std::mt19937 rng(seed);
  Tensor x =
      dtype == DType::kFloat32 ? RandomInput<float>(c.x, rng) : RandomInput<double>(c.x, rng);
  auto out = RunReferenceNode(PoolNode("AveragePool", c), 19, {x});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Reference want = NaivePool(c, x.ToVector<double>(), false);
  ASSERT_EQ((*out)[0].shape(), want.shape);
  const std::vector<double> got = (*out)[0].ToVector<double>();
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want.values[i], 1e-5 * (1.0 + std::fabs(want.values[i]))) << "at " << i;
  }
}

TEST(PoolTest, MaxPool2d) {
  uint32_t seed = 1;
  CheckMaxPool({{1, 3, 8, 8}, {2, 2}, {2, 2}}, seed++);
  CheckMaxPool({{2, 2, 9, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}}, seed++);  // ResNet-style
  CheckMaxPool({{1, 1, 10, 9}, {3, 2}, {1, 2}, {0, 1, 2, 0}}, seed++);
  CheckMaxPool({{1, 2, 12, 12}, {3, 3}, {1, 1}, {}, {2, 3}}, seed++);  // dilations
  CheckMaxPool({{1, 2, 12, 11}, {2, 2}, {2, 1}, {1, 1, 1, 1}, {2, 2}}, seed++);
  CheckMaxPool({{1, 1, 5, 5}, {5, 5}}, seed++);                           // global-sized window
  CheckMaxPool({{1, 16, 56, 56}, {3, 3}, {2, 2}, {1, 1, 1, 1}}, seed++);  // parallel planes
  CheckMaxPool({{1, 3, 6, 6}, {2, 2}}, seed++);
}

TEST(PoolTest, MaxPoolCeilModeAndAutoPad) {
  uint32_t seed = 1;
  CheckMaxPool({{1, 1, 4, 4}, {3, 3}, {2, 2}, {}, {}, "", 1}, seed++);
  CheckMaxPool({{1, 2, 7, 8}, {3, 3}, {2, 3}, {1, 0, 1, 1}, {}, "", 1}, seed++);
  // (out - 1) * stride lands on the end padding: that window is dropped.
  CheckMaxPool({{1, 1, 4, 4}, {2, 2}, {2, 2}, {0, 0, 1, 1}, {}, "", 1}, seed++);
  CheckMaxPool({{1, 2, 9, 10}, {3, 2}, {2, 2}, {}, {2, 1}, "", 1}, seed++);
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    CheckMaxPool({{1, 2, 7, 8}, {3, 3}, {2, 2}, {}, {}, mode}, seed++);
    CheckMaxPool({{1, 2, 7, 8}, {2, 4}, {1, 3}, {}, {}, mode}, seed++);
    CheckMaxPool({{1, 2, 9, 9}, {3, 2}, {2, 1}, {}, {2, 2}, mode}, seed++);
  }
}

TEST(PoolTest, MaxPoolIndicesColumnMajor) {
  PoolCase c{{2, 2, 6, 5}, {2, 3}, {2, 1}, {1, 0, 0, 1}};
  c.storage_order = 1;
  CheckMaxPool(c, 1);
  PoolCase c3{{1, 2, 4, 5, 6}, {2, 2, 3}, {2, 2, 2}, {0, 1, 0, 1, 0, 1}};
  c3.storage_order = 1;
  CheckMaxPool(c3, 2);
}

TEST(PoolTest, MaxPoolOneAndThreeDimensionalAndIntegers) {
  CheckMaxPool({{2, 3, 17}, {4}, {3}, {1, 2}}, 1);
  CheckMaxPool({{1, 2, 5, 6, 7}, {2, 3, 2}, {1, 2, 2}, {1, 1, 0, 0, 1, 1}}, 2);
  CheckMaxPool({{1, 1, 6, 6, 6}, {3, 3, 3}, {2, 2, 2}, {}, {}, "SAME_UPPER"}, 3);
  CheckMaxPool<uint8_t>({{1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}}, 4);
  CheckMaxPool<int8_t>({{1, 2, 7, 7}, {2, 2}, {1, 1}}, 5);
  CheckMaxPool<double>({{1, 2, 5, 5}, {2, 2}, {1, 1}, {1, 1, 0, 0}}, 6);
}

TEST(PoolTest, AveragePool) {
  uint32_t seed = 1;
  for (int64_t cip : {0, 1}) {
    CheckAveragePool({{1, 3, 8, 8}, {2, 2}, {2, 2}, {}, {}, "", 0, cip}, seed++);
    CheckAveragePool({{2, 2, 9, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, "", 0, cip}, seed++);
    CheckAveragePool({{1, 1, 10, 9}, {3, 2}, {1, 2}, {0, 1, 2, 0}, {}, "", 0, cip}, seed++);
    CheckAveragePool({{1, 2, 7, 8}, {3, 3}, {2, 3}, {1, 0, 1, 1}, {}, "", 1, cip}, seed++);
    CheckAveragePool({{1, 2, 12, 12}, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 3}, "", 0, cip}, seed++);
    CheckAveragePool({{1, 2, 12, 11}, {3, 2}, {2, 2}, {1, 1, 1, 1}, {2, 2}, "", 1, cip}, seed++);
    for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
      CheckAveragePool({{1, 2, 7, 8}, {3, 3}, {2, 2}, {}, {}, mode, 0, cip}, seed++);
      CheckAveragePool({{1, 2, 6, 9}, {2, 4}, {1, 3}, {}, {}, mode, 0, cip}, seed++);
    }
    CheckAveragePool({{2, 3, 17}, {4}, {3}, {1, 2}, {}, "", 0, cip}, seed++);
    CheckAveragePool({{1, 16, 40, 40}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, "", 1, cip}, seed++);
    CheckAveragePool({{1, 2, 5, 6, 7}, {2, 3, 2}, {1, 2, 2}, {1, 1, 0, 0, 1, 1}, {}, "", 1, cip},
                     seed++);
  }
  CheckAveragePool({{1, 2, 5, 5}, {3, 3}, {2, 2}, {1, 1, 1, 1}}, seed++, DType::kFloat64);
}

TEST(PoolTest, AveragePoolKnownValues) {
  // ONNX's averagepool_2d_pads example: 1x1x5x5 ramp, 3x3 window, pads 2, excluding padding.
  std::vector<float> xs(25);
  for (int i = 0; i < 25; ++i) xs[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  PoolCase c{{1, 1, 5, 5}, {3, 3}, {}, {2, 2, 2, 2}};
  auto out = RunReferenceNode(PoolNode("AveragePool", c), 11,
                              {Tensor::FromVector<float>({1, 1, 5, 5}, xs)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].shape(), (Shape{1, 1, 7, 7}));
  const std::vector<float> y = (*out)[0].ToVector<float>();
  EXPECT_FLOAT_EQ(y[0], 1.0f);           // only x[0][0] in the window
  EXPECT_FLOAT_EQ(y[1], 1.5f);           // (1 + 2) / 2
  EXPECT_FLOAT_EQ(y[3 * 7 + 3], 13.0f);  // centre: mean of 7, 8, 9, 12, 13, 14, 17, 18, 19
}

template <typename T>
void CheckGlobalPools(const Shape& shape, uint32_t seed) {
  SCOPED_TRACE(ShapeToString(shape));
  std::mt19937 rng(seed);
  Tensor x = RandomInput<T>(shape, rng);
  Node node;
  node.name = "gp";
  node.inputs = {0};
  node.outputs = {1};
  Shape out_shape(shape.size(), 1);
  out_shape[0] = shape[0];
  out_shape[1] = shape[1];
  const int64_t planes = shape[0] * shape[1], size = x.num_elements() / planes;
  const std::vector<double> xv = x.ToVector<double>();
  for (const char* op : {"GlobalMaxPool", "GlobalAveragePool"}) {
    node.op_type = op;
    auto out = RunReferenceNode(node, 13, {x});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ((*out)[0].shape(), out_shape);
    const std::vector<double> got = (*out)[0].ToVector<double>();
    for (int64_t p = 0; p < planes; ++p) {
      double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
      for (int64_t i = 0; i < size; ++i) {
        best = std::max(best, xv[static_cast<size_t>(p * size + i)]);
        sum += xv[static_cast<size_t>(p * size + i)];
      }
      const double want =
          std::string(op) == "GlobalMaxPool" ? best : sum / static_cast<double>(size);
      EXPECT_NEAR(got[static_cast<size_t>(p)], want, 1e-5 * (1.0 + std::fabs(want))) << op;
    }
  }
}

TEST(PoolTest, GlobalPools) {
  CheckGlobalPools<float>({2, 3, 7}, 1);
  CheckGlobalPools<float>({2, 3, 5, 6}, 2);
  CheckGlobalPools<float>({1, 64, 7, 7}, 3);
  CheckGlobalPools<float>({1, 2, 3, 4, 5}, 4);
  CheckGlobalPools<double>({2, 2, 4, 4}, 5);
}

// ONNX (numpy's max) propagates NaN: a window holding one gives NaN, with or without the
// Indices output, wherever in the window it sits; Indices point at the first NaN. A window of
// -inf alone gives -inf.
TEST(PoolTest, MaxPoolPropagatesNaNAndKeepsMinusInfinity) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // 1x1x2x6, 2x2 windows, stride 2: [0, 1, 6, 7], [2, 3, 8, 9], [4, 5, 10, 11].
  const std::vector<float> xs = {1,   nan, 3, 4, -inf, -inf,  //
                                 nan, 2,   9, 8, -inf, -inf};
  PoolCase c{{1, 1, 2, 6}, {2, 2}, {2, 2}};
  const Tensor x = Tensor::FromVector<float>({1, 1, 2, 6}, xs);
  for (bool with_indices : {true, false}) {
    SCOPED_TRACE(with_indices ? "with Indices" : "without Indices");
    auto out = RunReferenceNode(PoolNode("MaxPool", c, with_indices ? 2 : 1), 12, {x});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const std::vector<float> y = (*out)[0].ToVector<float>();
    ASSERT_EQ(y.size(), 3u);
    EXPECT_TRUE(std::isnan(y[0])) << y[0];
    EXPECT_EQ(y[1], 9.0f);
    EXPECT_EQ(y[2], -inf);
    if (with_indices) {
      EXPECT_EQ((*out)[1].ToVector<int64_t>(), (std::vector<int64_t>{1, 8, 4}));
    }
  }
  // The NaN first in the row, last in the window, or alone with -inf: NaN every time (the
  // row-wise kernel must not let a later value replace it).
  for (size_t at : {size_t{0}, size_t{1}, size_t{6}, size_t{7}}) {
    std::vector<float> v = {-inf, -inf, 0, 0, 0, 0, -inf, -inf, 0, 0, 0, 0};
    v[at] = nan;
    auto out =
        RunReferenceNode(PoolNode("MaxPool", c), 12, {Tensor::FromVector<float>({1, 1, 2, 6}, v)});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(std::isnan((*out)[0].ToVector<float>()[0])) << "NaN at " << at;
  }
  // GlobalMaxPool: NaN anywhere in the plane, the first element included, gives NaN.
  Node global;
  global.name = "gmp";
  global.op_type = "GlobalMaxPool";
  global.inputs = {0};
  global.outputs = {1};
  for (size_t at : {size_t{0}, size_t{5}, size_t{11}}) {
    std::vector<float> v(12, 1.0f);
    v[at] = nan;
    auto out = RunReferenceNode(global, 13, {Tensor::FromVector<float>({1, 1, 2, 6}, v)});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(std::isnan((*out)[0].ToVector<float>()[0])) << "NaN at " << at;
  }
  auto all_minus_inf = RunReferenceNode(
      global, 13, {Tensor::FromVector<float>({1, 1, 2, 2}, std::vector<float>(4, -inf))});
  ASSERT_TRUE(all_minus_inf.ok());
  EXPECT_EQ((*all_minus_inf)[0].ToVector<float>()[0], -inf);
}

TEST(PoolTest, RejectsBadNodes) {
  Tensor x(DType::kFloat32, {1, 1, 5, 5});
  PoolCase c{{1, 1, 5, 5}, {3, 3}};
  Node no_kernel = PoolNode("MaxPool", c);
  no_kernel.attributes.Erase("kernel_shape");
  EXPECT_EQ(RunReferenceNode(no_kernel, 12, {x}).status().code(), StatusCode::kInvalidModel);
  Node bad_order = PoolNode("MaxPool", c);
  bad_order.attributes.Set("storage_order", int64_t{2});
  EXPECT_EQ(RunReferenceNode(bad_order, 12, {x}).status().code(), StatusCode::kInvalidModel);
  Node too_big = PoolNode("MaxPool", PoolCase{{1, 1, 5, 5}, {7, 7}});
  EXPECT_EQ(RunReferenceNode(too_big, 12, {x}).status().code(), StatusCode::kInvalidModel);
  Node four_d = PoolNode("MaxPool", PoolCase{{1, 1, 2, 2, 2, 2}, {1, 1, 1, 1}});
  EXPECT_EQ(
      RunReferenceNode(four_d, 12, {Tensor(DType::kFloat32, {1, 1, 2, 2, 2, 2})}).status().code(),
      StatusCode::kUnsupported);
  auto ints =
      RunReferenceNode(PoolNode("AveragePool", c), 19, {Tensor(DType::kInt32, {1, 1, 5, 5})});
  EXPECT_EQ(ints.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(ints.status().message().find("AveragePool node 'pool0'"), std::string::npos);
  for (const char* op : {"MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool"}) {
    EXPECT_EQ(OpRegistry::Global().Find("", op)->kind, OpKind::kOutEWiseFusable) << op;
  }
}

}  // namespace
}  // namespace collage
