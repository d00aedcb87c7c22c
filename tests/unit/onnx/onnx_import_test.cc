#include "onnx/onnx_import.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "onnx/onnx_pb.h"
#include "onnx_test_util.h"
#include "collage/shape_text.h"
#include "collage/sdk/op_registry.h"

namespace collage {
namespace {

using testing::AddIntAttr;
using testing::AddIntsAttr;
using testing::ModelBuilder;
using testing::TempDir;
using testing::WriteBytes;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

#define EXPECT_ERROR(result, expected_code, text)                                   \
  do {                                                                              \
    const auto& r_ = (result);                                                      \
    ASSERT_FALSE(r_.ok()) << "expected an error containing: " << (text);            \
    EXPECT_EQ(r_.status().code(), (expected_code)) << r_.status().ToString();       \
    EXPECT_TRUE(Contains(r_.status().message(), (text))) << r_.status().ToString(); \
  } while (0)

// x[2x3] → Relu → y, the smallest valid model.
ModelBuilder ReluModel(int64_t opset = 13) {
  ModelBuilder b(opset);
  b.Input("x", kFloat, {2, 3}).Output("y", kFloat, {2, 3});
  b.Node("Relu", {"x"}, {"y"}, "relu1");
  return b;
}

const Node* FindNode(const Graph& g, const std::string& op_type) {
  for (const Node& n : g.nodes()) {
    if (n.op_type == op_type) return &n;
  }
  return nullptr;
}

TEST(OnnxImport, MinimalModel) {
  auto g = ImportOnnxBytes(ReluModel().Bytes());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->opset(), 13);
  EXPECT_EQ(g->name(), "test_graph");
  ASSERT_EQ(g->num_nodes(), 1);
  EXPECT_EQ(g->node(0).op_type, "Relu");
  EXPECT_EQ(g->node(0).name, "relu1");
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->value(g->inputs()[0]).name, "x");
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->value(g->outputs()[0]).type, (TensorType{DType::kFloat32, {2, 3}}));
}

TEST(OnnxImport, MissingFile) {
  auto g = ImportOnnxFile("/nonexistent/dir/model.onnx");
  EXPECT_ERROR(g, StatusCode::kNotFound, "/nonexistent/dir/model.onnx");
}

TEST(OnnxImport, DirectoryIsAnIoError) {
  TempDir dir;
  auto g = ImportOnnxFile(dir.path().string());
  EXPECT_ERROR(g, StatusCode::kIoError, dir.path().string());
}

TEST(OnnxImport, EmptyFile) {
  TempDir dir;
  WriteBytes(dir.File("model.onnx"), "");
  auto g = ImportOnnxFile(dir.File("model.onnx"));
  EXPECT_ERROR(g, StatusCode::kInvalidModel, "is not a valid ONNX model");
  EXPECT_TRUE(Contains(g.status().message(), "model.onnx"));
}

TEST(OnnxImport, TruncatedModel) {
  ModelBuilder b = ReluModel();
  // Weights make the model long enough that the cut lands inside the graph.
  std::vector<float> w(64, 1.0f);
  b.FloatInit("unused_w", {64}, w);
  const std::string bytes = b.Bytes();
  TempDir dir;
  for (size_t cut : {bytes.size() / 2, bytes.size() - 1, size_t{3}}) {
    WriteBytes(dir.File("model.onnx"), bytes.substr(0, cut));
    auto g = ImportOnnxFile(dir.File("model.onnx"));
    ASSERT_FALSE(g.ok()) << "cut at " << cut;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidModel) << g.status().ToString();
    EXPECT_TRUE(Contains(g.status().message(), "model.onnx")) << g.status().ToString();
  }
}

TEST(OnnxImport, RandomBytes) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 50; ++trial) {
    std::string bytes(1 + rng() % 512, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    auto g = ImportOnnxBytes(bytes, {}, "random.onnx");
    ASSERT_FALSE(g.ok()) << "trial " << trial;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidModel) << g.status().ToString();
    EXPECT_TRUE(Contains(g.status().message(), "random.onnx"));
  }
}

TEST(OnnxImport, ParsesButIsNoModel) {
  // Field 1 = 3 (ir_version) and an unknown field 100: parses, but there is no graph.
  auto g = ImportOnnxBytes(std::string("\x08\x03\xa0\x06\x01", 5), {}, "tiny.bin");
  EXPECT_ERROR(g, StatusCode::kInvalidModel, "tiny.bin: not a valid ONNX model (it has no graph)");

  ModelBuilder b = ReluModel();
  b.model().clear_ir_version();
  EXPECT_ERROR(ImportOnnxBytes(b.Bytes()), StatusCode::kInvalidModel, "ir_version");

  // No default-domain import while a node needs it (checked by libonnx up to 17, by us after).
  ModelBuilder c = ReluModel();
  c.model().clear_opset_import();
  c.Domain("com.example", 1);
  EXPECT_ERROR(ImportOnnxBytes(c.Bytes()), StatusCode::kInvalidModel, "Relu");

  ModelBuilder d = ReluModel();
  d.graph()->clear_output();
  EXPECT_ERROR(ImportOnnxBytes(d.Bytes()), StatusCode::kInvalidModel, "no outputs");
}

