// Conv nodes run through RunReferenceNode against a naive direct convolution written here
// (explicit loops over every output element, input channel of its group and kernel position;
// auto_pad resolved from the spec's formulas). Tolerance: 1e-4 relative to the sum of the
// magnitudes of an output's terms. Covers the im2col + GEMM path, the pointwise (no im2col)
// path and the depthwise direct path, in 1-D, 2-D and 3-D.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "elementwise_test_util.h"
#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

using testing::Unravel;

struct ConvCase {
  Shape x;       // N x C x spatial...
  int64_t m;     // output channels
  Shape kernel;  // spatial kernel dims
  int64_t group = 1;
  std::vector<int64_t> strides = {};    // empty: attribute absent
  std::vector<int64_t> dilations = {};  // empty: attribute absent
  std::vector<int64_t> pads = {};       // empty: attribute absent
  std::string auto_pad = "";            // empty: attribute absent
  bool bias = true;
  bool kernel_shape_attr = true;
};

std::string Describe(const ConvCase& c) {
  auto ints = [](const std::vector<int64_t>& v) {
    std::string s = "[";
    for (int64_t x : v) s += std::to_string(x) + ",";
    return s + "]";
  };
  return "x=" + ShapeToString(c.x) + " m=" + std::to_string(c.m) + " k=" + ShapeToString(c.kernel) +
         " g=" + std::to_string(c.group) + " s=" + ints(c.strides) + " d=" + ints(c.dilations) +
         " p=" + ints(c.pads) + " auto_pad=" + c.auto_pad + " bias=" + std::to_string(c.bias);
}

Tensor Random(DType dtype, const Shape& shape, std::mt19937& rng) {
  Tensor t(dtype, shape);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (dtype == DType::kFloat32) {
      t.data_as<float>()[i] = static_cast<float>(dist(rng));
    } else {
      t.data_as<double>()[i] = dist(rng);
    }
  }
  return t;
}


struct Reference {
  Shape shape;
  std::vector<double> values;
  std::vector<double> magnitude;
};

Reference NaiveConv(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor* b) {
  const size_t nd = c.kernel.size();
  const std::vector<double> xv = x.ToVector<double>(), wv = w.ToVector<double>();
  const std::vector<double> bv = b != nullptr ? b->ToVector<double>() : std::vector<double>();
  std::vector<int64_t> strides = c.strides.empty() ? std::vector<int64_t>(nd, 1) : c.strides;
  std::vector<int64_t> dil = c.dilations.empty() ? std::vector<int64_t>(nd, 1) : c.dilations;
  std::vector<int64_t> pads = c.pads.empty() ? std::vector<int64_t>(2 * nd, 0) : c.pads;
  Shape in(c.x.begin() + 2, c.x.end()), out(nd);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t eff = (c.kernel[d] - 1) * dil[d] + 1;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      out[d] = (in[d] + strides[d] - 1) / strides[d];
      const int64_t total = std::max<int64_t>(0, (out[d] - 1) * strides[d] + eff - in[d]);
      pads[d] = c.auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
      pads[d + nd] = total - pads[d];
    } else {
      if (c.auto_pad == "VALID") pads[d] = pads[d + nd] = 0;
      out[d] = (in[d] + pads[d] + pads[d + nd] - eff) / strides[d] + 1;
    }
  }
  const int64_t n = c.x[0], ch = c.x[1], cg = ch / c.group, mg = c.m / c.group;
  Reference r;
  r.shape = {n, c.m};
  r.shape.insert(r.shape.end(), out.begin(), out.end());
  const int64_t out_size = NumElements(out), k_size = NumElements(c.kernel);
  const int64_t in_size = NumElements(in);
  std::vector<std::vector<int64_t>> kpositions;
  for (int64_t kp = 0; kp < k_size; ++kp) kpositions.push_back(Unravel(kp, c.kernel));
  std::vector<std::vector<int64_t>> opositions;
  for (int64_t o = 0; o < out_size; ++o) opositions.push_back(Unravel(o, out));
  for (int64_t b_i = 0; b_i < n; ++b_i) {
    for (int64_t oc = 0; oc < c.m; ++oc) {
      const int64_t grp = oc / mg;
      for (int64_t o = 0; o < out_size; ++o) {
        const std::vector<int64_t>& opos = opositions[static_cast<size_t>(o)];
        double sum = b != nullptr ? bv[static_cast<size_t>(oc)] : 0.0;
        double mag = std::fabs(sum);
        for (int64_t icg = 0; icg < cg; ++icg) {
          const int64_t ic = grp * cg + icg;
          for (int64_t kp = 0; kp < k_size; ++kp) {
            const std::vector<int64_t>& kpos = kpositions[static_cast<size_t>(kp)];
            int64_t flat = 0;
            bool inside = true;
            for (size_t d = 0; d < nd; ++d) {
              const int64_t i = opos[d] * strides[d] + kpos[d] * dil[d] - pads[d];
              inside = inside && i >= 0 && i < in[d];
              flat = flat * in[d] + i;
            }
            if (!inside) continue;
            const double t = xv[static_cast<size_t>((b_i * ch + ic) * in_size + flat)] *
                             wv[static_cast<size_t>((oc * cg + icg) * k_size + kp)];
            sum += t;
            mag += std::fabs(t);
          }
        }
        r.values.push_back(sum);
        r.magnitude.push_back(mag);
      }
    }
  }
  return r;
}

