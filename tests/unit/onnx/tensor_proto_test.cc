#include "onnx/tensor_proto.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <type_traits>

#include "onnx/onnx_pb.h"
#include "onnx_test_util.h"

namespace collage {
namespace {

using testing::TempDir;
using testing::WriteBytes;

template <typename T>
void ExpectRoundTrip(const std::vector<T>& values) {
  Tensor t = Tensor::FromVector<T>({static_cast<int64_t>(values.size())}, values);
  onnx::TensorProto proto;
  TensorToProto(t, "t", proto);
  EXPECT_EQ(proto.name(), "t");
  EXPECT_EQ(proto.data_type(), static_cast<int32_t>(DTypeOf<T>()));
  EXPECT_TRUE(proto.has_raw_data());
  auto back = TensorFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->dtype(), DTypeOf<T>());
  EXPECT_EQ(back->shape(), t.shape());
  EXPECT_EQ(std::memcmp(back->data(), t.data(), t.nbytes()), 0);
  if constexpr (!std::is_same_v<T, bool>) {
    EXPECT_EQ(back->ToVector<T>(), values);
  }
}

TEST(TensorProto, RoundTripEveryDType) {
  ExpectRoundTrip<float>({1.5f, -2.25f, 3e30f});
  ExpectRoundTrip<double>({1.5, -2.25, 1e300});
  ExpectRoundTrip<int64_t>({INT64_MIN, -1, INT64_MAX});
  ExpectRoundTrip<int32_t>({INT32_MIN, 7, INT32_MAX});
  ExpectRoundTrip<int16_t>({-32768, 5, 32767});
  ExpectRoundTrip<int8_t>({-128, 0, 127});
  ExpectRoundTrip<uint8_t>({0, 200, 255});
  ExpectRoundTrip<uint16_t>({0, 40000, 65535});
  ExpectRoundTrip<uint32_t>({0, 3000000000u, 4294967295u});
  ExpectRoundTrip<uint64_t>({0, 1ull << 63, ~0ull});
  ExpectRoundTrip<bool>({true, false, true});
}

TEST(TensorProto, RoundTripShapesScalarAndEmpty) {
  Tensor scalar = Tensor::Scalar<float>(4.0f);
  onnx::TensorProto proto;
  TensorToProto(scalar, "s", proto);
  auto back = TensorFromProto(proto);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->shape(), Shape{});
  EXPECT_EQ(back->ToVector<float>(), std::vector<float>{4.0f});

  Tensor empty(DType::kInt64, {2, 0, 3});
  TensorToProto(empty, "e", proto);
  back = TensorFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->shape(), (Shape{2, 0, 3}));
}

TEST(TensorProto, Float16KeepsBits) {
  Tensor t(DType::kFloat16, {2});
  uint16_t bits[2] = {0x3c00, 0xc000};  // 1.0, -2.0
  std::memcpy(t.data(), bits, sizeof(bits));
  onnx::TensorProto proto;
  TensorToProto(t, "h", proto);
  auto back = TensorFromProto(proto);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->dtype(), DType::kFloat16);
  EXPECT_EQ(std::memcmp(back->data(), bits, sizeof(bits)), 0);
  // The typed form stores the bits in int32_data.
  onnx::TensorProto typed;
  typed.set_data_type(onnx::TensorProto::FLOAT16);
  typed.add_dims(2);
  typed.add_int32_data(0x3c00);
  typed.add_int32_data(0xc000);
  back = TensorFromProto(typed);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::memcmp(back->data(), bits, sizeof(bits)), 0);
}

TEST(TensorProto, TypedFields) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(2);
  p.add_dims(2);
  for (float v : {1.f, 2.f, 3.f, 4.f}) p.add_float_data(v);
  auto t = TensorFromProto(p);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->shape(), (Shape{2, 2}));
  EXPECT_EQ(t->ToVector<float>(), (std::vector<float>{1, 2, 3, 4}));

  onnx::TensorProto i8;
  i8.set_data_type(onnx::TensorProto::INT8);
  i8.add_dims(3);
  for (int v : {-5, 0, 100}) i8.add_int32_data(v);
  t = TensorFromProto(i8);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ToVector<int64_t>(), (std::vector<int64_t>{-5, 0, 100}));

  onnx::TensorProto u32;
  u32.set_data_type(onnx::TensorProto::UINT32);
  u32.add_dims(1);
  u32.add_uint64_data(4000000000u);
  t = TensorFromProto(u32);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ToVector<uint64_t>(), (std::vector<uint64_t>{4000000000u}));

  onnx::TensorProto b;
  b.set_data_type(onnx::TensorProto::BOOL);
  b.add_dims(3);
  for (int v : {0, 1, 7}) b.add_int32_data(v);
  t = TensorFromProto(b);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ToVector<int>(), (std::vector<int>{0, 1, 1}));

  onnx::TensorProto d;
  d.set_data_type(onnx::TensorProto::DOUBLE);
  d.add_double_data(2.5);  // scalar
  t = TensorFromProto(d);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->shape(), Shape{});
  EXPECT_EQ(t->ToVector<double>(), std::vector<double>{2.5});
}