TEST(OnnxImport, OpsetRange) {
  EXPECT_ERROR(ImportOnnxBytes(ReluModel(0).Bytes()), StatusCode::kUnsupported, "opset 0");
  EXPECT_ERROR(ImportOnnxBytes(ReluModel(22).Bytes()), StatusCode::kUnsupported, "opset 22");
  for (int64_t opset : {7, 11, 17}) {
    auto g = ImportOnnxBytes(ReluModel(opset).Bytes());
    ASSERT_TRUE(g.ok()) << opset << ": " << g.status().ToString();
    EXPECT_EQ(g->opset(), opset);
  }
  // Older opsets work when the model's ops did not change until opset 7: Relu's definition
  // dates from opset 6, Add's changed in 7 (broadcasting).
  auto relu6 = ImportOnnxBytes(ReluModel(6).Bytes());
  ASSERT_TRUE(relu6.ok()) << relu6.status().ToString();
  EXPECT_EQ(relu6->opset(), 7);
  ModelBuilder add6(6);
  add6.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  add6.Node("Relu", {"x"}, {"r"}, "relu");
  add6.Node("Add", {"r", "x"}, {"y"}, "add");
  EXPECT_ERROR(ImportOnnxBytes(add6.Bytes()), StatusCode::kUnsupported,
               "opset 6 is not supported (collage supports opsets 7 to 21); older models are "
               "accepted when their ops did not change until opset 7, but these did: Add (node "
               "'add')");

  // "ai.onnx" is the default domain too.
  ModelBuilder b = ReluModel();
  b.model().mutable_opset_import(0)->set_domain("ai.onnx");
  b.graph()->mutable_node(0)->set_domain("ai.onnx");
  auto g = ImportOnnxBytes(b.Bytes());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->opset(), 13);
  EXPECT_EQ(g->node(0).domain, "");
}

TEST(OnnxImport, CheckerFailure) {
  // Relu takes one input: the ONNX checker refuses the node.
  ModelBuilder b(13);
  b.Input("x", kFloat, {2}).Input("z", kFloat, {2}).Output("y", kFloat, {2});
  b.Node("Relu", {"x", "z"}, {"y"}, "bad_relu");
  auto g = ImportOnnxBytes(b.Bytes(), {}, "bad.onnx");
  EXPECT_ERROR(g, StatusCode::kInvalidModel, "ONNX checker");
  EXPECT_TRUE(Contains(g.status().message(), "bad.onnx"));
  EXPECT_TRUE(Contains(g.status().message(), "bad_relu")) << g.status().message();
  EXPECT_FALSE(Contains(g.status().message(), "\n"));

  // An op ONNX does not know at all.
  ModelBuilder c(13);
  c.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  c.Node("NoSuchOp", {"x"}, {"y"}, "n1");
  EXPECT_ERROR(ImportOnnxBytes(c.Bytes()), StatusCode::kInvalidModel, "NoSuchOp");
}

TEST(OnnxImport, UnsupportedOpsAreListedTogether) {
  const auto& registry = OpRegistry::Global();
  if (registry.Find("", "TfIdfVectorizer")) {
    GTEST_SKIP() << "the op this test uses as unsupported is implemented now";
  }
  ModelBuilder b(13);
  b.Domain("com.example", 1);
  b.Input("matrices", kFloat, {1, 4, 4});
  b.Input("tokens", kInt64, {2, 3});
  b.Output("det", kFloat, {}).Output("det2", kFloat, {}).Output("tf", kFloat, {});
  b.Node("Relu", {"matrices"}, {"matrices_relu"}, "relu_ok");
  b.Node("Unknown", {"matrices_relu"}, {"det"}, "unknown_1", "com.example");
  b.Node("Unknown", {"matrices"}, {"det2"}, "unknown_2", "com.example");
  auto& tf = b.Node("TfIdfVectorizer", {"tokens"}, {"tf"}, "tfidf_3");
  AddIntAttr(tf, "max_gram_length", 1);
  AddIntAttr(tf, "min_gram_length", 1);
  AddIntAttr(tf, "max_skip_count", 0);
  auto* mode = tf.add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("TF");
  AddIntsAttr(tf, "ngram_counts", {0});
  AddIntsAttr(tf, "ngram_indexes", {0});
  AddIntsAttr(tf, "pool_int64s", {5});
  auto g = ImportOnnxBytes(b.Bytes(), {}, "model.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported) << g.status().ToString();
  EXPECT_EQ(g.status().message(),
            "model.onnx: 2 unsupported op types: TfIdfVectorizer (node 'tfidf_3'), "
            "com.example::Unknown (node 'unknown_1')");
}

TEST(OnnxImport, UnknownDomain) {
  // Imported but unknown to collage: an unsupported op, named with its domain.
  ModelBuilder b = ReluModel();
  b.Domain("com.example", 1);
  b.graph()->clear_node();
  b.Node("Relu", {"x"}, {"y"}, "custom_relu", "com.example");
  EXPECT_ERROR(ImportOnnxBytes(b.Bytes()), StatusCode::kUnsupported,
               "1 unsupported op type: com.example::Relu (node 'custom_relu')");

  // Not imported at all: an invalid model, with the checker (opset 13) or without (18).
  for (int64_t opset : {13, 18}) {
    ModelBuilder c = ReluModel(opset);
    c.graph()->clear_node();
    c.Node("Relu", {"x"}, {"y"}, "custom_relu", "com.example");
    auto g = ImportOnnxBytes(c.Bytes());
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidModel)
        << opset << ": " << g.status().ToString();
    EXPECT_TRUE(Contains(g.status().message(), "com.example")) << g.status().ToString();
  }
}

