#include "util/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace collage {
namespace {

// A byte string from a literal that may hold NULs.
template <size_t N>
std::string Bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

// Written by numpy 1.24: np.save(f, np.arange(6, dtype='<f4').reshape(2, 3)).
const std::string kNumpyF4_2x3 = Bytes(
    "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape':"
    " (2, 3), }                                                          \n\x00"
    "\x00\x00\x00\x00\x00\x80?\x00\x00\x00@\x00\x00@@\x00\x00\x80@\x00\x00\xa0"
    "@");

// np.lib.format.write_array(f, np.array([-1, 2, 3], dtype='<i8'), version=(2, 0)).
const std::string kNumpyI8V2 = Bytes(
    "\x93NUMPY\x02\x00t\x00\x00\x00{'descr': '<i8', 'fortran_order': False, "
    "'shape': (3,), }                                                       "
    "   \n\xff\xff\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x00\x00\x00\x03"
    "\x00\x00\x00\x00\x00\x00\x00");

// np.lib.format.write_array(f, np.array([1, 65535], dtype='<u2'), version=(3, 0)).
const std::string kNumpyU2V3 = Bytes(
    "\x93NUMPY\x03\x00t\x00\x00\x00{'descr': '<u2', 'fortran_order': False, "
    "'shape': (2,), }                                                       "
    "   \n\x01\x00\xff\xff");

// np.save(f, np.asfortranarray(np.arange(6, dtype='<f4').reshape(2, 3))).
const std::string kNumpyFortran = Bytes(
    "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': True, 'shape': "
    "(2, 3), }                                                           \n\x00"
    "\x00\x00\x00\x00\x00@@\x00\x00\x80?\x00\x00\x80@\x00\x00\x00@\x00\x00\xa0"
    "@");

// np.save(f, np.array([1.0], dtype='>f4')).
const std::string kNumpyBigEndian = Bytes(
    "\x93NUMPY\x01\x00v\x00{'descr': '>f4', 'fortran_order': False, 'shape':"
    " (1,), }                                                            \n?"
    "\x80\x00\x00");

// A hand-built v1.0 file with the given header text (no alignment padding: readers must not
// depend on it) followed by `data`.
std::string NpyWithHeader(const std::string& header, const std::string& data = "") {
  std::string out = Bytes("\x93NUMPY\x01\x00");
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

TEST(NpyTest, ReadsNumpyFloat32) {
  StatusOr<Tensor> t = NpyFromBytes(kNumpyF4_2x3, "a.npy");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->dtype(), DType::kFloat32);
  EXPECT_EQ(t->shape(), (Shape{2, 3}));
  EXPECT_EQ(t->ToVector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(NpyTest, WritesTheBytesNumpyWrites) {
  Tensor t = Tensor::FromVector<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  StatusOr<std::string> bytes = NpyToBytes(t);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, kNumpyF4_2x3);
}

TEST(NpyTest, ReadsVersion2And3) {
  StatusOr<Tensor> v2 = NpyFromBytes(kNumpyI8V2, "v2.npy");
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(v2->dtype(), DType::kInt64);
  EXPECT_EQ(v2->ToVector<int64_t>(), (std::vector<int64_t>{-1, 2, 3}));
  StatusOr<Tensor> v3 = NpyFromBytes(kNumpyU2V3, "v3.npy");
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ(v3->dtype(), DType::kUInt16);
  EXPECT_EQ(v3->ToVector<uint16_t>(), (std::vector<uint16_t>{1, 65535}));
}

template <typename T>
void ExpectRoundTrip(const std::vector<T>& values, const char* descr) {
  Tensor t = Tensor::FromVector<T>({static_cast<int64_t>(values.size()), 1}, values);
  StatusOr<std::string> bytes = NpyToBytes(t);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_NE(bytes->find(std::string("'descr': '") + descr + "'"), std::string::npos) << descr;
  // numpy's alignment: the data starts at a multiple of 64.
  EXPECT_EQ((bytes->size() - t.nbytes()) % 64, 0u) << descr;
  StatusOr<Tensor> back = NpyFromBytes(*bytes, descr);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->dtype(), DTypeOf<T>()) << descr;
  EXPECT_EQ(back->shape(), t.shape()) << descr;
  ASSERT_EQ(back->nbytes(), t.nbytes()) << descr;
  EXPECT_EQ(std::memcmp(back->data(), t.data(), t.nbytes()), 0) << descr;
}

TEST(NpyTest, RoundTripsEveryDType) {
  ExpectRoundTrip<float>({1.5f, -2.25f, 1e30f}, "<f4");
  ExpectRoundTrip<double>({1.5, -2.25, 1e300}, "<f8");
  ExpectRoundTrip<int8_t>({-128, 0, 127}, "|i1");
  ExpectRoundTrip<int16_t>({-32768, 1, 32767}, "<i2");
  ExpectRoundTrip<int32_t>({INT32_MIN, 7, INT32_MAX}, "<i4");
  ExpectRoundTrip<int64_t>({INT64_MIN, -1, INT64_MAX}, "<i8");
  ExpectRoundTrip<uint8_t>({0, 1, 255}, "|u1");
  ExpectRoundTrip<uint16_t>({0, 1, 65535}, "<u2");
  ExpectRoundTrip<uint32_t>({0, 1, UINT32_MAX}, "<u4");
  ExpectRoundTrip<uint64_t>({0, 1, UINT64_MAX}, "<u8");
  ExpectRoundTrip<bool>({true, false, true}, "|b1");
}

TEST(NpyTest, RoundTripsFloat16AsRawBits) {
  Tensor t(DType::kFloat16, {2});
  const uint16_t bits[2] = {0x3C00, 0xC000};  // 1.0, -2.0
  std::memcpy(t.data(), bits, sizeof(bits));
  StatusOr<std::string> bytes = NpyToBytes(t);
  ASSERT_TRUE(bytes.ok());
  EXPECT_NE(bytes->find("'<f2'"), std::string::npos);
  StatusOr<Tensor> back = NpyFromBytes(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->dtype(), DType::kFloat16);
  EXPECT_EQ(std::memcmp(back->data(), bits, sizeof(bits)), 0);
}

TEST(NpyTest, Scalar) {
  // np.save(f, np.float64(1.5)): shape ().
  const std::string numpy_scalar = Bytes(
      "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (), }"
      "                                                              \n\x00\x00\x00"
      "\x00\x00\x00\xf8?");
  StatusOr<Tensor> t = NpyFromBytes(numpy_scalar);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->rank(), 0);
  EXPECT_EQ(t->ToVector<double>(), (std::vector<double>{1.5}));
  StatusOr<std::string> bytes = NpyToBytes(Tensor::Scalar<double>(1.5));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, numpy_scalar);
}