TEST(TensorProto, RawBoolsAreNormalized) {
  onnx::TensorProto p;
  p.set_name("b");
  p.set_data_type(onnx::TensorProto::BOOL);
  p.add_dims(3);
  p.set_raw_data(std::string("\x00\x01\x05", 3));
  auto t = TensorFromProto(p);
  ASSERT_TRUE(t.ok());
  const auto* bytes = static_cast<const uint8_t*>(t->data());
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[1], 1);
  EXPECT_EQ(bytes[2], 1);
}

TEST(TensorProto, Errors) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(4);
  p.set_raw_data(std::string(12, '\0'));  // 3 floats for 4
  auto t = TensorFromProto(p);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(t.status().message().find("'w'"), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("raw_data"), std::string::npos);

  // Lying dims with no data: an error, not a huge allocation.
  onnx::TensorProto huge;
  huge.set_name("huge");
  huge.set_data_type(onnx::TensorProto::FLOAT);
  huge.add_dims(1ll << 40);
  huge.add_float_data(1.0f);
  t = TensorFromProto(huge);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidModel);

  onnx::TensorProto overflow;
  overflow.set_data_type(onnx::TensorProto::FLOAT);
  overflow.add_dims(1ll << 40);
  overflow.add_dims(1ll << 40);
  t = TensorFromProto(overflow);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("invalid dims"), std::string::npos) << t.status().message();

  onnx::TensorProto negative;
  negative.set_data_type(onnx::TensorProto::FLOAT);
  negative.add_dims(-1);
  EXPECT_EQ(TensorFromProto(negative).status().code(), StatusCode::kInvalidModel);

  onnx::TensorProto no_data;
  no_data.set_name("nd");
  no_data.set_data_type(onnx::TensorProto::INT64);
  no_data.add_dims(2);
  t = TensorFromProto(no_data);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("no data"), std::string::npos) << t.status().message();

  onnx::TensorProto wrong_field;  // int64 values in the float field
  wrong_field.set_data_type(onnx::TensorProto::INT64);
  wrong_field.add_dims(1);
  wrong_field.add_float_data(1.0f);
  EXPECT_EQ(TensorFromProto(wrong_field).status().code(), StatusCode::kInvalidModel);

  onnx::TensorProto str;
  str.set_name("s");
  str.set_data_type(onnx::TensorProto::STRING);
  str.add_dims(1);
  str.add_string_data("hello");
  t = TensorFromProto(str);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(t.status().message().find("string"), std::string::npos);

  onnx::TensorProto complex;
  complex.set_data_type(onnx::TensorProto::COMPLEX64);
  EXPECT_EQ(TensorFromProto(complex).status().code(), StatusCode::kUnsupported);

  onnx::TensorProto undefined;
  EXPECT_EQ(TensorFromProto(undefined).status().code(), StatusCode::kInvalidModel);

  onnx::TensorProto unknown;
  unknown.set_data_type(99);
  EXPECT_EQ(TensorFromProto(unknown).status().code(), StatusCode::kInvalidModel);
}

void SetExternal(onnx::TensorProto& p, const std::string& location, int64_t offset,
                 int64_t length) {
  p.set_data_location(onnx::TensorProto::EXTERNAL);
  p.clear_external_data();
  auto* e = p.add_external_data();
  e->set_key("location");
  e->set_value(location);
  if (offset >= 0) {
    e = p.add_external_data();
    e->set_key("offset");
    e->set_value(std::to_string(offset));
  }
  if (length >= 0) {
    e = p.add_external_data();
    e->set_key("length");
    e->set_value(std::to_string(length));
  }
}

