// Cast to and from float16 and bfloat16: exact widening, rounding half to even when narrowing,
// infinities, NaN and subnormals as IEEE defines them.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

Tensor CastTo(const Tensor& in, DType to) {
  Node node;
  node.name = "cast";
  node.op_type = "Cast";
  node.inputs = {0};
  node.outputs = {1};
  node.attributes.Set("to", static_cast<int64_t>(to));
  auto out = RunReferenceNode(node, 13, {in});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? out->at(0) : Tensor();
}

std::vector<uint16_t> Bits(const Tensor& t) {
  const auto* p = t.data_as<uint16_t>();
  return std::vector<uint16_t>(p, p + t.num_elements());
}

TEST(CastHalfTest, FloatToFloat16RoundsHalfToEvenAndSaturatesToInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {
      1.0f,
      -2.5f,
      65504.0f,
      65519.0f,
      65520.0f,
      inf,
      -inf,
      1.0f + 1.0f / 2048,       // halfway between 1 and the next half: even (1.0)
      1.0f + 3.0f / 2048,       // halfway above an odd mantissa: rounds up
      5.960464477539063e-08f,   // 2^-24, the smallest subnormal half
      2.9802322387695312e-08f,  // 2^-25: halfway to zero, even is zero
      0.0f,
      -0.0f};
  const Tensor half = CastTo(Tensor::FromVector<float>({13}, values), DType::kFloat16);
  EXPECT_EQ(Bits(half),
            (std::vector<uint16_t>{0x3c00, 0xc100, 0x7bff, 0x7bff, 0x7c00, 0x7c00, 0xfc00, 0x3c00,
                                   0x3c02, 0x0001, 0x0000, 0x0000, 0x8000}));
  const std::vector<float> back = CastTo(half, DType::kFloat32).ToVector<float>();
  EXPECT_EQ(back[1], -2.5f);
  EXPECT_EQ(back[2], 65504.0f);
  EXPECT_EQ(back[4], inf);
  EXPECT_EQ(back[9], 5.960464477539063e-08f);
}

TEST(CastHalfTest, NaNStaysNaNThroughEverySixteenBitType) {
  const Tensor nan = Tensor::FromVector<float>({1}, {std::numeric_limits<float>::quiet_NaN()});
  for (DType narrow : {DType::kFloat16, DType::kBFloat16}) {
    const std::vector<float> back = CastTo(CastTo(nan, narrow), DType::kFloat32).ToVector<float>();
    EXPECT_TRUE(std::isnan(back[0])) << DTypeName(narrow);
  }
}

TEST(CastHalfTest, BFloat16KeepsTheTopSixteenBitsRounded) {
  // 1 + 2^-8 is halfway between bfloat16 1.0 and 1.0078125: even (1.0); 1 + 3 * 2^-8 rounds up.
  const Tensor b =
      CastTo(Tensor::FromVector<float>({3}, {1.0f + 1.0f / 256, 1.0f + 3.0f / 256, -3.0f}),
             DType::kBFloat16);
  EXPECT_EQ(Bits(b), (std::vector<uint16_t>{0x3f80, 0x3f82, 0xc040}));
}

TEST(CastHalfTest, IntegersAndDoublesConvertThroughFloat) {
  const Tensor half = CastTo(Tensor::FromVector<int64_t>({3}, {-3, 2049, 100000}), DType::kFloat16);
  // 2049 is halfway between the halves 2048 and 2050: even (2048); 100000 is beyond 65504.
  EXPECT_EQ(CastTo(half, DType::kFloat64).ToVector<double>(),
            (std::vector<double>{-3, 2048, std::numeric_limits<double>::infinity()}));
  EXPECT_EQ(
      CastTo(CastTo(Tensor::FromVector<double>({2}, {0.5, -7.25}), DType::kFloat16), DType::kInt32)
          .ToVector<int32_t>(),
      (std::vector<int32_t>{0, -7}));
}

}  // namespace
}  // namespace collage
