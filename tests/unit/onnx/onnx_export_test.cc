#include "onnx/onnx_export.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <type_traits>
#include <variant>

#include "onnx/checker.h"
#include "onnx/onnx_attributes.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_pb.h"
#include "onnx_test_util.h"
#include "zoo/zoo.h"

namespace collage {
namespace {

using testing::TempDir;

bool SameTensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

bool SameAttribute(const Attribute& a, const Attribute& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          return SameTensor(x, std::get<Tensor>(b));
        } else {
          return x == std::get<T>(b);
        }
      },
      a);
}

std::string ValueName(const Graph& g, ValueId id) {
  return id == kNoValue ? std::string("<none>") : g.value(id).name;
}

// Structural equality by names: the same inputs, outputs, constants and nodes (in order),
// with the same types, attributes and data. Value ids may differ.
void ExpectSameGraph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.name(), b.name());
  EXPECT_EQ(a.opset(), b.opset());
  ASSERT_EQ(a.inputs().size(), b.inputs().size());
  for (size_t i = 0; i < a.inputs().size(); ++i) {
    EXPECT_EQ(a.value(a.inputs()[i]).name, b.value(b.inputs()[i]).name);
    EXPECT_EQ(a.value(a.inputs()[i]).type, b.value(b.inputs()[i]).type);
  }
  ASSERT_EQ(a.outputs().size(), b.outputs().size());
  for (size_t i = 0; i < a.outputs().size(); ++i) {
    EXPECT_EQ(a.value(a.outputs()[i]).name, b.value(b.outputs()[i]).name);
    EXPECT_EQ(a.value(a.outputs()[i]).type, b.value(b.outputs()[i]).type);
  }
  ASSERT_EQ(a.num_values(), b.num_values());
  for (const Value& va : a.values()) {
    auto id = b.FindValue(va.name);
    ASSERT_TRUE(id.has_value()) << va.name;
    const Value& vb = b.value(*id);
    EXPECT_EQ(va.type, vb.type) << va.name;
    ASSERT_EQ(va.is_constant(), vb.is_constant()) << va.name;
    if (va.is_constant()) {
      EXPECT_TRUE(SameTensor(*va.constant, *vb.constant)) << va.name;
    }
  }
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  for (NodeId n = 0; n < a.num_nodes(); ++n) {
    const Node& na = a.node(n);
    const Node& nb = b.node(n);
    EXPECT_EQ(na.name, nb.name);
    EXPECT_EQ(na.op_type, nb.op_type);
    EXPECT_EQ(na.domain, nb.domain);
    ASSERT_EQ(na.inputs.size(), nb.inputs.size()) << na.name;
    for (size_t i = 0; i < na.inputs.size(); ++i) {
      EXPECT_EQ(ValueName(a, na.inputs[i]), ValueName(b, nb.inputs[i])) << na.name;
    }
    ASSERT_EQ(na.outputs.size(), nb.outputs.size()) << na.name;
    for (size_t i = 0; i < na.outputs.size(); ++i) {
      EXPECT_EQ(ValueName(a, na.outputs[i]), ValueName(b, nb.outputs[i])) << na.name;
    }
    ASSERT_EQ(na.attributes.all().size(), nb.attributes.all().size()) << na.name;
    for (const auto& [key, value] : na.attributes.all()) {
      const Attribute* other = nb.attributes.Find(key);
      ASSERT_NE(other, nullptr) << na.name << "." << key;
      EXPECT_TRUE(SameAttribute(value, *other)) << na.name << "." << key;
    }
  }
}

