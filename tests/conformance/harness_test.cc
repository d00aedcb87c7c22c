// Tests of the conformance harness itself: the comparison rule, the grouping of skip reasons,
// and RunCase on small case folders written here (a harness that cannot fail proves nothing).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "conformance_case.h"
#include "tensor_compare.h"
#include "unsupported_reason.h"

namespace collage::conformance {
namespace {
namespace fs = std::filesystem;

Tolerance Tol(double rtol, double atol, bool rel_to_max = false) {
  Tolerance t;
  t.rtol = rtol;
  t.atol = atol;
  t.rel_to_max = rel_to_max;
  return t;
}

TEST(TensorCompareTest, FloatsWithinToleranceMatch) {
  Tensor e = Tensor::FromVector<float>({3}, {1.0f, -100.0f, 0.0f});
  Tensor a = Tensor::FromVector<float>({3}, {1.0005f, -100.09f, 0.000009f});
  EXPECT_TRUE(CompareTensors(a, e, Tol(1e-3, 1e-5)).ok);
}

TEST(TensorCompareTest, FloatMismatchNamesTheFirstElement) {
  Tensor e = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4});
  Tensor a = Tensor::FromVector<float>({2, 2}, {1, 2, 3.1f, 5});
  CompareResult r = CompareTensors(a, e, Tol(1e-3, 1e-5));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("[1, 0]"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("2 of 4"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("worst at element [1, 1]"), std::string::npos) << r.message;
}

TEST(TensorCompareTest, NanMatchesOnlyNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Tensor e = Tensor::FromVector<float>({3}, {nan, inf, -inf});
  EXPECT_TRUE(CompareTensors(Tensor::FromVector<float>({3}, {nan, inf, -inf}), e, Tol(1e-3, 1e-5)).ok);
  EXPECT_FALSE(CompareTensors(Tensor::FromVector<float>({3}, {0, inf, -inf}), e, Tol(1e-3, 1e-5)).ok);
  EXPECT_FALSE(CompareTensors(Tensor::FromVector<float>({3}, {nan, -inf, -inf}), e, Tol(1e-3, 1e-5)).ok);
  EXPECT_FALSE(CompareTensors(Tensor::FromVector<float>({3}, {nan, 1e30f, -inf}), e, Tol(1e-3, 1e-5)).ok);
  // A NaN where a number is expected never passes, whatever the tolerance.
  EXPECT_FALSE(CompareTensors(Tensor::FromVector<float>({1}, {nan}), Tensor::FromVector<float>({1}, {1}),
                              Tol(1e9, 1e9)).ok);
}

TEST(TensorCompareTest, DTypeAndShapeMustMatch) {
  Tensor e = Tensor::FromVector<float>({2}, {1, 2});
  CompareResult dtype = CompareTensors(Tensor::FromVector<double>({2}, {1, 2}), e, Tol(1, 1));
  EXPECT_FALSE(dtype.ok);
  EXPECT_NE(dtype.message.find("float64"), std::string::npos);
  CompareResult shape = CompareTensors(Tensor::FromVector<float>({1, 2}, {1, 2}), e, Tol(1, 1));
  EXPECT_FALSE(shape.ok);
  EXPECT_NE(shape.message.find("1x2"), std::string::npos);
  EXPECT_FALSE(CompareTensors(Tensor(), e, Tol(1, 1)).ok);
}

TEST(TensorCompareTest, IntegersAndBoolsAreExact) {
  Tensor e = Tensor::FromVector<int64_t>({3}, {1, -2, 3});
  EXPECT_TRUE(CompareTensors(Tensor::FromVector<int64_t>({3}, {1, -2, 3}), e, Tol(1, 1)).ok);
  CompareResult r = CompareTensors(Tensor::FromVector<int64_t>({3}, {1, -3, 3}), e, Tol(1, 1));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("got -3, expected -2"), std::string::npos) << r.message;
  Tensor eb = Tensor::FromVector<bool>({2}, {true, false});
  EXPECT_TRUE(CompareTensors(Tensor::FromVector<bool>({2}, {true, false}), eb, Tol(1, 1)).ok);
  EXPECT_FALSE(CompareTensors(Tensor::FromVector<bool>({2}, {true, true}), eb, Tol(1, 1)).ok);
  EXPECT_TRUE(CompareTensors(Tensor(DType::kUInt8, {0, 4}), Tensor(DType::kUInt8, {0, 4}), Tol(0, 0)).ok);
}

