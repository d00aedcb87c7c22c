// Models whose control flow or shapes only a run decides (If on data, Loop, Scan, NonZero of a
// computed value): they run in segments compiled per run, with the control flow between them,
// and give what the ONNX spec says.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "collage/available_backends.h"
#include "collage/session.h"
#include "../onnx/onnx_test_util.h"

namespace collage {
namespace {

using testing::AddIntAttr;
using testing::AddIntsAttr;
using testing::ModelBuilder;
using testing::SetTensorType;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

void AddGraphAttr(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& g) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

// A body graph built like a model's: typed inputs and outputs, nodes.
class BodyBuilder {
 public:
  explicit BodyBuilder(const std::string& name) { graph_.set_name(name); }
  BodyBuilder& Input(const std::string& name, int32_t type, const std::vector<testing::Dim>& dims) {
    auto* in = graph_.add_input();
    in->set_name(name);
    SetTensorType(in->mutable_type(), type, dims);
    return *this;
  }
  BodyBuilder& Output(const std::string& name, int32_t type, const std::vector<testing::Dim>& dims) {
    auto* out = graph_.add_output();
    out->set_name(name);
    SetTensorType(out->mutable_type(), type, dims);
    return *this;
  }
  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs) {
    auto* n = graph_.add_node();
    n->set_op_type(op);
    n->set_name(outputs.front() + "_node");
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  BodyBuilder& FloatConstant(const std::string& name, float value) {
    auto* t = graph_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(value);
    return *this;
  }
  const onnx::GraphProto& graph() const { return graph_; }

 private:
  onnx::GraphProto graph_;
};

Tensor Floats(Shape shape, std::vector<float> values) {
  return Tensor::FromVector<float>(std::move(shape), values);
}

StatusOr<std::map<std::string, Tensor>> RunModel(const ModelBuilder& b,
                                            const std::map<std::string, Tensor>& inputs,
                                            const std::string& backend = "native") {
  SessionOptions options;
  options.backend = backend;
  auto session = Session::LoadBytes(b.Bytes(), options);
  if (!session.ok()) return session.status();
  return (*session)->Run(inputs);
}

// acc_k = acc_0 + x * (0 + 1 + ... + k-1) for k = 1..trip; gives the last and every one of
// them. The body reads x from the main graph.
ModelBuilder LoopModel() {
  ModelBuilder b(13);
  b.Input("x", kFloat, {"n"}).Input("trip", kInt64, {}).Input("acc0", kFloat, {"n"});
  b.Output("acc_last", kFloat, {"n"}).Output("acc_all", kFloat, {"k", "n"});
  BodyBuilder body("accumulate");
  body.Input("i", kInt64, {}).Input("c", kBool, {}).Input("acc", kFloat, {"n"});
  AddIntAttr(body.Node("Cast", {"i"}, {"fi"}), "to", kFloat);
  body.Node("Mul", {"x", "fi"}, {"step"});
  body.Node("Add", {"acc", "step"}, {"acc_out"});
  body.Node("Identity", {"c"}, {"c_out"});
  body.Node("Identity", {"acc_out"}, {"acc_row"});
  body.Output("c_out", kBool, {}).Output("acc_out", kFloat, {"n"}).Output("acc_row", kFloat, {"n"});
  auto& loop = b.Node("Loop", {"trip", "", "acc0"}, {"acc_last", "acc_all"}, "loop");
  AddGraphAttr(loop, "body", body.graph());
  return b;
}

TEST(StagedModelTest, ALoopCarriesValuesAndStacksItsScanOutputs) {
  const ModelBuilder b = LoopModel();
  auto session = Session::LoadBytes(b.Bytes());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_TRUE((*session)->compiles_per_run());
  for (int64_t trip : {4, 2}) {
    auto out = (*session)->Run({{"x", Floats({3}, {1, 2, 3})},
                                {"trip", Tensor::Scalar<int64_t>(trip)},
                                {"acc0", Floats({3}, {10, 20, 30})}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    std::vector<float> all;
    std::vector<float> acc = {10, 20, 30};
    for (int64_t i = 0; i < trip; ++i) {
      for (int j = 0; j < 3; ++j) acc[static_cast<size_t>(j)] += static_cast<float>((j + 1) * i);
      all.insert(all.end(), acc.begin(), acc.end());
    }
    EXPECT_EQ(out->at("acc_last").ToVector<float>(), acc);
    EXPECT_EQ(out->at("acc_all").shape(), (Shape{trip, 3}));
    EXPECT_EQ(out->at("acc_all").ToVector<float>(), all);
  }
}

TEST(StagedModelTest, ALoopOfNoIterationsGivesItsStartAndAnEmptyScan) {
  const Tensor acc0 = Floats({2}, {5, 6});
  auto out = RunModel(LoopModel(), {{"x", Floats({2}, {1, 2})},
                               {"trip", Tensor::Scalar<int64_t>(0)},
                               {"acc0", acc0}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at("acc_last").ToVector<float>(), (std::vector<float>{5, 6}));
  // The input handed back is a copy: the caller owns its outputs.
  EXPECT_NE(out->at("acc_last").data(), acc0.data());
  EXPECT_EQ(out->at("acc_all").num_elements(), 0);
}

// while (sum(v) < limit) { v = sum(v) > 10 ? v * 0.5 + 8 : v + 1 }: the condition and the If
// inside the body are computed from the loop's own data.
ModelBuilder WhileWithIfModel() {
  ModelBuilder b(13);
  b.Input("v0", kFloat, {2}).Input("limit", kFloat, {});
  b.Output("v_last", kFloat, {2}).Output("steps", kInt64, {"k"});
  b.Node("ReduceSum", {"v0"}, {"s0"}, "first_sum");
  b.Node("Less", {"s0", "limit"}, {"go"}, "first_check");
  BodyBuilder then_branch("halve");
  then_branch.FloatConstant("half", 0.5f).FloatConstant("eight", 8.0f);
  then_branch.Node("Mul", {"v", "half"}, {"halved"});
  then_branch.Node("Add", {"halved", "eight"}, {"t_out"});
  then_branch.Output("t_out", kFloat, {2});
  BodyBuilder else_branch("increment");
  else_branch.FloatConstant("one", 1.0f);
  else_branch.Node("Add", {"v", "one"}, {"e_out"});
  else_branch.Output("e_out", kFloat, {2});
  BodyBuilder body("step");
  body.Input("i", kInt64, {}).Input("c", kBool, {}).Input("v", kFloat, {2});
  body.FloatConstant("ten", 10.0f);
  body.Node("ReduceSum", {"v"}, {"s"});
  body.Node("Greater", {"s", "ten"}, {"big"});
  auto& choose = body.Node("If", {"big"}, {"v_out"});
  AddGraphAttr(choose, "then_branch", then_branch.graph());
  AddGraphAttr(choose, "else_branch", else_branch.graph());
  body.Node("ReduceSum", {"v_out"}, {"s_out"});
  body.Node("Less", {"s_out", "limit"}, {"c_out"});
  body.Node("Identity", {"i"}, {"i_row"});
  body.Output("c_out", kBool, {}).Output("v_out", kFloat, {2}).Output("i_row", kInt64, {});
  auto& loop = b.Node("Loop", {"", "go", "v0"}, {"v_last", "steps"}, "while");
  AddGraphAttr(loop, "body", body.graph());
  return b;
}

TEST(StagedModelTest, AWhileLoopWithAnIfOnItsDataStopsWhereItsConditionSays) {
  const ModelBuilder b = WhileWithIfModel();
  for (float limit : {3.0f, 30.0f}) {
    std::vector<float> v = {1, 0};
    std::vector<int64_t> steps;
    for (int64_t i = 0; v[0] + v[1] < limit; ++i) {
      if (v[0] + v[1] > 10) {
        v = {v[0] * 0.5f + 8, v[1] * 0.5f + 8};
      } else {
        v = {v[0] + 1, v[1] + 1};
      }
      steps.push_back(i);
    }
    auto out = RunModel(b, {{"v0", Floats({2}, {1, 0})}, {"limit", Tensor::Scalar<float>(limit)}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(out->at("v_last").ToVector<float>(), v) << "limit " << limit;
    EXPECT_EQ(out->at("steps").ToVector<int64_t>(), steps) << "limit " << limit;
  }
}

// state += a_t + b_(T-1-t); each new state is a column of the output (scan_output_axes 1).
ModelBuilder ScanModel() {
  ModelBuilder b(13);
  b.Input("s0", kFloat, {2}).Input("a", kFloat, {"t", 2}).Input("b", kFloat, {2, "t"});
  b.Output("s_last", kFloat, {2}).Output("history", kFloat, {2, "t"});
  BodyBuilder body("accumulate");
  body.Input("s", kFloat, {2}).Input("a_t", kFloat, {2}).Input("b_t", kFloat, {2});
  body.Node("Add", {"s", "a_t"}, {"partial"});
  body.Node("Add", {"partial", "b_t"}, {"s_out"});
  body.Node("Identity", {"s_out"}, {"row"});
  body.Output("s_out", kFloat, {2}).Output("row", kFloat, {2});
  auto& scan = b.Node("Scan", {"s0", "a", "b"}, {"s_last", "history"}, "scan");
  AddGraphAttr(scan, "body", body.graph());
  AddIntAttr(scan, "num_scan_inputs", 2);
  AddIntsAttr(scan, "scan_input_axes", {0, 1});
  AddIntsAttr(scan, "scan_input_directions", {0, 1});
  AddIntsAttr(scan, "scan_output_axes", {1});
  return b;
}

TEST(StagedModelTest, AScanSlicesAlongItsAxesInItsDirections) {
  // a: 3 rows of 2; b: 2 rows of 3, read column by column from the last.
  auto out = RunModel(ScanModel(), {{"s0", Floats({2}, {0, 0})},
                               {"a", Floats({3, 2}, {1, 2, 3, 4, 5, 6})},
                               {"b", Floats({2, 3}, {10, 20, 30, 40, 50, 60})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // t=0: a=(1,2) b=(30,60) → (31,62); t=1: a=(3,4) b=(20,50) → (54,116); t=2: (5,6)+(10,40).
  EXPECT_EQ(out->at("s_last").ToVector<float>(), (std::vector<float>{69, 162}));
  EXPECT_EQ(out->at("history").shape(), (Shape{2, 3}));
  EXPECT_EQ(out->at("history").ToVector<float>(), (std::vector<float>{31, 54, 69, 62, 116, 162}));
}

// The positive values of a computed tensor, doubled: a shape only the data of the run decides.
ModelBuilder PositivesModel() {
  ModelBuilder b(13);
  b.Input("x", kFloat, {6}).Output("y", kFloat, {"k"});
  b.FloatInit("zero", {}, {0}).FloatInit("two", {}, {2});
  b.Node("Sub", {"x", "two"}, {"shifted"}, "shift");
  b.Node("Greater", {"shifted", "zero"}, {"positive"}, "check");
  b.Node("NonZero", {"positive"}, {"where"}, "find");
  b.Int64Init("axes", {1}, {0});
  b.Node("Squeeze", {"where", "axes"}, {"index"}, "flatten");
  b.Node("Gather", {"shifted", "index"}, {"picked"}, "pick");
  b.Node("Mul", {"picked", "two"}, {"y"}, "double");
  return b;
}

TEST(StagedModelTest, ANonZeroOfAComputedValueSetsTheShapesAfterItAtEachRun) {
  std::vector<std::string> backends = {"native"};
  for (const BackendInfo& info : AvailableBackends()) {
    if (info.name == "onednn" || info.name == "openvino") backends.push_back(info.name);
  }
  for (const std::string& backend : backends) {
    SessionOptions options;
    options.backend = backend;
    auto session = Session::LoadBytes(PositivesModel().Bytes(), options);
    ASSERT_TRUE(session.ok()) << backend << ": " << session.status().ToString();
    auto few = (*session)->Run({{"x", Floats({6}, {0, 3, 1, 5, 2, 0})}});
    ASSERT_TRUE(few.ok()) << backend << ": " << few.status().ToString();
    EXPECT_EQ(few->at("y").ToVector<float>(), (std::vector<float>{2, 6})) << backend;
    auto many = (*session)->Run({{"x", Floats({6}, {4, 4, 4, 4, 4, 9})}});
    ASSERT_TRUE(many.ok()) << backend << ": " << many.status().ToString();
    EXPECT_EQ(many->at("y").ToVector<float>(), (std::vector<float>{4, 4, 4, 4, 4, 14})) << backend;
    auto none = (*session)->Run({{"x", Floats({6}, {0, 0, 0, 0, 0, 0})}});
    ASSERT_TRUE(none.ok()) << backend << ": " << none.status().ToString();
    EXPECT_EQ(none->at("y").num_elements(), 0) << backend;
  }
}

// An If on a shape check holding another If on a shape check (as exporters nest them): both
// fold, so the model compiles per input shape with the branches inlined, not in stages.
TEST(StagedModelTest, NestedIfsOnShapesAreInlinedNotStaged) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {"n", 3}).Output("y", kFloat, {"n", 3});
  b.Int64Init("zero", {}, {0}).Int64Init("one", {}, {1});
  b.Int64Init("two", {}, {2}).Int64Init("three", {}, {3});
  b.Node("Shape", {"x"}, {"shape"}, "shape");
  b.Node("Gather", {"shape", "zero"}, {"rows"}, "rows");
  b.Node("Equal", {"rows", "two"}, {"two_rows"}, "check_rows");
  BodyBuilder relu("relu"), neg("neg"), inner_then("inner"), abs_branch("abs");
  relu.Node("Relu", {"x"}, {"r"});
  relu.Output("r", kFloat, {"n", 3});
  neg.Node("Neg", {"x"}, {"g"});
  neg.Output("g", kFloat, {"n", 3});
  inner_then.Node("Shape", {"x"}, {"inner_shape"});
  inner_then.Node("Gather", {"inner_shape", "one"}, {"cols"});
  inner_then.Node("Equal", {"cols", "three"}, {"three_cols"});
  auto& inner = inner_then.Node("If", {"three_cols"}, {"t"});
  AddGraphAttr(inner, "then_branch", relu.graph());
  AddGraphAttr(inner, "else_branch", neg.graph());
  inner_then.Output("t", kFloat, {"n", 3});
  abs_branch.Node("Abs", {"x"}, {"a"});
  abs_branch.Output("a", kFloat, {"n", 3});
  auto& outer = b.Node("If", {"two_rows"}, {"y"}, "choose");
  AddGraphAttr(outer, "then_branch", inner_then.graph());
  AddGraphAttr(outer, "else_branch", abs_branch.graph());
  auto session = Session::LoadBytes(b.Bytes());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  EXPECT_EQ((*session)->DescribePlacement().find("staged"), std::string::npos)
      << (*session)->DescribePlacement();
  auto two = (*session)->Run({{"x", Floats({2, 3}, {-1, 2, -3, 4, -5, 6})}});
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->at("y").ToVector<float>(), (std::vector<float>{0, 2, 0, 4, 0, 6}));
  auto one = (*session)->Run({{"x", Floats({1, 3}, {-1, 2, -3})}});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->at("y").ToVector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(StagedModelTest, OptimizingIsRefusedWithTheReason) {
  auto session = Session::LoadBytes(LoopModel().Bytes());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const Status status = (*session)->Optimize(OptimizeOptions{});
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
  EXPECT_NE(status.message().find("control flow"), std::string::npos) << status.ToString();
  EXPECT_NE((*session)->DescribePlacement().find("Loop node 'loop'"), std::string::npos)
      << (*session)->DescribePlacement();
  // A plan too (before the file is even read: no plan can place such a model).
  SessionOptions with_plan;
  with_plan.plan_path = "no_such.plan";
  const Status plan = Session::LoadBytes(LoopModel().Bytes(), with_plan).status();
  EXPECT_EQ(plan.code(), StatusCode::kUnsupported) << plan.ToString();
  EXPECT_NE(plan.message().find("running a plan needs one graph"), std::string::npos)
      << plan.ToString();
}

TEST(StagedModelTest, ALoopWithNeitherTripCountNorConditionIsAnError) {
  ModelBuilder b = LoopModel();
  b.graph()->mutable_node(0)->set_input(0, "");
  auto out = RunModel(b, {{"x", Floats({1}, {1})},
                     {"trip", Tensor::Scalar<int64_t>(1)},
                     {"acc0", Floats({1}, {1})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("would run forever"), std::string::npos)
      << out.status().ToString();
}

TEST(StagedModelTest, ALoopThatDoesNotStopWithinTheLimitEndsTheRun) {
  SessionOptions options;
  options.max_loop_iterations = 100;
  auto session = Session::LoadBytes(LoopModel().Bytes(), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const std::map<std::string, Tensor> feeds = {{"x", Floats({1}, {1})},
                                               {"trip", Tensor::Scalar<int64_t>(int64_t{1} << 40)},
                                               {"acc0", Floats({1}, {1})}};
  auto out = (*session)->Run(feeds);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("Loop node 'loop' ran 100 iterations without stopping"),
            std::string::npos)
      << out.status().ToString();
  // Within the limit, the same session runs.
  std::map<std::string, Tensor> fewer = feeds;
  fewer["trip"] = Tensor::Scalar<int64_t>(100);
  EXPECT_TRUE((*session)->Run(fewer).ok());
}

TEST(StagedModelTest, ATripCountOfTheWrongTypeIsNamed) {
  ModelBuilder b = LoopModel();
  b.graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
  auto out = RunModel(b, {{"x", Floats({1}, {1})},
                     {"trip", Tensor::Scalar<float>(1)},
                     {"acc0", Floats({1}, {1})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("trip count 'trip' must be one int64 value"),
            std::string::npos)
      << out.status().ToString();
}

TEST(StagedModelTest, AnUnsupportedOpInsideABodyIsNamedAtLoad) {
  ModelBuilder b = LoopModel();
  auto* body = b.graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  body->mutable_node(1)->set_op_type("NoSuchOp");
  body->mutable_node(1)->set_domain("custom.ops");
  b.Domain("custom.ops", 1);
  const Status status = Session::LoadBytes(b.Bytes()).status();
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
  EXPECT_NE(status.message().find("custom.ops::NoSuchOp"), std::string::npos) << status.ToString();
}

TEST(StagedModelTest, AFixedShapeThatContradictsAStaticDimIsRefused) {
  SessionOptions options;
  options.input_shapes["s0"] = Shape{3};  // the model says 2
  const Status status = Session::LoadBytes(ScanModel().Bytes(), options).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("contradicts input 's0'"), std::string::npos) << status.ToString();
  options.input_shapes["s0"] = Shape{2};
  options.input_shapes["a"] = Shape{5, 2};  // a dynamic dim: fine
  EXPECT_TRUE(Session::LoadBytes(ScanModel().Bytes(), options).ok());
}

TEST(StagedModelTest, AWrongInputShapeIsRefusedBeforeAnythingRuns) {
  auto out = RunModel(ScanModel(), {{"s0", Floats({3}, {0, 0, 0})},
                               {"a", Floats({1, 2}, {1, 2})},
                               {"b", Floats({2, 1}, {1, 2})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << out.status().ToString();
  EXPECT_NE(out.status().message().find("s0"), std::string::npos) << out.status().ToString();
}

// x [4 x 2] split into rows (SplitToSequence without split, keepdims 0); a sequence made of
// the first and last rows, then the second inserted at position 1 and the last erased; its
// length; the row at -1; the rows stacked along a new axis 1; and x split into pieces of 3
// rows (the last of 1), concatenated back.
ModelBuilder SequencesModel() {
  ModelBuilder b(13);
  b.Input("x", kFloat, {4, 2});
  b.Output("count", kInt64, {}).Output("last", kFloat, {2}).Output("stacked", kFloat, {2, 3});
  b.Output("again", kFloat, {4, 2});
  AddIntAttr(b.Node("SplitToSequence", {"x"}, {"rows"}, "rows"), "keepdims", 0);
  b.Int64Init("zero", {}, {0}).Int64Init("one", {}, {1}).Int64Init("minus_one", {}, {-1});
  b.Int64Init("three", {}, {3});
  b.Node("SequenceAt", {"rows", "zero"}, {"row0"}, "first");
  b.Node("SequenceAt", {"rows", "minus_one"}, {"row3"}, "last_row");
  b.Node("SequenceAt", {"rows", "one"}, {"row1"}, "second");
  b.Node("SequenceConstruct", {"row0", "row3"}, {"pair"}, "pair");
  b.Node("SequenceInsert", {"pair", "row1", "one"}, {"triple"}, "insert");
  b.Node("SequenceInsert", {"triple", "row3"}, {"four"}, "append");
  b.Node("SequenceErase", {"four"}, {"three_rows"}, "erase");
  b.Node("SequenceLength", {"three_rows"}, {"count"}, "length");
  b.Node("SequenceAt", {"three_rows", "minus_one"}, {"last"}, "at_end");
  auto& stack = b.Node("ConcatFromSequence", {"three_rows"}, {"stacked"}, "stack");
  AddIntAttr(stack, "axis", 1);
  AddIntAttr(stack, "new_axis", 1);
  b.Node("SplitToSequence", {"x", "three"}, {"pieces"}, "pieces");
  AddIntAttr(b.Node("ConcatFromSequence", {"pieces"}, {"again"}, "join"), "axis", 0);
  return b;
}

TEST(StagedModelTest, TheSequenceOpsMakeAndReadSequencesAsTheSpecSays) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  auto out = RunModel(SequencesModel(), {{"x", Floats({4, 2}, x)}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at("count").ToVector<int64_t>(), (std::vector<int64_t>{3}));
  EXPECT_EQ(out->at("last").ToVector<float>(), (std::vector<float>{7, 8}));
  // Rows 0, 1, 3 as the columns of a 2 x 3.
  EXPECT_EQ(out->at("stacked").shape(), (Shape{2, 3}));
  EXPECT_EQ(out->at("stacked").ToVector<float>(), (std::vector<float>{1, 3, 7, 2, 4, 8}));
  EXPECT_EQ(out->at("again").ToVector<float>(), x);
}

TEST(StagedModelTest, ASequencePositionOutOfRangeIsAnError) {
  ModelBuilder b = SequencesModel();
  b.graph()->mutable_initializer(2)->set_int64_data(0, -5);  // minus_one → -5 of 4 rows
  auto out = RunModel(b, {{"x", Floats({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("position -5 is outside [-4, 3]"), std::string::npos)
      << out.status().ToString();
}

TEST(StagedModelTest, ASequenceInputOfTheModelIsRefusedByName) {
  ModelBuilder b(13);
  auto* in = b.graph()->add_input();
  in->set_name("items");
  SetTensorType(in->mutable_type()->mutable_sequence_type()->mutable_elem_type(), kFloat, {2});
  b.Output("n", kInt64, {});
  b.Node("SequenceLength", {"items"}, {"n"}, "length");
  const Status status = Session::LoadBytes(b.Bytes()).status();
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.ToString();
  EXPECT_NE(status.message().find("input 'items' is a sequence"), std::string::npos)
      << status.ToString();
}

}  // namespace
}  // namespace collage