// A small conv net built with the Graph API, with int, ints, float and string attributes,
// an absent optional input and an unused optional output.
Graph BuildGraph() {
  Graph g;
  g.set_name("small_net");
  g.set_opset(13);
  ValueId x = g.AddValue("x", {DType::kFloat32, {1, 2, 5, 5}});
  g.AddInput(x);
  Tensor w(DType::kFloat32, {4, 2, 3, 3});
  for (int64_t i = 0; i < w.num_elements(); ++i)
    w.data_as<float>()[i] = 0.01f * static_cast<float>(i);
  ValueId wv = g.AddConstant("conv.w", w);
  ValueId bv = g.AddConstant("conv.b", Tensor::FromVector<float>({4}, {0.1f, -0.2f, 0.3f, 0}));
  ValueId conv_out = g.AddValue("conv_out", {DType::kFloat32, {1, 4, 5, 5}});
  Node conv{"conv1", "Conv", "", {}, {x, wv, bv}, {conv_out}};
  conv.attributes.Set("kernel_shape", std::vector<int64_t>{3, 3});
  conv.attributes.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  conv.attributes.Set("strides", std::vector<int64_t>{1, 1});
  conv.attributes.Set("auto_pad", std::string("NOTSET"));
  EXPECT_TRUE(g.AddNode(conv).ok());
  ValueId leaky = g.AddValue("leaky", {DType::kFloat32, {1, 4, 5, 5}});
  Node relu{"leaky1", "LeakyRelu", "", {}, {conv_out}, {leaky}};
  relu.attributes.Set("alpha", 0.125f);
  EXPECT_TRUE(g.AddNode(relu).ok());
  ValueId hi = g.AddConstant("hi", Tensor::Scalar<float>(6.0f));
  ValueId clipped = g.AddValue("clipped", {DType::kFloat32, {1, 4, 5, 5}});
  EXPECT_TRUE(g.AddNode(Node{"clip1", "Clip", "", {}, {leaky, kNoValue, hi}, {clipped}}).ok());
  ValueId pooled = g.AddValue("pooled", {DType::kFloat32, {1, 4, 2, 2}});
  Node pool{"pool1", "MaxPool", "", {}, {clipped}, {pooled}};
  pool.attributes.Set("kernel_shape", std::vector<int64_t>{2, 2});
  pool.attributes.Set("strides", std::vector<int64_t>{2, 2});
  EXPECT_TRUE(g.AddNode(pool).ok());
  ValueId shape = g.AddConstant("flat_shape", Tensor::FromVector<int64_t>({2}, {1, 16}));
  ValueId flat = g.AddValue("flat", {DType::kFloat32, {1, 16}});
  EXPECT_TRUE(g.AddNode(Node{"reshape1", "Reshape", "", {}, {pooled, shape}, {flat}}).ok());
  g.AddOutput(flat);
  g.AddOutput(leaky);
  EXPECT_TRUE(g.Validate().ok());
  return g;
}

TEST(OnnxExport, RoundTrip) {
  Graph g = BuildGraph();
  auto bytes = ExportOnnxBytes(g);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto back = ImportOnnxBytes(*bytes, {}, "exported.onnx");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameGraph(g, *back);
  // And once more: export(import(export(g))) is byte-identical.
  auto again = ExportOnnxBytes(*back);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *bytes);
}

TEST(OnnxExport, ModelIsValidOnnx) {
  Graph g = BuildGraph();
  onnx::ModelProto model;
  ASSERT_TRUE(ExportOnnxModel(g, model).ok());
  EXPECT_EQ(model.ir_version(), 8);
  ASSERT_EQ(model.opset_import_size(), 1);
  EXPECT_EQ(model.opset_import(0).domain(), "");
  EXPECT_EQ(model.opset_import(0).version(), 13);
  EXPECT_EQ(model.graph().name(), "small_net");
  EXPECT_EQ(model.graph().initializer_size(), 4);
  for (const auto& init : model.graph().initializer()) EXPECT_TRUE(init.has_raw_data());
  EXPECT_EQ(model.graph().input_size(), 1);
  EXPECT_EQ(model.graph().output_size(), 2);
  EXPECT_EQ(model.graph().value_info_size(), 3);  // conv_out, clipped, pooled
  EXPECT_NO_THROW(onnx::checker::check_model(model));
}

TEST(OnnxExport, RoundTripOfImportedModel) {
  // Folded constants, a constant graph output and an input that is also an output.
  testing::ModelBuilder b(13);
  b.Input("x", onnx::TensorProto::FLOAT, {2, 3, 4});
  b.Output("y", onnx::TensorProto::FLOAT, {2, 12})
      .Output("x", onnx::TensorProto::FLOAT, {2, 3, 4})
      .Output("w", onnx::TensorProto::FLOAT, {2});
  b.FloatInit("w", {2}, {1.0f, 2.0f});
  b.Int64Init("zero", {}, {0}).Int64Init("axes0", {1}, {0}).Int64Init("minus_one", {1}, {-1});
  b.Node("Shape", {"x"}, {"shape"}, "shape");
  b.Node("Gather", {"shape", "zero"}, {"batch"}, "gather");
  b.Node("Unsqueeze", {"batch", "axes0"}, {"batch1"}, "unsqueeze");
  auto& concat = b.Node("Concat", {"batch1", "minus_one"}, {"new_shape"}, "concat");
  testing::AddIntAttr(concat, "axis", 0);
  b.Node("Reshape", {"x", "new_shape"}, {"y"}, "reshape");
  auto g = ImportOnnxBytes(b.Bytes());
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  onnx::ModelProto model;
  ASSERT_TRUE(ExportOnnxModel(*g, model).ok());
  EXPECT_NO_THROW(onnx::checker::check_model(model));
  auto back = ImportOnnxBytes(model.SerializeAsString());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameGraph(*g, *back);
}