ModelBuilder DynamicModel() {
  ModelBuilder b(13);
  b.Input("x", kFloat, {std::string("batch"), 3, 4, 4})
      .Output("y", kFloat, {std::string("batch"), 3, 4, 4});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  return b;
}

TEST(OnnxImport, DynamicDimsNeedShape) {
  auto g = ImportOnnxBytes(DynamicModel().Bytes(), {}, "dyn.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(g.status().message(),
            "dyn.onnx: input 'x' has dynamic dims (batch x 3 x 4 x 4); give its data with "
            "--input x=FILE (its shape fixes them) or fix them with --shape x=<batch>x3x4x4");

  // A dim with neither value nor name, and an input with no shape at all (which the ONNX
  // checker refuses up to opset 17).
  ModelBuilder b(18);
  b.Input("a", kFloat, {2}).Input("b", kFloat, {2}).Output("y", kFloat, {2});
  b.graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->Clear();
  b.graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->clear_shape();
  b.Node("Add", {"a", "b"}, {"y"}, "add");
  g = ImportOnnxBytes(b.Bytes());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
  // Both problems in one error.
  EXPECT_TRUE(
      Contains(g.status().message(),
               "input 'a' has dynamic dims (?); give its data with --input a=FILE (its shape "
               "fixes them) or fix them with --shape a=<?>"))
      << g.status().message();
  EXPECT_TRUE(Contains(g.status().message(), "input 'b' has no shape")) << g.status().message();
}

TEST(OnnxImport, ShapeOverride) {
  ImportOptions options;
  options.input_shapes["x"] = {2, 3, 4, 4};
  auto g = ImportOnnxBytes(DynamicModel().Bytes(), options);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->value(g->inputs()[0]).type.shape, (Shape{2, 3, 4, 4}));
  EXPECT_EQ(g->value(g->outputs()[0]).type.shape, (Shape{2, 3, 4, 4}));

  // A static dim cannot be changed: the model was made for it.
  ImportOptions batch8;
  batch8.input_shapes["x"] = {8, 3};
  EXPECT_ERROR(ImportOnnxBytes(ReluModel().Bytes(), batch8), StatusCode::kInvalidArgument,
               "--shape x=8x3 contradicts input 'x' (2 x 3): its dim 0 is 2 in the model");
  // Where the shape came from is named as the caller says (a data file, say).
  batch8.input_shape_origins["x"] = "--input x=x.npy";
  EXPECT_ERROR(ImportOnnxBytes(ReluModel().Bytes(), batch8), StatusCode::kInvalidArgument,
               "--input x=x.npy (shape 8x3) contradicts input 'x'");
  // The same static dims are no change.
  ImportOptions same;
  same.input_shapes["x"] = {2, 3};
  g = ImportOnnxBytes(ReluModel().Bytes(), same);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->value(g->outputs()[0]).type.shape, (Shape{2, 3}));

  // A named dynamic dim is proposed by its name, never as a number the user did not give.
  ModelBuilder sequence(13);
  sequence.Input("ids", onnx::TensorProto::FLOAT, {int64_t{1}, std::string("sequence")})
      .Output("y", onnx::TensorProto::FLOAT, {int64_t{1}, std::string("sequence")});
  sequence.Node("Relu", {"ids"}, {"y"}, "relu");
  EXPECT_ERROR(ImportOnnxBytes(sequence.Bytes()), StatusCode::kInvalidArgument,
               "fix them with --shape ids=1x<sequence>");

  ImportOptions wrong_name;
  wrong_name.input_shapes["input"] = {1, 3, 4, 4};
  EXPECT_ERROR(ImportOnnxBytes(DynamicModel().Bytes(), wrong_name), StatusCode::kInvalidArgument,
               "--shape names 'input', which is not a graph input (inputs: x)");

  ImportOptions wrong_rank;
  wrong_rank.input_shapes["x"] = {1, 3, 4};
  EXPECT_ERROR(ImportOnnxBytes(DynamicModel().Bytes(), wrong_rank), StatusCode::kInvalidArgument,
               "has rank 3, but input 'x' has rank 4");

  ModelBuilder with_weight = ReluModel();
  with_weight.FloatInit("w", {1}, {1.0f});
  ImportOptions on_weight;
  on_weight.input_shapes["w"] = {1};
  EXPECT_ERROR(ImportOnnxBytes(with_weight.Bytes(), on_weight), StatusCode::kInvalidArgument,
               "is a weight");
}

