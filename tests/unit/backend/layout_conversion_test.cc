// Layout conversions between plain and channels-last, and the conversions an executable
// inserts between kernels that disagree on layouts.
#include "runtime/layout_conversion.h"

#include <gtest/gtest.h>

#include "collage/available_backends.h"
#include "collage/sdk/backend.h"

namespace collage {
namespace {

Tensor Iota(Shape shape) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data_as<float>()[i] = static_cast<float>(i);
  return t;
}

void Convert(const Kernel& kernel, const void* in, void* out) {
  std::vector<char> workspace(kernel.workspace_bytes() + 64);
  const void* inputs[] = {in};
  void* outputs[] = {out};
  ASSERT_TRUE(kernel.Run({inputs, outputs, workspace.data()}).ok());
}

TEST(LayoutConversionTest, ChannelsLastPlacesChannelsInnermost) {
  for (Shape shape : {Shape{2, 3, 4, 5}, Shape{1, 7, 9}, Shape{2, 4, 3, 2, 5}, Shape{1, 33, 40, 1}}) {
    TensorType type{DType::kFloat32, shape};
    Tensor plain = Iota(shape);
    auto to = CompileLayoutConversion(type, Layout::Plain(), Layout::ChannelsLast(),
                                      GlobalBackendRegistry());
    auto back = CompileLayoutConversion(type, Layout::ChannelsLast(), Layout::Plain(),
                                        GlobalBackendRegistry());
    ASSERT_TRUE(to.ok() && back.ok()) << to.status().ToString();
    Tensor nhwc(DType::kFloat32, shape);
    Convert(**to, plain.data(), nhwc.data());
    const int64_t n = shape[0], c = shape[1];
    const int64_t spatial = plain.num_elements() / (n * c);
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ch = 0; ch < c; ++ch) {
        for (int64_t s = 0; s < spatial; ++s) {
          ASSERT_EQ(nhwc.data_as<float>()[(b * spatial + s) * c + ch],
                    plain.data_as<float>()[(b * c + ch) * spatial + s]);
        }
      }
    }
    Tensor round_trip(DType::kFloat32, shape);
    Convert(**back, nhwc.data(), round_trip.data());
    EXPECT_EQ(round_trip.ToVector<float>(), plain.ToVector<float>()) << ShapeToString(shape);
  }
}

TEST(LayoutConversionTest, EveryElementSize) {
  // 1-, 2-, 4- and 8-byte elements, each copied whole: element i of the plain tensor holds
  // the bytes of i, and must land at its channels-last position intact.
  const Shape shape = {2, 5, 3, 7};
  const int64_t n = 2, c = 5, spatial = 21;
  for (DType dtype : {DType::kUInt8, DType::kFloat16, DType::kInt32, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const size_t size = DTypeSize(dtype);
    TensorType type{dtype, shape};
    Tensor plain(dtype, shape);
    auto* bytes = static_cast<uint8_t*>(plain.data());
    for (int64_t i = 0; i < plain.num_elements(); ++i) {
      for (size_t k = 0; k < size; ++k) bytes[i * size + k] = static_cast<uint8_t>(i * 7 + k);
    }
    auto to = CompileLayoutConversion(type, Layout::Plain(), Layout::ChannelsLast(),
                                      GlobalBackendRegistry());
    ASSERT_TRUE(to.ok()) << to.status().ToString();
    Tensor nhwc(dtype, shape);
    Convert(**to, plain.data(), nhwc.data());
    const auto* out = static_cast<const uint8_t*>(nhwc.data());
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ch = 0; ch < c; ++ch) {
        for (int64_t s = 0; s < spatial; ++s) {
          const int64_t from = (b * c + ch) * spatial + s;
          const int64_t to_index = (b * spatial + s) * c + ch;
          for (size_t k = 0; k < size; ++k) {
            ASSERT_EQ(out[to_index * size + k], bytes[from * size + k]);
          }
        }
      }
    }
  }
}

TEST(LayoutConversionTest, RefusesWhatDoesNotApply) {
  TensorType matrix{DType::kFloat32, {4, 5}};
  auto status = CompileLayoutConversion(matrix, Layout::Plain(), Layout::ChannelsLast(),
                                        GlobalBackendRegistry());
  EXPECT_EQ(status.status().code(), StatusCode::kInvalidArgument);
  TensorType image{DType::kFloat32, {1, 2, 3, 4}};
  EXPECT_FALSE(
      CompileLayoutConversion(image, Layout::Plain(), Layout::Plain(), GlobalBackendRegistry())
          .ok());
  auto unknown = CompileLayoutConversion(image, Layout::Opaque("nobody", "fmt", 96),
                                         Layout::Plain(), GlobalBackendRegistry());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("nobody"), std::string::npos);
}

}  // namespace
}  // namespace collage