TEST(TensorCompareTest, RelativeToMaxUsesTheOutputsLargestMagnitude) {
  Tensor e = Tensor::FromVector<float>({2}, {100, 0.001f});
  Tensor a = Tensor::FromVector<float>({2}, {100, 0.05f});
  EXPECT_FALSE(CompareTensors(a, e, Tol(1e-3, 0)).ok);
  EXPECT_TRUE(CompareTensors(a, e, Tol(1e-3, 0, true)).ok);  // 0.049 <= 1e-3 * 100
  Tensor far = Tensor::FromVector<float>({2}, {100, 0.2f});
  EXPECT_FALSE(CompareTensors(far, e, Tol(1e-3, 0, true)).ok);
}

TEST(TensorCompareTest, Float16IsComparedByValue) {
  Tensor e(DType::kFloat16, {2});
  Tensor a(DType::kFloat16, {2});
  const uint16_t expected[2] = {0x3C00, 0x4000};  // 1, 2
  const uint16_t close[2] = {0x3C00, 0x4001};     // 1, 2.00195
  std::memcpy(e.data(), expected, sizeof(expected));
  std::memcpy(a.data(), close, sizeof(close));
  EXPECT_TRUE(CompareTensors(a, e, Tol(1e-3, 0)).ok);
  CompareResult r = CompareTensors(a, e, Tol(1e-4, 0));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("expected 2"), std::string::npos) << r.message;
}

TEST(UnsupportedReasonTest, GroupsAcrossCases) {
  EXPECT_EQ(UnsupportedReasonKeys("/tmp/a/test_x/model.onnx: op Foo (node 'n1') is not supported"),
            (std::vector<std::string>{"op Foo (node '...') is not supported"}));
  EXPECT_EQ(UnsupportedReasonKeys("/tmp/b/test_y/model.onnx: op Foo (node 'other') is not supported"),
            (std::vector<std::string>{"op Foo (node '...') is not supported"}));
  EXPECT_EQ(UnsupportedReasonKeys("m.onnx: 3 problems:\n  - op A (node 'a') is not supported\n"
                                  "  - op A (node 'b') is not supported\n  - op B (node 'c') is "
                                  "not supported"),
            (std::vector<std::string>{"op A (node '...') is not supported",
                                      "op B (node '...') is not supported"}));
  // The loader's list of op types counts once per op type.
  EXPECT_EQ(UnsupportedReasonKeys("m.onnx: 2 unsupported op types: Loop (node 'l'), "
                                  "com.example.Foo (node 'x, y')"),
            (std::vector<std::string>{"unsupported op type Loop",
                                      "unsupported op type com.example.Foo"}));
}

// --- RunCase on case folders written here ----------------------------------------------------

class RunCaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("collage_harness_test_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "test_data_set_0");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void AddValueInfo(onnx::ValueInfoProto* info, const std::string& name, int elem_type,
                           const std::vector<std::string>& dims) {
    info->set_name(name);
    auto* tensor_type = info->mutable_type()->mutable_tensor_type();
    tensor_type->set_elem_type(elem_type);
    auto* shape = tensor_type->mutable_shape();
    for (const std::string& d : dims) {
      if (std::isdigit(static_cast<unsigned char>(d[0]))) {
        shape->add_dim()->set_dim_value(std::stoll(d));
      } else {
        shape->add_dim()->set_dim_param(d);
      }
    }
  }

  // z = op(x, y) over float [rows, 3]; `rows` may be a symbolic dim.
  void WriteModel(const std::string& op_type, const std::string& rows = "2",
                  const std::string& domain = "") {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.set_producer_name("harness_test");
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(13);
    if (!domain.empty()) {
      auto* custom = model.add_opset_import();
      custom->set_domain(domain);
      custom->set_version(1);
    }
    auto* graph = model.mutable_graph();
    graph->set_name("g");
    auto* node = graph->add_node();
    node->set_op_type(op_type);
    node->set_domain(domain);
    node->set_name("the_node");
    node->add_input("x");
    node->add_input("y");
    node->add_output("z");
    AddValueInfo(graph->add_input(), "x", onnx::TensorProto::FLOAT, {rows, "3"});
    AddValueInfo(graph->add_input(), "y", onnx::TensorProto::FLOAT, {rows, "3"});
    AddValueInfo(graph->add_output(), "z", onnx::TensorProto::FLOAT, {rows, "3"});
    std::ofstream out(root_ / "model.onnx", std::ios::binary);
    ASSERT_TRUE(model.SerializeToOstream(&out));
  }

  void WriteTensor(const std::string& file, const std::string& name, const std::vector<float>& values,
                   int64_t rows = 2) {
    onnx::TensorProto proto;
    proto.set_name(name);
    proto.set_data_type(onnx::TensorProto::FLOAT);
    proto.add_dims(rows);
    proto.add_dims(3);
    for (float v : values) proto.add_float_data(v);
    std::ofstream out(root_ / "test_data_set_0" / file, std::ios::binary);
    ASSERT_TRUE(proto.SerializeToOstream(&out));
  }

  fs::path root_;
};