TEST(OnnxImport, UnsupportedInputKinds) {
  ModelBuilder str(13);
  str.Input("s", onnx::TensorProto::STRING, {2}).Output("y", onnx::TensorProto::STRING, {2});
  str.Node("Identity", {"s"}, {"y"}, "id");
  EXPECT_ERROR(ImportOnnxBytes(str.Bytes()), StatusCode::kUnsupported, "input 's'");
  EXPECT_ERROR(ImportOnnxBytes(str.Bytes()), StatusCode::kUnsupported, "string");

  ModelBuilder cplx(13);
  cplx.Input("c", onnx::TensorProto::COMPLEX64, {2}).Output("y", onnx::TensorProto::COMPLEX64, {2});
  cplx.Node("Identity", {"c"}, {"y"}, "id");
  EXPECT_ERROR(ImportOnnxBytes(cplx.Bytes()), StatusCode::kUnsupported, "complex64");

  ModelBuilder seq(13);
  auto* in = seq.graph()->add_input();
  in->set_name("seq");
  in->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(kFloat);
  seq.Output("y", kFloat, {});
  seq.Node("SequenceLength", {"seq"}, {"y"}, "len");
  // SequenceLength may be refused as an unsupported op first; either way, unsupported.
  auto g = ImportOnnxBytes(seq.Bytes());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported) << g.status().ToString();

  ModelBuilder seq_id(18);  // Identity accepts sequences; the input kind is what is refused
  auto* in2 = seq_id.graph()->add_input();
  in2->set_name("seq");
  in2->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(kFloat);
  seq_id.UntypedOutput("y");
  seq_id.Node("Identity", {"seq"}, {"y"}, "id");
  EXPECT_ERROR(ImportOnnxBytes(seq_id.Bytes()), StatusCode::kUnsupported,
               "input 'seq' is a sequence");
}

// Sparse data whose dims claim more values than it holds: refused by name before libonnx's
// checker, which would read past the values (a crash), wherever the tensor sits.
TEST(OnnxImport, SparseTensorsAreRefusedBeforeTheChecker) {
  auto short_sparse = [](onnx::SparseTensorProto* sparse) {
    sparse->add_dims(100000);
    sparse->add_dims(100000);
    onnx::TensorProto* values = sparse->mutable_values();
    values->set_name("w");
    values->set_data_type(kFloat);
    values->add_dims(1000);
    values->set_raw_data(std::string(8, '\0'));  // 2 floats for 1000 claimed
    onnx::TensorProto* indices = sparse->mutable_indices();
    indices->set_data_type(onnx::TensorProto::INT64);
    indices->add_dims(1000);
    indices->set_raw_data(std::string(8, '\0'));
  };
  ModelBuilder initializer(13);
  initializer.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  initializer.Node("Relu", {"x"}, {"y"}, "relu");
  short_sparse(initializer.graph()->add_sparse_initializer());
  EXPECT_ERROR(ImportOnnxBytes(initializer.Bytes()), StatusCode::kUnsupported,
               "sparse initializers are not supported");

  ModelBuilder constant(13);
  constant.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  auto& node = constant.Node("Constant", {}, {"c"}, "const");
  onnx::AttributeProto* value = node.add_attribute();
  value->set_name("sparse_value");
  value->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  short_sparse(value->mutable_sparse_tensor());
  constant.Node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_ERROR(ImportOnnxBytes(constant.Bytes()), StatusCode::kUnsupported, "sparse");
}

// Opset -1 is a number the file holds, not "no opset": refused like any out of range.
TEST(OnnxImport, ANegativeOpsetIsRefused) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  for (int64_t opset : {-1, 0, -5}) {
    SCOPED_TRACE(opset);
    onnx::ModelProto model;
    ASSERT_TRUE(model.ParseFromString(b.Bytes()));
    model.mutable_opset_import(0)->set_version(opset);
    EXPECT_ERROR(ImportOnnxBytes(model.SerializeAsString()), StatusCode::kUnsupported,
                 "opset " + std::to_string(opset) + " is not supported");
  }
}

// x[2x3x4] → Shape → Gather(0) → Unsqueeze → Concat(with [-1]) → Reshape(x, ·) → y[2x12]:
// the shape arithmetic exporters emit.
ModelBuilder ShapeChainModel(int64_t opset = 13) {
  ModelBuilder b(opset);
  b.Input("x", kFloat, {2, 3, 4}).Output("y", kFloat, {2, 12});
  b.Int64Init("zero", {}, {0});
  b.Int64Init("axes0", {1}, {0});
  b.Int64Init("minus_one", {1}, {-1});
  b.Node("Shape", {"x"}, {"shape"}, "shape");
  b.Node("Gather", {"shape", "zero"}, {"batch"}, "gather");
  if (opset >= 13) {
    b.Node("Unsqueeze", {"batch", "axes0"}, {"batch1"}, "unsqueeze");
  } else {
    auto& u = b.Node("Unsqueeze", {"batch"}, {"batch1"}, "unsqueeze");
    AddIntsAttr(u, "axes", {0});
  }
  auto& concat = b.Node("Concat", {"batch1", "minus_one"}, {"new_shape"}, "concat");
  AddIntAttr(concat, "axis", 0);
  b.Node("Reshape", {"x", "new_shape"}, {"y"}, "reshape");
  return b;
}