Node ConvNode(const ConvCase& c) {
  Node node;
  node.name = "conv0";
  node.op_type = "Conv";
  node.inputs = c.bias ? std::vector<ValueId>{0, 1, 2} : std::vector<ValueId>{0, 1};
  node.outputs = {3};
  if (c.group != 1) node.attributes.Set("group", c.group);
  if (!c.strides.empty()) node.attributes.Set("strides", c.strides);
  if (!c.dilations.empty()) node.attributes.Set("dilations", c.dilations);
  if (!c.pads.empty()) node.attributes.Set("pads", c.pads);
  if (!c.auto_pad.empty()) node.attributes.Set("auto_pad", c.auto_pad);
  if (c.kernel_shape_attr) node.attributes.Set("kernel_shape", std::vector<int64_t>(c.kernel));
  return node;
}

void CheckConv(const ConvCase& c, uint32_t seed, DType dtype = DType::kFloat32) {
  SCOPED_TRACE(Describe(c));
  std::mt19937 rng(seed);
  Shape w_shape = {c.m, c.x[1] / c.group};
  w_shape.insert(w_shape.end(), c.kernel.begin(), c.kernel.end());
  std::vector<Tensor> inputs = {Random(dtype, c.x, rng), Random(dtype, w_shape, rng)};
  if (c.bias) inputs.push_back(Random(dtype, {c.m}, rng));
  auto out = RunReferenceNode(ConvNode(c), 11, inputs);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Reference want = NaiveConv(c, inputs[0], inputs[1], c.bias ? &inputs[2] : nullptr);
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.dtype(), dtype);
  ASSERT_EQ(y.shape(), want.shape);
  const std::vector<double> got = y.ToVector<double>();
  int failures = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - want.values[i]) <= 1e-4 * (want.magnitude[i] + 1e-3)) &&
        ++failures <= 5) {
      ADD_FAILURE() << "element " << i << ": " << got[i] << ", expected " << want.values[i];
    }
  }
}

