// Ops run as their function bodies (ONNX's and the model's own), and If nodes whose condition
// is known at load, run through a session on the reference kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "collage/session.h"
#include "onnx_test_util.h"

namespace collage {
namespace {

using testing::AddIntAttr;
using testing::ModelBuilder;

StatusOr<std::map<std::string, Tensor>> RunModel(const ModelBuilder& builder,
                                                 const std::map<std::string, Tensor>& inputs) {
  auto session = Session::LoadBytes(builder.Bytes());
  if (!session.ok()) return session.status();
  return (*session)->Run(inputs);
}

Status LoadStatus(const ModelBuilder& builder, bool shapes_per_run = true) {
  SessionOptions options;
  options.shapes_per_run = shapes_per_run;
  return Session::LoadBytes(builder.Bytes(), options).status();
}

void AddGraphAttr(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& g) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

void AddFloatAttr(onnx::NodeProto& node, const std::string& name, float value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

// A function of the model: y = LeakyRelu(a + b, alpha = the caller's `slope`).
void AddLeakySumFunction(onnx::ModelProto& model, const std::string& name = "LeakySum",
                         const std::string& inner_op = "LeakyRelu") {
  auto* f = model.add_functions();
  f->set_name(name);
  f->set_domain("custom");
  f->add_input("a");
  f->add_input("b");
  f->add_output("y");
  f->add_attribute("slope");
  auto* import = f->add_opset_import();
  import->set_domain("");
  import->set_version(13);
  if (inner_op != "LeakyRelu") {  // the body calls a function of the model's own domain
    auto* custom = f->add_opset_import();
    custom->set_domain("custom");
    custom->set_version(1);
  }
  auto* add = f->add_node();
  add->set_op_type("Add");
  add->add_input("a");
  add->add_input("b");
  add->add_output("sum");
  auto* leaky = f->add_node();
  leaky->set_op_type(inner_op);
  if (inner_op != "LeakyRelu") leaky->set_domain("custom");
  leaky->add_input("sum");
  if (inner_op != "LeakyRelu") leaky->add_input("sum");
  leaky->add_output("y");
  auto* alpha = leaky->add_attribute();
  alpha->set_name(inner_op == "LeakyRelu" ? "alpha" : "slope");
  alpha->set_ref_attr_name("slope");
  alpha->set_type(onnx::AttributeProto::FLOAT);
}

TEST(FunctionBodyTest, AnOnnxFunctionOpRunsAsItsBody) {
  // HannWindow has no kernel of its own in collage; ONNX defines it as a function.
  ModelBuilder b(17);
  b.Int64Init("size", {}, {8});
  b.Node("HannWindow", {"size"}, {"w"});
  b.Output("w", onnx::TensorProto::FLOAT, {8});
  auto out = RunModel(b, {});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const std::vector<float> w = out->at("w").ToVector<float>();
  ASSERT_EQ(w.size(), 8u);
  for (size_t n = 0; n < w.size(); ++n) {  // periodic window: 0.5 - 0.5 cos(2 pi n / N)
    EXPECT_NEAR(w[n], 0.5 - 0.5 * std::cos(2 * M_PI * static_cast<double>(n) / 8.0), 1e-6) << n;
  }
}

TEST(FunctionBodyTest, AContextDependentOnnxFunctionIsBuiltForTheInputs) {
  // NegativeLogLikelihoodLoss's body depends on whether weights are given.
  ModelBuilder b(13);
  b.Input("x", onnx::TensorProto::FLOAT, {2, 3});
  b.Input("t", onnx::TensorProto::INT64, {2});
  b.Input("weights", onnx::TensorProto::FLOAT, {3});
  auto& nll = b.Node("NegativeLogLikelihoodLoss", {"x", "t", "weights"}, {"loss"});
  auto* reduction = nll.add_attribute();
  reduction->set_name("reduction");
  reduction->set_type(onnx::AttributeProto::STRING);
  reduction->set_s("sum");
  b.Output("loss", onnx::TensorProto::FLOAT, {});
  auto out = RunModel(b, {{"x", Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})},
                          {"t", Tensor::FromVector<int64_t>({2}, {2, 0})},
                          {"weights", Tensor::FromVector<float>({3}, {0.5f, 1, 2})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // -(w[2] * x[0][2] + w[0] * x[1][0]) = -(2 * 3 + 0.5 * 4)
  EXPECT_FLOAT_EQ(out->at("loss").ToVector<float>()[0], -8.0f);
}

TEST(FunctionBodyTest, AModelFunctionRunsWithTheCallersAttributes) {
  ModelBuilder b(13);
  b.Domain("custom", 1);
  AddLeakySumFunction(b.model());
  b.Input("a", onnx::TensorProto::FLOAT, {3});
  b.Input("b", onnx::TensorProto::FLOAT, {3});
  AddFloatAttr(b.Node("LeakySum", {"a", "b"}, {"y"}, "with_slope", "custom"), "slope", 0.5f);
  b.Node("LeakySum", {"a", "b"}, {"z"}, "default_slope", "custom");
  b.Output("y", onnx::TensorProto::FLOAT, {3});
  b.Output("z", onnx::TensorProto::FLOAT, {3});
  auto out = RunModel(b, {{"a", Tensor::FromVector<float>({3}, {1, -2, -8})},
                          {"b", Tensor::FromVector<float>({3}, {1, 0, 4})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at("y").ToVector<float>(), (std::vector<float>{2, -1, -2}));
  // Without the attribute LeakyRelu's own default alpha (0.01) applies.
  const std::vector<float> z = out->at("z").ToVector<float>();
  EXPECT_FLOAT_EQ(z[0], 2.0f);
  EXPECT_FLOAT_EQ(z[1], -0.02f);
  EXPECT_FLOAT_EQ(z[2], -0.04f);
}

TEST(FunctionBodyTest, AFunctionThatCallsItselfIsRefused) {
  ModelBuilder b(13);
  b.Domain("custom", 1);
  AddLeakySumFunction(b.model(), "Loopy", "Loopy");
  b.Input("a", onnx::TensorProto::FLOAT, {3});
  b.Node("Loopy", {"a", "a"}, {"y"}, "loopy", "custom");
  b.Output("y", onnx::TensorProto::FLOAT, {3});
  const Status status = LoadStatus(b);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
  EXPECT_NE(status.message().find("calls itself"), std::string::npos) << status.ToString();
}

TEST(FunctionBodyTest, ABodyHoldingASubgraphIsRefused) {
  // Its If branch reads the body's own name "sum", which the calling graph also has.
  ModelBuilder b(13);
  b.Domain("custom", 1);
  AddLeakySumFunction(b.model());
  onnx::NodeProto* leaky = b.model().mutable_functions(0)->mutable_node(1);
  onnx::GraphProto branch;
  branch.set_name("branch");
  auto* relu = branch.add_node();
  relu->set_op_type("Relu");
  relu->add_input("sum");
  relu->add_output("branch_y");
  auto* branch_y = branch.add_output();
  branch_y->set_name("branch_y");
  branch_y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  leaky->Clear();
  leaky->set_op_type("If");
  leaky->add_input("flag");
  leaky->add_output("y");
  AddGraphAttr(*leaky, "then_branch", branch);
  AddGraphAttr(*leaky, "else_branch", branch);
  b.model().mutable_functions(0)->add_input("flag");
  b.Input("a", onnx::TensorProto::FLOAT, {3});
  b.Input("flag", onnx::TensorProto::BOOL, {});
  b.Node("Relu", {"a"}, {"sum"}, "outer_sum");
  b.Node("LeakySum", {"a", "a", "flag"}, {"y"}, "f", "custom");
  b.Output("y", onnx::TensorProto::FLOAT, {3});
  const Status status = LoadStatus(b, /*shapes_per_run=*/false);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
  EXPECT_NE(status.message().find("holds a subgraph"), std::string::npos) << status.ToString();
}

TEST(FunctionBodyTest, FunctionsThatDoubleAtEveryLevelAreRefusedBeforeExpanding) {
  // F0 is a Relu; each F(k) calls F(k-1) twice: F40 would be 2^40 nodes.
  ModelBuilder b(13);
  b.Domain("custom", 1);
  for (int k = 0; k <= 40; ++k) {
    auto* f = b.model().add_functions();
    f->set_name("F" + std::to_string(k));
    f->set_domain("custom");
    f->add_input("x");
    f->add_output("y");
    for (const char* domain : {"", "custom"}) {
      auto* import = f->add_opset_import();
      import->set_domain(domain);
      import->set_version(*domain ? 1 : 13);
    }
    auto* first = f->add_node();
    first->set_op_type(k == 0 ? "Relu" : "F" + std::to_string(k - 1));
    if (k > 0) first->set_domain("custom");
    first->add_input("x");
    first->add_output(k == 0 ? "y" : "h");
    if (k > 0) {
      auto* second = f->add_node();
      *second = *first;
      second->set_input(0, "h");
      second->set_output(0, "y");
    }
  }
  b.Input("x", onnx::TensorProto::FLOAT, {3});
  b.Node("F40", {"x"}, {"y"}, "huge", "custom");
  b.Output("y", onnx::TensorProto::FLOAT, {3});
  const Status status = LoadStatus(b);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
  EXPECT_NE(status.message().find("more than 1048576 nodes"), std::string::npos)
      << status.ToString();
}

TEST(FunctionBodyTest, ABodyReadingAnUndefinedValueIsRefused) {
  ModelBuilder b(13);
  b.Domain("custom", 1);
  AddLeakySumFunction(b.model());
  b.model().mutable_functions(0)->mutable_node(1)->set_input(0, "nowhere");
  b.Input("a", onnx::TensorProto::FLOAT, {3});
  b.Node("LeakySum", {"a", "a"}, {"y"}, "f", "custom");
  b.Output("y", onnx::TensorProto::FLOAT, {3});
  const Status status = LoadStatus(b);
  EXPECT_EQ(status.code(), StatusCode::kInvalidModel) << status.ToString();
  EXPECT_NE(status.message().find("nowhere"), std::string::npos) << status.ToString();
}

// then: y = x * 2 (reads x from the outer graph); else: y = x + c (c its own initializer).
onnx::GraphProto Branch(bool then_branch) {
  onnx::GraphProto g;
  g.set_name(then_branch ? "then" : "else");
  auto* c = g.add_initializer();
  c->set_name(then_branch ? "two" : "ten");
  c->set_data_type(onnx::TensorProto::FLOAT);
  c->add_float_data(then_branch ? 2.0f : 10.0f);
  auto* n = g.add_node();
  n->set_op_type(then_branch ? "Mul" : "Add");
  n->add_input("x");
  n->add_input(c->name());
  n->add_output(then_branch ? "then_y" : "else_y");
  auto* out = g.add_output();
  out->set_name(n->output(0));
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return g;
}

ModelBuilder IfModel(const std::string& condition_source) {
  ModelBuilder b(13);
  b.Input("x", onnx::TensorProto::FLOAT, {2, 3});
  if (condition_source == "shape") {
    // Exporters' static-shape checks: Shape(x)[1] > 2, folded at load.
    b.Node("Shape", {"x"}, {"shape"});
    b.Int64Init("one", {}, {1});
    b.Int64Init("limit", {}, {2});
    b.Node("Gather", {"shape", "one"}, {"width"});
    b.Node("Greater", {"width", "limit"}, {"cond"});
  } else if (condition_source == "input") {
    b.Input("cond", onnx::TensorProto::BOOL, {});
  } else {
    auto& constant = b.Node("Constant", {}, {"cond"});
    auto* value = constant.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
    value->mutable_t()->add_int32_data(condition_source == "true" ? 1 : 0);
  }
  auto& node = b.Node("If", {"cond"}, {"y"}, "choose");
  AddGraphAttr(node, "then_branch", Branch(true));
  AddGraphAttr(node, "else_branch", Branch(false));
  b.Output("y", onnx::TensorProto::FLOAT, {2, 3});
  return b;
}

TEST(ConstantIfTest, TheBranchTheConstantConditionTakesRuns) {
  const Tensor x = Tensor::FromVector<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  auto taken = RunModel(IfModel("true"), {{"x", x}});
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_EQ(taken->at("y").ToVector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  auto other = RunModel(IfModel("false"), {{"x", x}});
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(other->at("y").ToVector<float>(), (std::vector<float>{10, 11, 12, 13, 14, 15}));
}

TEST(ConstantIfTest, AConditionFoldedFromStaticShapesIsKnownAtLoad) {
  auto out =
      RunModel(IfModel("shape"), {{"x", Tensor::FromVector<float>({2, 3}, {0, 1, 2, 3, 4, 5})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at("y").ToVector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
}

TEST(ConstantIfTest, NestedIfsInlineToo) {
  ModelBuilder b = IfModel("true");
  // The then-branch becomes an If of its own, on a constant of the outer graph.
  onnx::GraphProto outer_then;
  outer_then.set_name("outer_then");
  auto* inner = outer_then.add_node();
  inner->set_op_type("If");
  inner->add_input("cond");
  inner->add_output("inner_y");
  AddGraphAttr(*inner, "then_branch", Branch(false));  // x + 10
  AddGraphAttr(*inner, "else_branch", Branch(true));
  auto* out = outer_then.add_output();
  out->set_name("inner_y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  *b.graph()->mutable_node(1)->mutable_attribute(0)->mutable_g() = outer_then;
  auto result = RunModel(b, {{"x", Tensor::FromVector<float>({2, 3}, {0, 1, 2, 3, 4, 5})}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->at("y").ToVector<float>(), (std::vector<float>{10, 11, 12, 13, 14, 15}));
}

TEST(ConstantIfTest, AConditionGivenAsAnInputTakesItsBranchAtEachRun) {
  auto session = Session::LoadBytes(IfModel("input").Bytes());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const Tensor x = Tensor::FromVector<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  for (bool cond : {true, false, true}) {
    auto out = (*session)->Run({{"x", x}, {"cond", Tensor::Scalar<bool>(cond)}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const std::vector<float> want =
        cond ? std::vector<float>{0, 2, 4, 6, 8, 10} : std::vector<float>{10, 11, 12, 13, 14, 15};
    EXPECT_EQ(out->at("y").ToVector<float>(), want);
  }
  EXPECT_EQ((*session)->num_compiled_shapes(), 2);  // one per condition
}

TEST(ConstantIfTest, AConditionComputedAtRunTimeIsRefusedByName) {
  // Without compiling per run, nothing binds the condition.
  const Status status = LoadStatus(IfModel("input"), /*shapes_per_run=*/false);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
  EXPECT_NE(status.message().find("If node 'choose'"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("computed at run time"), std::string::npos) << status.ToString();
}

TEST(ConstantIfTest, ABranchWithTheWrongOutputCountIsRefused) {
  ModelBuilder b = IfModel("true");
  b.graph()->mutable_node(1)->mutable_attribute(0)->mutable_g()->add_output()->set_name("two");
  const Status status = LoadStatus(b);
  EXPECT_EQ(status.code(), StatusCode::kInvalidModel) << status.ToString();
}

}  // namespace
}  // namespace collage