TEST(OnnxImport, FoldsShapeChain) {
  for (int64_t opset : {11, 13, 18}) {
    auto g = ImportOnnxBytes(ShapeChainModel(opset).Bytes());
    ASSERT_TRUE(g.ok()) << opset << ": " << g.status().ToString();
    ASSERT_EQ(g->num_nodes(), 1) << opset;
    const Node& reshape = g->node(0);
    EXPECT_EQ(reshape.op_type, "Reshape");
    ASSERT_EQ(reshape.inputs.size(), 2u);
    const Value& shape = g->value(reshape.inputs[1]);
    ASSERT_TRUE(shape.is_constant());
    EXPECT_EQ(shape.name, "new_shape");
    EXPECT_EQ(shape.constant->ToVector<int64_t>(), (std::vector<int64_t>{2, -1}));
    EXPECT_EQ(g->value(g->outputs()[0]).type, (TensorType{DType::kFloat32, {2, 12}}));
    // Folded intermediates and the unused initializers are gone.
    EXPECT_FALSE(g->FindValue("batch").has_value());
    EXPECT_FALSE(g->FindValue("zero").has_value());
    EXPECT_TRUE(g->Validate().ok());
  }
}

TEST(OnnxImport, FoldsFullyConstantGraph) {
  ModelBuilder b(13);
  b.FloatInit("a", {2}, {1.0f, 2.0f}).FloatInit("c", {2}, {10.0f, 20.0f});
  b.Input("x", kFloat, {2});
  b.Output("y", kFloat, {2}).Output("x_out", kFloat, {2});
  b.Node("Add", {"a", "c"}, {"sum"}, "add");
  b.Node("Relu", {"sum"}, {"y"}, "relu");
  b.Node("Identity", {"x"}, {"x_out"}, "id");
  auto g = ImportOnnxBytes(b.Bytes());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->num_nodes(), 1);  // only the Identity on the real input stays
  const Value& y = g->value(g->outputs()[0]);
  ASSERT_TRUE(y.is_constant());
  EXPECT_EQ(y.constant->ToVector<float>(), (std::vector<float>{11.0f, 22.0f}));

  ImportOptions no_fold;
  no_fold.fold_constants = false;
  g = ImportOnnxBytes(b.Bytes(), no_fold);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->num_nodes(), 3);
}

// libonnx's shape inference (opsets <= 17) counts Range's elements in int64 and overflows
// near the limits; the import keeps the exact count, also for what is computed from it.
TEST(OnnxImport, RangeNearTheInt64LimitsImportsWithItsExactCount) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (const bool fold : {true, false}) {
    ModelBuilder b(13);
    b.Int64Init("start", {}, {-10})
        .Int64Init("limit", {}, {kMax - 5})
        .Int64Init("delta", {}, {kMax});
    b.Input("x", kFloat, {2});
    b.Output("y", kInt64, {2}).Output("z", kInt64, {2}).Output("x_out", kFloat, {2});
    b.Node("Range", {"start", "limit", "delta"}, {"y"}, "range");
    b.Node("Neg", {"y"}, {"z"}, "neg");
    b.Node("Identity", {"x"}, {"x_out"}, "id");
    ImportOptions options;
    options.fold_constants = fold;
    auto g = ImportOnnxBytes(b.Bytes(), options);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    const Value& y = g->value(g->outputs()[0]);
    EXPECT_EQ(y.type.shape, (Shape{2}));
    EXPECT_EQ(g->value(g->outputs()[1]).type.shape, (Shape{2}));
    if (fold) {
      ASSERT_TRUE(y.is_constant());
      EXPECT_EQ(y.constant->ToVector<int64_t>(), (std::vector<int64_t>{-10, kMax - 10}));
    }
  }
}

TEST(OnnxImport, ConstantNodes) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {3}).Output("y", kFloat, {3}).Output("k", kInt64, {2});
  auto& c1 = b.Node("Constant", {}, {"c1"}, "c1");
  auto* value = c1.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(kFloat);
  value->mutable_t()->add_dims(3);
  for (float v : {1.f, -2.f, 3.f}) value->mutable_t()->add_float_data(v);
  auto& c2 = b.Node("Constant", {}, {"c2"}, "c2");
  auto* f = c2.add_attribute();
  f->set_name("value_float");
  f->set_type(onnx::AttributeProto::FLOAT);
  f->set_f(0.5f);
  auto& c3 = b.Node("Constant", {}, {"k"}, "c3");
  auto* ints = c3.add_attribute();
  ints->set_name("value_ints");
  ints->set_type(onnx::AttributeProto::INTS);
  ints->add_ints(7);
  ints->add_ints(8);
  b.Node("Mul", {"c1", "c2"}, {"scaled"}, "mul");
  b.Node("Add", {"x", "scaled"}, {"y"}, "add");

  // Constant nodes become constants even without folding.
  ImportOptions no_fold;
  no_fold.fold_constants = false;
  auto g = ImportOnnxBytes(b.Bytes(), no_fold);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(FindNode(*g, "Constant"), nullptr);
  EXPECT_EQ(g->num_nodes(), 2);
  const Value& k = g->value(g->outputs()[1]);
  ASSERT_TRUE(k.is_constant());
  EXPECT_EQ(k.constant->ToVector<int64_t>(), (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(g->value(*g->FindValue("c2")).type, (TensorType{DType::kFloat32, {}}));

  g = ImportOnnxBytes(b.Bytes());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->num_nodes(), 1);
  const Value& scaled = g->value(g->node(0).inputs[1]);
  ASSERT_TRUE(scaled.is_constant());
  EXPECT_EQ(scaled.constant->ToVector<float>(), (std::vector<float>{0.5f, -1.f, 1.5f}));

  ModelBuilder s(13);
  s.Input("x", kFloat, {1}).Output("y", kFloat, {1});
  auto& cs = s.Node("Constant", {}, {"str"}, "string_const");
  auto* sv = cs.add_attribute();
  sv->set_name("value_string");
  sv->set_type(onnx::AttributeProto::STRING);
  sv->set_s("hi");
  s.Node("Identity", {"x"}, {"y"}, "id");
  EXPECT_ERROR(ImportOnnxBytes(s.Bytes()), StatusCode::kUnsupported, "string_const");
}