TEST(ConvTest, KnownValuesFromTheOnnxExamples) {
  // x = 0..24 as 1x1x5x5, W = ones 1x1x3x3 (ONNX's basic conv examples).
  std::vector<float> xs(25);
  for (int i = 0; i < 25; ++i) xs[static_cast<size_t>(i)] = static_cast<float>(i);
  Tensor x = Tensor::FromVector<float>({1, 1, 5, 5}, xs);
  Tensor w = Tensor::FromVector<float>({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  ConvCase padded{{1, 1, 5, 5}, 1, {3, 3}, 1, {}, {}, {1, 1, 1, 1}};
  padded.bias = false;
  auto y = RunReferenceNode(ConvNode(padded), 11, {x, w});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ((*y)[0].ToVector<float>(),
            (std::vector<float>{12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                                117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}));
  ConvCase strided{{1, 1, 5, 5}, 1, {3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}};
  strided.bias = false;
  y = RunReferenceNode(ConvNode(strided), 11, {x, w});
  ASSERT_TRUE(y.ok());
  EXPECT_EQ((*y)[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ((*y)[0].ToVector<float>(), (std::vector<float>{12, 27, 24, 63, 108, 81, 72, 117, 84}));
}

TEST(ConvTest, TwoDimensional) {
  uint32_t seed = 1;
  CheckConv({{1, 3, 7, 7}, 4, {3, 3}}, seed++);
  CheckConv({{2, 3, 9, 8}, 5, {3, 3}, 1, {1, 1}, {}, {1, 1, 1, 1}}, seed++);
  CheckConv({{1, 4, 11, 10}, 6, {3, 2}, 1, {2, 3}, {}, {1, 0, 2, 1}}, seed++);      // asymmetric
  CheckConv({{1, 2, 12, 12}, 3, {3, 3}, 1, {1, 2}, {2, 3}, {2, 2, 2, 2}}, seed++);  // dilated
  CheckConv({{1, 3, 16, 16}, 8, {7, 7}, 1, {2, 2}, {}, {3, 3, 3, 3}}, seed++);      // stem-like
  CheckConv({{1, 1, 6, 6}, 2, {1, 1}}, seed++);                                     // C = 1
  CheckConv({{1, 3, 5, 5}, 2, {5, 5}}, seed++);                                     // 1x1 output
  ConvCase no_attr{{1, 3, 8, 8}, 4, {3, 3}};
  no_attr.kernel_shape_attr = false;  // kernel_shape taken from W
  no_attr.bias = false;
  CheckConv(no_attr, seed++);
}

TEST(ConvTest, PointwiseSkipsIm2col) {
  CheckConv({{2, 16, 7, 9}, 24, {1, 1}}, 1);
  CheckConv({{1, 20, 6, 6}, 8, {1, 1}, 1, {2, 2}}, 2);               // strided: im2col again
  CheckConv({{1, 8, 5, 5}, 8, {1, 1}, 1, {}, {}, {1, 1, 0, 0}}, 3);  // padded: im2col again
  CheckConv({{1, 64, 14, 14}, 130, {1, 1}}, 4);                      // several GEMM blocks
}

TEST(ConvTest, Groups) {
  CheckConv({{1, 4, 8, 8}, 6, {3, 3}, 2, {}, {}, {1, 1, 1, 1}}, 1);
  CheckConv({{2, 6, 9, 7}, 9, {3, 3}, 3, {2, 1}, {}, {0, 1, 1, 0}}, 2);
  CheckConv({{1, 32, 10, 10}, 64, {1, 1}, 4}, 3);
}

TEST(ConvTest, Depthwise) {
  CheckConv({{1, 8, 12, 12}, 8, {3, 3}, 8, {}, {}, {1, 1, 1, 1}}, 1);
  CheckConv({{2, 5, 13, 11}, 5, {3, 3}, 5, {2, 2}, {}, {1, 1, 1, 1}}, 2);
  CheckConv({{1, 4, 15, 15}, 4, {5, 5}, 4, {1, 1}, {2, 2}, {4, 4, 4, 4}}, 3);
  CheckConv({{1, 4, 9, 9}, 8, {3, 3}, 4, {}, {}, {0, 1, 2, 0}}, 4);  // channel multiplier 2
  CheckConv({{1, 3, 10}, 3, {3}, 3, {2}, {}, {1, 1}}, 5);            // 1-D depthwise
  CheckConv({{1, 2, 5, 6, 7}, 2, {3, 3, 3}, 2, {1, 2, 1}, {}, {1, 1, 1, 1, 1, 1}}, 6);
}

TEST(ConvTest, AutoPad) {
  uint32_t seed = 1;
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    CheckConv({{1, 3, 7, 8}, 4, {3, 3}, 1, {}, {}, {}, mode}, seed++);
    CheckConv({{1, 3, 7, 8}, 4, {4, 2}, 1, {2, 3}, {}, {}, mode}, seed++);  // odd total pad
    CheckConv({{1, 2, 9, 9}, 2, {3, 3}, 2, {2, 2}, {2, 1}, {}, mode}, seed++);
    CheckConv({{1, 3, 10}, 2, {4}, 1, {3}, {}, {}, mode}, seed++);
  }
}

TEST(ConvTest, OneAndThreeDimensional) {
  CheckConv({{2, 3, 20}, 4, {5}, 1, {2}, {}, {2, 1}}, 1);
  CheckConv({{1, 4, 17}, 6, {3}, 2, {1}, {3}, {3, 3}}, 2);
  CheckConv({{1, 2, 6, 7, 5}, 3, {3, 3, 3}, 1, {}, {}, {1, 1, 1, 1, 1, 1}}, 3);
  CheckConv({{1, 4, 7, 6, 8}, 4, {2, 3, 2}, 2, {2, 1, 2}, {1, 2, 1}, {0, 1, 1, 1, 0, 0}}, 4);
  CheckConv({{1, 2, 3, 4, 5, 6}, 2, {2, 2, 2, 2}, 1, {}, {}, {}, "SAME_UPPER"}, 5);  // 4-D
}

TEST(ConvTest, LargerGemmShapesAndFloat64) {
  CheckConv({{1, 32, 20, 20}, 48, {3, 3}, 1, {}, {}, {1, 1, 1, 1}}, 1);
  CheckConv({{1, 64, 7, 7}, 70, {3, 3}, 1, {}, {}, {1, 1, 1, 1}}, 2);  // narrow output
  CheckConv({{1, 3, 9, 9}, 4, {3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}}, 3, DType::kFloat64);
  CheckConv({{1, 4, 9, 9}, 4, {3, 3}, 4, {}, {}, {1, 1, 1, 1}}, 4, DType::kFloat64);
}

TEST(ConvTest, Im2colInBlocksOfPixels) {
  // 3 x 3 kernel x 1100 x 1100 outputs = 10.9M im2col elements, over the 8M budget: the
  // matrix is built in two blocks of pixels, the boundary falling inside an output row.
  CheckConv({{1, 1, 1100, 1100}, 2, {3, 3}, 1, {}, {}, {1, 1, 1, 1}}, 1);
}

TEST(ConvTest, RejectsBadNodes) {
  Tensor x(DType::kFloat32, {1, 4, 5, 5});
  ConvCase bad_group{{1, 4, 5, 5}, 3, {3, 3}, 2};
  bad_group.bias = false;
  EXPECT_EQ(RunReferenceNode(ConvNode(bad_group), 11, {x, Tensor(DType::kFloat32, {3, 2, 3, 3})})
                .status()
                .code(),
            StatusCode::kInvalidModel);
  ConvCase base{{1, 4, 5, 5}, 2, {3, 3}};
  base.bias = false;
  Node wrong_kernel = ConvNode(base);
  wrong_kernel.attributes.Set("kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_EQ(RunReferenceNode(wrong_kernel, 11, {x, Tensor(DType::kFloat32, {2, 4, 3, 3})})
                .status()
                .code(),
            StatusCode::kInvalidModel);
  Node bad_pads = ConvNode(base);
  bad_pads.attributes.Set("pads", std::vector<int64_t>{1, 1});
  EXPECT_EQ(
      RunReferenceNode(bad_pads, 11, {x, Tensor(DType::kFloat32, {2, 4, 3, 3})}).status().code(),
      StatusCode::kInvalidModel);
  Node bad_auto = ConvNode(base);
  bad_auto.attributes.Set("auto_pad", std::string("SAME"));
  EXPECT_EQ(
      RunReferenceNode(bad_auto, 11, {x, Tensor(DType::kFloat32, {2, 4, 3, 3})}).status().code(),
      StatusCode::kInvalidModel);
  EXPECT_EQ(RunReferenceNode(ConvNode(base), 11,
                             {x, Tensor(DType::kFloat32, {2, 4, 7, 7})})  // kernel > input
                .status()
                .code(),
            StatusCode::kInvalidModel);
  ConvCase with_bias{{1, 4, 5, 5}, 2, {3, 3}};
  EXPECT_EQ(
      RunReferenceNode(ConvNode(with_bias), 11,
                       {x, Tensor(DType::kFloat32, {2, 4, 3, 3}), Tensor(DType::kFloat32, {3})})
          .status()
          .code(),
      StatusCode::kInvalidModel);
  auto ints =
      RunReferenceNode(ConvNode(base), 11,
                       {Tensor(DType::kInt32, {1, 4, 5, 5}), Tensor(DType::kInt32, {2, 4, 3, 3})});
  EXPECT_EQ(ints.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(ints.status().message().find("Conv node 'conv0'"), std::string::npos);
  EXPECT_EQ(OpRegistry::Global().Find("", "Conv")->kind, OpKind::kOutEWiseFusable);
}

}  // namespace
}  // namespace collage