TEST(TensorProto, ExternalData) {
  TempDir dir;
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  std::string blob(8, 'x');  // 8 bytes of padding before the data
  blob.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  WriteBytes(dir.File("weights.bin"), blob);

  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(2);
  p.add_dims(3);
  SetExternal(p, "weights.bin", 8, 24);
  auto t = TensorFromProto(p, dir.path().string());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->ToVector<float>(), values);

  // Without length: the shape decides.
  SetExternal(p, "weights.bin", 8, -1);
  t = TensorFromProto(p, dir.path().string());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->ToVector<float>(), values);

  // Length disagreeing with the shape.
  SetExternal(p, "weights.bin", 8, 20);
  EXPECT_EQ(TensorFromProto(p, dir.path().string()).status().code(), StatusCode::kInvalidModel);

  // The file is too short for the range: refused before allocating.
  SetExternal(p, "weights.bin", 16, -1);
  t = TensorFromProto(p, dir.path().string());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(t.status().message().find("bytes are needed"), std::string::npos)
      << t.status().message();

  // Missing file.
  SetExternal(p, "nope.bin", -1, -1);
  t = TensorFromProto(p, dir.path().string());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("nope.bin"), std::string::npos);

  // Paths leaving the model directory are refused.
  SetExternal(p, "../weights.bin", -1, -1);
  t = TensorFromProto(p, dir.path().string());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("leaves the model's directory"), std::string::npos);
  SetExternal(p, "/etc/passwd", -1, -1);
  t = TensorFromProto(p, dir.path().string());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("absolute"), std::string::npos);

  // A symlink inside the model's folder that points out of it (an archive can carry one) is
  // refused: the model would otherwise read any file on the machine into a tensor.
  WriteBytes(dir.File("outside.txt"), std::string(64, 's'));
  std::filesystem::create_directories(dir.File("model"));
  std::filesystem::create_symlink(dir.File("outside.txt"), dir.File("model/w.bin"));
  SetExternal(p, "w.bin", -1, -1);
  t = TensorFromProto(p, dir.File("model"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("symlink"), std::string::npos) << t.status().message();
  std::filesystem::create_directory_symlink(dir.path(), dir.File("model/up"));
  SetExternal(p, "up/weights.bin", 8, -1);
  EXPECT_FALSE(TensorFromProto(p, dir.File("model")).ok());

  // A FIFO would block the read forever; it is refused at once.
  ASSERT_EQ(::mkfifo(dir.File("model/fifo.bin").c_str(), 0600), 0);
  SetExternal(p, "fifo.bin", -1, -1);
  t = TensorFromProto(p, dir.File("model"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("FIFO"), std::string::npos) << t.status().message();

  // Bad offset text.
  SetExternal(p, "weights.bin", -1, -1);
  auto* e = p.add_external_data();
  e->set_key("offset");
  e->set_value("12abc");
  EXPECT_EQ(TensorFromProto(p, dir.path().string()).status().code(), StatusCode::kInvalidModel);
}

TEST(TensorProto, Files) {
  TempDir dir;
  Tensor t = Tensor::FromVector<int32_t>({2, 2}, {1, -2, 3, -4});
  ASSERT_TRUE(WriteTensorProtoFile(t, "x", dir.File("x.pb")).ok());
  std::string name;
  auto back = ReadTensorProtoFile(dir.File("x.pb"), &name);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(name, "x");
  EXPECT_EQ(back->dtype(), DType::kInt32);
  EXPECT_EQ(back->shape(), (Shape{2, 2}));
  EXPECT_EQ(back->ToVector<int32_t>(), (std::vector<int32_t>{1, -2, 3, -4}));

  auto missing = ReadTensorProtoFile(dir.File("missing.pb"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("missing.pb"), std::string::npos);

  auto directory = ReadTensorProtoFile(dir.path().string());
  EXPECT_EQ(directory.status().code(), StatusCode::kIoError);

  WriteBytes(dir.File("junk.pb"), std::string("\x0f", 1));
  auto junk = ReadTensorProtoFile(dir.File("junk.pb"));
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.status().code(), StatusCode::kInvalidArgument);

  EXPECT_EQ(WriteTensorProtoFile(t, "x", dir.File("no/such/dir/x.pb")).code(),
            StatusCode::kIoError);
}

}  // namespace
}  // namespace collage