TEST(OnnxImport, Opset18SkipsTheChecker) {
  for (int64_t opset : {18, 19, 21}) {
    ModelBuilder b(opset, opset >= 21 ? 10 : 9);  // IR versions libonnx 1.12 does not know
    b.Input("x", kFloat, {2, 3}).Input("z", kFloat, {3}).Output("y", kFloat, {2, 3});
    b.Node("Add", {"x", "z"}, {"sum"}, "add");
    b.Node("Relu", {"sum"}, {"y"}, "relu");
    auto g = ImportOnnxBytes(b.Bytes());
    ASSERT_TRUE(g.ok()) << opset << ": " << g.status().ToString();
    EXPECT_EQ(g->opset(), opset);
    EXPECT_EQ(g->num_nodes(), 2);
  }
  // An opset-17 model written with IR version 9 (newer exporters) is still checked.
  ModelBuilder b(17, 9);
  b.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  auto g = ImportOnnxBytes(b.Bytes());
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  ModelBuilder bad(17, 10);
  bad.Input("x", kFloat, {2}).Input("z", kFloat, {2}).Output("y", kFloat, {2});
  bad.Node("Relu", {"x", "z"}, {"y"}, "relu");
  EXPECT_ERROR(ImportOnnxBytes(bad.Bytes()), StatusCode::kInvalidModel, "ONNX checker");
}

TEST(OnnxImport, OwnChecksWithoutTheChecker) {
  ModelBuilder unknown_input(18);
  unknown_input.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  unknown_input.Node("Add", {"x", "nowhere"}, {"y"}, "add7");
  EXPECT_ERROR(ImportOnnxBytes(unknown_input.Bytes(), {}, "m.onnx"), StatusCode::kInvalidModel,
               "m.onnx: Add node 'add7': input 'nowhere' is not produced");

  ModelBuilder twice(18);
  twice.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  twice.Node("Relu", {"x"}, {"y"}, "r1");
  twice.Node("Relu", {"x"}, {"y"}, "r2");
  EXPECT_ERROR(ImportOnnxBytes(twice.Bytes()), StatusCode::kInvalidModel, "already defined");

  ModelBuilder unsorted(18);  // nodes must come in topological order
  unsorted.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  unsorted.Node("Relu", {"t"}, {"y"}, "second");
  unsorted.Node("Relu", {"x"}, {"t"}, "first");
  EXPECT_ERROR(ImportOnnxBytes(unsorted.Bytes()), StatusCode::kInvalidModel, "'t'");

  ModelBuilder bad_output(18);
  bad_output.Input("x", kFloat, {2}).Output("y", kFloat, {2}).Output("ghost", kFloat, {2});
  bad_output.Node("Relu", {"x"}, {"y"}, "r");
  EXPECT_ERROR(ImportOnnxBytes(bad_output.Bytes()), StatusCode::kInvalidModel, "'ghost'");

  ModelBuilder missing_required(18);  // an empty name for a required input
  missing_required.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  missing_required.Node("Add", {"", "x"}, {"y"}, "add_missing");
  EXPECT_ERROR(ImportOnnxBytes(missing_required.Bytes()), StatusCode::kInvalidModel,
               "Add node 'add_missing': input 0 is required but missing");

  ModelBuilder graph_attr(18);
  graph_attr.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  auto& n = graph_attr.Node("Relu", {"x"}, {"y"}, "relu_g");
  auto* g = n.add_attribute();
  g->set_name("body");
  g->set_type(onnx::AttributeProto::GRAPH);
  g->mutable_g()->set_name("sub");
  EXPECT_ERROR(ImportOnnxBytes(graph_attr.Bytes()), StatusCode::kUnsupported,
               "Relu node 'relu_g': attribute 'body' of type GRAPH is not supported");
}