TEST(NpyTest, ZeroSize) {
  // np.save(f, np.zeros((0, 3), np.int8)).
  const std::string numpy_empty = Bytes(
      "\x93NUMPY\x01\x00v\x00{'descr': '|i1', 'fortran_order': False, 'shape': (0, 3), }"
      "                                                          \n");
  StatusOr<Tensor> t = NpyFromBytes(numpy_empty);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->dtype(), DType::kInt8);
  EXPECT_EQ(t->shape(), (Shape{0, 3}));
  EXPECT_EQ(t->num_elements(), 0);
  StatusOr<std::string> bytes = NpyToBytes(Tensor(DType::kInt8, {0, 3}));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, numpy_empty);
}

TEST(NpyTest, HeaderKeysInAnyOrderAndOldStyleLongs) {
  StatusOr<Tensor> t = NpyFromBytes(
      NpyWithHeader("{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<i2\"}\n",
                    Bytes("\x05\x00\xff\xff")));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->ToVector<int16_t>(), (std::vector<int16_t>{5, -1}));
}

TEST(NpyTest, FortranOrderIsUnsupportedWhereItDiffersFromC) {
  StatusOr<Tensor> t = NpyFromBytes(kNumpyFortran, "f.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(t.status().message().find("Fortran"), std::string::npos);
  EXPECT_NE(t.status().message().find("f.npy"), std::string::npos);
  // A 1-D (or 1x3) array is laid out the same either way.
  StatusOr<Tensor> row = NpyFromBytes(
      NpyWithHeader("{'descr': '|u1', 'fortran_order': True, 'shape': (1, 3), }\n", "abc"));
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  EXPECT_EQ(row->ToVector<uint8_t>(), (std::vector<uint8_t>{'a', 'b', 'c'}));
}

TEST(NpyTest, BigEndianIsUnsupported) {
  StatusOr<Tensor> t = NpyFromBytes(kNumpyBigEndian, "be.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(t.status().message().find("big-endian"), std::string::npos);
}

TEST(NpyTest, OtherDTypesAreUnsupported) {
  for (const char* header :
       {"{'descr': '<U5', 'fortran_order': False, 'shape': (1,), }",
        "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
        "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
        "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }"}) {
    StatusOr<Tensor> t = NpyFromBytes(NpyWithHeader(header, std::string(8, '\0')));
    ASSERT_FALSE(t.ok()) << header;
    EXPECT_EQ(t.status().code(), StatusCode::kUnsupported) << t.status().ToString();
  }
  Tensor bf16(DType::kBFloat16, {1});
  EXPECT_EQ(NpyToBytes(bf16).status().code(), StatusCode::kUnsupported);
}

TEST(NpyTest, CorruptHeadersAreInvalidArgumentNamingTheFile) {
  const std::string good_data(24, '\0');
  const std::vector<std::string> corrupt = {
      Bytes("\x93NUMPX\x01\x00\x00\x00"),          // bad magic
      Bytes("\x93NUMPY\x01"),                      // cut inside the prefix
      Bytes("\x93NUMPY\x01\x00\xff\x00{'descr'"),  // header longer than the file
      NpyWithHeader("{'descr': '<f4', 'shape': (2, 3), }", good_data),  // missing key
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", good_data),
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", good_data),
      NpyWithHeader("{'descr': '<f4', 'fortran_order': Nope, 'shape': (2, 3), }", good_data),
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (6), }", good_data),
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } junk", good_data),
      NpyWithHeader("{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)", good_data),
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                    "(99999999999999999999, 3), }",
                    good_data),
      NpyWithHeader("{'descr': '<f4', 'fortran_order': False, "
                    "'shape': (4294967296, 4294967296), }",
                    good_data),
      // Empty, but the other dims overflow int64 together (found by the fuzzer).
      NpyWithHeader("{'descr': '|u1', 'fortran_order': False, "
                    "'shape': (9223372036854775807, 2, 0), }"),
  };
  for (const std::string& bytes : corrupt) {
    StatusOr<Tensor> t = NpyFromBytes(bytes, "bad.npy");
    ASSERT_FALSE(t.ok()) << bytes;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << t.status().ToString();
    EXPECT_NE(t.status().message().find("bad.npy"), std::string::npos) << t.status().ToString();
  }
}