TEST(OnnxExport, RoundTripOfZooModel) {
  auto g = BuildZooModel("mobilenetv2");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  onnx::ModelProto model;
  ASSERT_TRUE(ExportOnnxModel(*g, model).ok());
  if (g->opset() <= 17) {
    EXPECT_NO_THROW(onnx::checker::check_model(model));
  }
  auto back = ImportOnnxBytes(model.SerializeAsString(), {}, "mobilenetv2.onnx");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameGraph(*g, *back);
}

TEST(OnnxExport, FileAndDomains) {
  Graph g = BuildGraph();
  g.set_opset(21);
  // A node of another domain (a backend's custom op) gets that domain imported at version 1.
  ValueId x = g.inputs()[0];
  ValueId y = g.AddValue("custom_out", {DType::kFloat32, {1, 2, 5, 5}});
  ASSERT_TRUE(g.AddNode(Node{"custom1", "FancyOp", "com.vendor", {}, {x}, {y}}).ok());
  g.AddOutput(y);
  TempDir dir;
  ASSERT_TRUE(ExportOnnxFile(g, dir.File("m.onnx")).ok());
  onnx::ModelProto model;
  {
    std::ifstream in(dir.File("m.onnx"), std::ios::binary);
    ASSERT_TRUE(model.ParseFromIstream(&in));
  }
  EXPECT_EQ(model.ir_version(), 10);  // opset 21 came with IR version 10
  ASSERT_EQ(model.opset_import_size(), 2);
  EXPECT_EQ(model.opset_import(1).domain(), "com.vendor");
  EXPECT_EQ(model.opset_import(1).version(), 1);
  EXPECT_EQ(model.graph().node(model.graph().node_size() - 1).domain(), "com.vendor");

  EXPECT_EQ(ExportOnnxFile(g, dir.File("missing_dir/m.onnx")).code(), StatusCode::kIoError);
}

TEST(OnnxAttributes, RoundTripEveryKind) {
  const std::vector<Attribute> attributes = {
      Attribute(int64_t{-7}),
      Attribute(2.5f),
      Attribute(std::string("nearest")),
      Attribute(std::vector<int64_t>{1, -2, 3}),
      Attribute(std::vector<float>{0.5f, 1.5f}),
      Attribute(std::vector<std::string>{"a", "bc"}),
      Attribute(Tensor::FromVector<int64_t>({2}, {4, 5})),
      Attribute(std::vector<int64_t>{}),
  };
  for (const Attribute& a : attributes) {
    onnx::AttributeProto proto;
    ASSERT_TRUE(AttributeToProto("attr", a, proto).ok());
    EXPECT_EQ(proto.name(), "attr");
    auto back = AttributeFromProto(proto, "");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(SameAttribute(a, *back)) << AttributeTypeName(a);
  }
}

TEST(OnnxAttributes, RefusesWhatTheIrCannotHold) {
  onnx::AttributeProto graph;
  graph.set_name("then_branch");
  graph.set_type(onnx::AttributeProto::GRAPH);
  auto g = AttributeFromProto(graph, "");
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(g.status().message().find("then_branch"), std::string::npos);
  EXPECT_NE(g.status().message().find("GRAPH"), std::string::npos);

  onnx::AttributeProto sparse;
  sparse.set_name("s");
  sparse.set_type(onnx::AttributeProto::SPARSE_TENSOR);
  EXPECT_EQ(AttributeFromProto(sparse, "").status().code(), StatusCode::kUnsupported);

  // IR version 1 style: no type, the field says what it is.
  onnx::AttributeProto untyped;
  untyped.set_name("axis");
  untyped.set_i(3);
  auto i = AttributeFromProto(untyped, "");
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(std::get<int64_t>(*i), 3);

  onnx::AttributeProto empty;
  empty.set_name("nothing");
  EXPECT_EQ(AttributeFromProto(empty, "").status().code(), StatusCode::kInvalidModel);
}

}  // namespace
}  // namespace collage