TEST(OnnxImport, InferenceErrorsNameNodeAndFile) {
  ModelBuilder b(13);
  b.Input("a", kFloat, {2, 3}).Input("b", kFloat, {4}).Output("y", kFloat, {std::string("n"), 3});
  b.Node("Add", {"a", "b"}, {"y"}, "add_bad");
  auto g = ImportOnnxBytes(b.Bytes(), {}, "model.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_TRUE(Contains(g.status().message(), "model.onnx: ")) << g.status().ToString();
  EXPECT_TRUE(Contains(g.status().message(), "Add node 'add_bad'")) << g.status().ToString();
}

TEST(OnnxImport, MalformedAttributesNeverReachOnnxInference) {
  // libonnx 1.12's pool/conv shape inference divides by the stride: a zero stride must be
  // refused by collage's own inference before ONNX's runs (found by the fuzzer).
  for (const char* op : {"MaxPool", "AveragePool", "Conv"}) {
    ModelBuilder b(13);
    b.Input("x", kFloat, {1, 1, 4, 4}).Output("y", kFloat, {1, 1, 2, 2});
    std::vector<std::string> inputs = {"x"};
    if (std::string(op) == "Conv") {
      b.FloatInit("w", {1, 1, 2, 2}, {1, 1, 1, 1});
      inputs.push_back("w");
    }
    auto& n = b.Node(op, inputs, {"y"}, "strided");
    AddIntsAttr(n, "kernel_shape", {2, 2});
    AddIntsAttr(n, "strides", {2, 0});
    auto g = ImportOnnxBytes(b.Bytes());
    ASSERT_FALSE(g.ok()) << op;
    EXPECT_NE(g.status().code(), StatusCode::kInternal) << g.status().ToString();
    EXPECT_TRUE(Contains(g.status().message(), "strided")) << g.status().ToString();
  }
}

TEST(OnnxImport, UntypedAttributesAreCheckedByTheirValue) {
  // An attribute without `type` (as IR version 1 writes them) holding a float where the op
  // wants an int: refused at opset 18 as it is once typed (found by the fuzzer: it used to be
  // accepted, then refused after an export round trip).
  ModelBuilder b(18);
  b.Input("x", kFloat, {2, 3}).Output("y", kFloat, {2, 3});
  onnx::NodeProto& relu = b.Node("LeakyRelu", {"x"}, {"y"}, "leaky");
  auto* untyped_ok = relu.add_attribute();  // alpha is a float: fine
  untyped_ok->set_name("alpha");
  untyped_ok->set_f(0.5f);
  EXPECT_TRUE(ImportOnnxBytes(b.Bytes()).ok());

  ModelBuilder c(18);
  c.Input("x", kFloat, {2, 3}).Output("y", kFloat, {2, 1});
  onnx::NodeProto& mean = c.Node("ReduceMax", {"x"}, {"y"}, "max");
  auto* wrong = mean.add_attribute();
  wrong->set_name("keepdims");
  wrong->set_f(1.0f);
  EXPECT_ERROR(ImportOnnxBytes(c.Bytes()), StatusCode::kInvalidModel,
               "attribute 'keepdims' is FLOAT, the op defines it as INT");
}

TEST(OnnxImport, DeclaredOutputTypesAreChecked) {
  ModelBuilder dtype(13);
  dtype.Input("x", kFloat, {2, 3}).Output("y", kFloat, {2});
  dtype.Node("Shape", {"x"}, {"y"}, "shape");  // computes int64
  EXPECT_ERROR(ImportOnnxBytes(dtype.Bytes()), StatusCode::kInvalidModel,
               "graph output 'y' is declared float32, but the graph computes int64[2]");

  ModelBuilder shape(18);  // opset 18: our check, not ONNX shape inference, finds it
  shape.Input("x", kFloat, {2, 3}).Output("y", kFloat, {2, 4});
  shape.Node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_ERROR(ImportOnnxBytes(shape.Bytes()), StatusCode::kInvalidModel,
               "graph output 'y' is declared with shape (2 x 4), but the graph computes "
               "float32[2x3]");

  ModelBuilder dtype18(18);
  dtype18.Input("x", kFloat, {2, 3}).Output("y", onnx::TensorProto::DOUBLE, {2, 3});
  dtype18.Node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_ERROR(ImportOnnxBytes(dtype18.Bytes()), StatusCode::kInvalidModel,
               "graph output 'y' is declared float64, but the graph computes float32[2x3]");

  // Symbolic and missing declarations are fine (the checker wants a shape field up to 17).
  ModelBuilder loose(18);
  loose.Input("x", kFloat, {2, 3}).Output("y", kFloat, {std::string("n"), 3}).UntypedOutput("z");
  loose.Node("Relu", {"x"}, {"y"}, "relu");
  loose.Node("Neg", {"x"}, {"z"}, "neg");
  auto g = ImportOnnxBytes(loose.Bytes());
  EXPECT_TRUE(g.ok()) << g.status().ToString();
}

TEST(OnnxImport, OutputsMayBeInputsOrConstants) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {2}).FloatInit("w", {2}, {1, 2});
  b.Output("x", kFloat, {2}).Output("w", kFloat, {2}).Output("y", kFloat, {2});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  auto g = ImportOnnxBytes(b.Bytes());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->outputs().size(), 3u);
  EXPECT_EQ(g->outputs()[0], g->inputs()[0]);
  EXPECT_TRUE(g->value(g->outputs()[1]).is_constant());
}

TEST(OnnxImport, InitializersListedAsInputsAreConstants) {
  ModelBuilder b(9, 3);  // the old exporter convention
  b.Input("x", kFloat, {2}).Input("w", kFloat, {2}).Output("y", kFloat, {2});
  b.FloatInit("w", {2}, {1.0f, -1.0f});
  b.Node("Add", {"x", "w"}, {"y"}, "add");
  auto g = ImportOnnxBytes(b.Bytes());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->value(g->inputs()[0]).name, "x");
  EXPECT_TRUE(g->value(*g->FindValue("w")).is_constant());
}