TEST(NpyTest, HeaderErrorsStayOnOneLine) {
  StatusOr<Tensor> t =
      NpyFromBytes(NpyWithHeader("{'descr': '<f4', 'fortran_order': Nope, 'shape': (2,), }\x01\n",
                                 std::string(8, '\0')),
                   "bad.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message().find('\n'), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("\\x01"), std::string::npos) << t.status().message();
}

TEST(NpyTest, UnknownVersionIsUnsupported) {
  std::string bytes = kNumpyF4_2x3;
  bytes[6] = 4;
  EXPECT_EQ(NpyFromBytes(bytes).status().code(), StatusCode::kUnsupported);
}

TEST(NpyTest, TruncatedOrOverlongDataIsInvalidArgument) {
  StatusOr<Tensor> cut = NpyFromBytes(kNumpyF4_2x3.substr(0, kNumpyF4_2x3.size() - 1), "cut.npy");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(cut.status().message().find("cut.npy"), std::string::npos);
  EXPECT_NE(cut.status().message().find("truncated"), std::string::npos);
  StatusOr<Tensor> longer = NpyFromBytes(kNumpyF4_2x3 + "x", "long.npy");
  EXPECT_EQ(longer.status().code(), StatusCode::kInvalidArgument);
}

TEST(NpyTest, BoolBytesMustBeZeroOrOne) {
  StatusOr<Tensor> t = NpyFromBytes(
      NpyWithHeader("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", Bytes("\x01\x02")),
      "b.npy");
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
}

TEST(NpyTest, HugeHeaderUsesVersion2) {
  // 25000 dims of 1: the header no longer fits version 1.0's 16-bit length.
  Tensor t = Tensor::FromVector<float>(Shape(25000, 1), {4.5f});
  StatusOr<std::string> bytes = NpyToBytes(t);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ((*bytes)[6], 2);
  EXPECT_EQ((bytes->size() - 4) % 64, 0u);
  StatusOr<Tensor> back = NpyFromBytes(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->rank(), 25000);
  EXPECT_EQ(back->ToVector<float>(), (std::vector<float>{4.5f}));
}

TEST(NpyTest, FilesRoundTrip) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("collage_npy_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "x.npy").string();
  Tensor t = Tensor::FromVector<int32_t>({3}, {1, -2, 3});
  ASSERT_TRUE(WriteNpyFile(t, path).ok());
  StatusOr<Tensor> back = ReadNpyFile(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToVector<int32_t>(), (std::vector<int32_t>{1, -2, 3}));

  // A truncated file names its path.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 2);
  StatusOr<Tensor> cut = ReadNpyFile(path);
  EXPECT_EQ(cut.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(cut.status().message().find(path), std::string::npos);

  EXPECT_EQ(ReadNpyFile((dir / "missing.npy").string()).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(WriteNpyFile(t, (dir / "no_such_dir" / "x.npy").string()).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collage