const std::vector<float> kX = {1, 2, 3, 4, 5, 6};
const std::vector<float> kY = {10, 20, 30, 40, 50, 60};
const std::vector<float> kXMinusY = {-9, -18, -27, -36, -45, -54};

TEST_F(RunCaseTest, PassesACorrectCase) {
  WriteModel("Sub");
  WriteTensor("input_0.pb", "x", kX);
  WriteTensor("input_1.pb", "y", kY);
  WriteTensor("output_0.pb", "z", kXMinusY);
  CaseResult r = RunCase(root_, {});
  EXPECT_EQ(r.outcome, Outcome::kPass) << r.message;
}

TEST_F(RunCaseTest, BindsInputsByTheirTensorNames) {
  WriteModel("Sub");
  WriteTensor("input_0.pb", "y", kY);  // the files' order is not the graph's
  WriteTensor("input_1.pb", "x", kX);
  WriteTensor("output_0.pb", "z", kXMinusY);
  CaseResult r = RunCase(root_, {});
  EXPECT_EQ(r.outcome, Outcome::kPass) << r.message;
}

TEST_F(RunCaseTest, BindsUnnamedInputsByPosition) {
  WriteModel("Sub");
  WriteTensor("input_0.pb", "", kX);
  WriteTensor("input_1.pb", "", kY);
  WriteTensor("output_0.pb", "", kXMinusY);
  CaseResult r = RunCase(root_, {});
  EXPECT_EQ(r.outcome, Outcome::kPass) << r.message;
}

TEST_F(RunCaseTest, FailsAWrongOutputNamingTheElement) {
  WriteModel("Sub");
  WriteTensor("input_0.pb", "x", kX);
  WriteTensor("input_1.pb", "y", kY);
  std::vector<float> wrong = kXMinusY;
  wrong[4] = -44.5f;
  WriteTensor("output_0.pb", "z", wrong);
  CaseResult r = RunCase(root_, {});
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.message.find("output 'z'"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("[1, 1]"), std::string::npos) << r.message;
}

TEST_F(RunCaseTest, FailsWhenAnInputIsMissing) {
  WriteModel("Sub");
  WriteTensor("input_0.pb", "x", kX);
  WriteTensor("output_0.pb", "z", kXMinusY);
  CaseResult r = RunCase(root_, {});
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.message.find("input"), std::string::npos) << r.message;
}

TEST_F(RunCaseTest, SkipsAnUnsupportedOp) {
  WriteModel("NoSuchOp", "2", "com.example.harness");
  WriteTensor("input_0.pb", "x", kX);
  WriteTensor("input_1.pb", "y", kY);
  WriteTensor("output_0.pb", "z", kXMinusY);
  CaseResult r = RunCase(root_, {});
  EXPECT_EQ(r.outcome, Outcome::kSkip) << r.message;
  EXPECT_NE(r.message.find("NoSuchOp"), std::string::npos) << r.message;
}

TEST_F(RunCaseTest, FailsAnUnreadableModel) {
  std::ofstream(root_ / "model.onnx") << "this is not protobuf";
  WriteTensor("input_0.pb", "x", kX);
  WriteTensor("output_0.pb", "z", kX);
  CaseResult r = RunCase(root_, {});
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.message.find("load"), std::string::npos) << r.message;
}

TEST_F(RunCaseTest, AppliesShapesTxtToDynamicInputs) {
  WriteModel("Sub", "N");
  std::ofstream(root_ / "shapes.txt") << "# batch of the data\nx=1x3\n\ny=1x3\n";
  WriteTensor("input_0.pb", "x", {1, 2, 3}, 1);
  WriteTensor("input_1.pb", "y", {10, 20, 30}, 1);
  WriteTensor("output_0.pb", "z", {-9, -18, -27}, 1);
  CaseResult r = RunCase(root_, {});
  EXPECT_EQ(r.outcome, Outcome::kPass) << r.message;
}

TEST_F(RunCaseTest, FailsABadShapesTxt) {
  WriteModel("Sub", "N");
  std::ofstream(root_ / "shapes.txt") << "x=1xbanana\n";
  WriteTensor("input_0.pb", "x", {1, 2, 3}, 1);
  WriteTensor("input_1.pb", "y", {10, 20, 30}, 1);
  WriteTensor("output_0.pb", "z", {-9, -18, -27}, 1);
  CaseResult r = RunCase(root_, {});
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_NE(r.message.find("shapes.txt:1"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace collage::conformance