TEST(OnnxImport, NodesGetUniqueNames) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {2}).Output("y", kFloat, {2});
  b.Node("Relu", {"x"}, {"a"});
  b.Node("Neg", {"a"}, {"b"}, "dup");
  b.Node("Neg", {"b"}, {"y"}, "dup");
  auto g = ImportOnnxBytes(b.Bytes());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->num_nodes(), 3);
  EXPECT_EQ(g->node(0).name, "Relu_0");
  EXPECT_EQ(g->node(1).name, "dup");
  EXPECT_EQ(g->node(2).name, "dup_2");
}

TEST(OnnxImport, OptionalInputsAndAttributes) {
  // Clip with its optional min absent and max given (opset 13), and attribute conversion.
  ModelBuilder b(13);
  b.Input("x", kFloat, {4}).Output("y", kFloat, {4}).Output("t", kFloat, {2, 2});
  b.FloatInit("hi", {}, {1.0f});
  b.Node("Clip", {"x", "", "hi"}, {"y"}, "clip");
  b.Node("Reshape", {"x", "shape22"}, {"r"}, "reshape");
  b.Int64Init("shape22", {2}, {2, 2});
  auto& t = b.Node("Transpose", {"r"}, {"t"}, "transpose");
  AddIntsAttr(t, "perm", {1, 0});
  // Move the initializer before its use (initializers are not ordered; fine either way).
  auto g = ImportOnnxBytes(b.Bytes());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Node* clip = FindNode(*g, "Clip");
  ASSERT_NE(clip, nullptr);
  ASSERT_EQ(clip->inputs.size(), 3u);
  EXPECT_EQ(clip->inputs[1], kNoValue);
  EXPECT_TRUE(g->value(clip->inputs[2]).is_constant());
  const Node* transpose = FindNode(*g, "Transpose");
  ASSERT_NE(transpose, nullptr);
  EXPECT_EQ(transpose->attributes.GetInts("perm"), (std::vector<int64_t>{1, 0}));
}

TEST(OnnxImport, ExternalDataFromAnotherDirectory) {
  TempDir dir;
  std::vector<float> w = {1.0f, -2.0f, 3.0f};
  WriteBytes(dir.File("weights.bin"),
             std::string(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float)));
  ModelBuilder b(13);
  b.Input("x", kFloat, {3}).Output("y", kFloat, {3});
  auto* init = b.graph()->add_initializer();
  init->set_name("w");
  init->set_data_type(kFloat);
  init->add_dims(3);
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = init->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  b.Node("Add", {"x", "w"}, {"y"}, "add");
  WriteBytes(dir.File("model.onnx"), b.Bytes());
  // The current directory is not the model's: data is found next to the model file.
  auto g = ImportOnnxFile(dir.File("model.onnx"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Value& wv = g->value(*g->FindValue("w"));
  ASSERT_TRUE(wv.is_constant());
  EXPECT_EQ(wv.constant->ToVector<float>(), w);

  // Missing data file: an error naming it.
  std::filesystem::remove(dir.File("weights.bin"));
  auto missing = ImportOnnxFile(dir.File("model.onnx"));
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status().message(), "weights.bin")) << missing.status().ToString();
}

TEST(OnnxImport, ParseShape) {
  EXPECT_EQ(ParseShape("1x3x224x224").value(), (Shape{1, 3, 224, 224}));
  EXPECT_EQ(ParseShape("1,3,224,224").value(), (Shape{1, 3, 224, 224}));
  EXPECT_EQ(ParseShape(" 8 ").value(), (Shape{8}));
  EXPECT_EQ(ParseShape("0x4").value(), (Shape{0, 4}));
  EXPECT_EQ(ParseShape("scalar").value(), Shape{});
  for (const char* bad : {"", "x", "1x", "x3", "1xx3", "1x-3", "1x3,4", "a", "1.5", "1x3x",
                          "99999999999999999999999"}) {
    auto s = ParseShape(bad);
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(OnnxImport, ParseShapeOverride) {
  std::map<std::string, Shape> shapes;
  ASSERT_TRUE(ParseShapeOverride("input=1x3x224x224", shapes).ok());
  ASSERT_TRUE(ParseShapeOverride("a=b=2,2", shapes).ok());  // names may hold '='
  EXPECT_EQ(shapes["input"], (Shape{1, 3, 224, 224}));
  EXPECT_EQ(shapes["a=b"], (Shape{2, 2}));
  EXPECT_EQ(ParseShapeOverride("input=1x3", shapes).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseShapeOverride("1x3", shapes).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseShapeOverride("=1x3", shapes).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseShapeOverride("y=1xz", shapes).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace collage

namespace collage {
namespace {

// Above opset 17 libonnx's checker does not run; attribute types are still checked, so a
// FLOAT `axis` is refused instead of being read as absent (axis 0: a silent wrong answer).
TEST(OnnxImport, WrongAttributeTypeIsRefusedWithoutTheChecker) {
  testing::ModelBuilder b(18);
  b.Input("a", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}})
      .Input("b", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}})
      .Output("y", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{6}});
  onnx::NodeProto& concat = b.Node("Concat", {"a", "b"}, {"y"}, "cat");
  auto* axis = concat.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::FLOAT);
  axis->set_f(1.0f);
  auto g = ImportOnnxBytes(b.Bytes());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(g.status().message().find("attribute 'axis' is FLOAT"), std::string::npos)
      << g.status().message();
  EXPECT_NE(g.status().message().find("cat"), std::string::npos);
}

}  // namespace
}  // namespace collage
