// Sessions on models whose shapes are known only at each run: dynamic input dims, and shapes
// computed from the values of small inputs. One session runs at several shapes, each run
// against a session loaded with that shape fixed on the reference kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../onnx/onnx_test_util.h"
#include "collage/random_tensor.h"
#include "collage/session.h"

namespace collage {
namespace {

using testing::AddIntAttr;
using testing::AddIntsAttr;
using testing::ModelBuilder;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;

// A convolutional net on images of any batch and size: Conv → Relu → MaxPool → Conv →
// GlobalAveragePool → Flatten → Gemm.
ModelBuilder Cnn() {
  ModelBuilder b(13);
  b.Input("image", kFloat, {"batch", 3, "height", "width"});
  std::vector<float> w1(8 * 3 * 3 * 3), w2(4 * 8 * 3 * 3), fc(4 * 5);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.05f * static_cast<float>(i % 7) - 0.15f;
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = 0.03f * static_cast<float>(i % 5) - 0.06f;
  for (size_t i = 0; i < fc.size(); ++i) fc[i] = 0.1f * static_cast<float>(i % 3) - 0.1f;
  b.FloatInit("w1", {8, 3, 3, 3}, w1).FloatInit("w2", {4, 8, 3, 3}, w2).FloatInit("fc", {4, 5}, fc);
  AddIntsAttr(b.Node("Conv", {"image", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r1"});
  auto& pool = b.Node("MaxPool", {"r1"}, {"p1"});
  AddIntsAttr(pool, "kernel_shape", {2, 2});
  AddIntsAttr(pool, "strides", {2, 2});
  b.Node("Conv", {"p1", "w2"}, {"c2"});
  b.Node("GlobalAveragePool", {"c2"}, {"g"});
  b.Node("Flatten", {"g"}, {"f"});
  b.Node("Gemm", {"f", "fc"}, {"logits"});
  b.Output("logits", kFloat, {"batch", 5});
  return b;
}

// Self-attention over sequences of any batch and length, heads split with a Reshape whose
// target shape is computed from Shape(x), as exporters write it.
ModelBuilder Attention() {
  ModelBuilder b(13);
  b.Input("x", kFloat, {"batch", "seq", 8});
  std::vector<float> wq(64), wk(64);
  for (size_t i = 0; i < 64; ++i) {
    wq[i] = 0.02f * static_cast<float>(i % 9) - 0.08f;
    wk[i] = 0.03f * static_cast<float>(i % 5) - 0.05f;
  }
  b.FloatInit("wq", {8, 8}, wq).FloatInit("wk", {8, 8}, wk);
  b.Int64Init("first_two", {1}, {0}).Int64Init("two", {1}, {2}).Int64Init("heads", {2}, {2, 4});
  b.Node("MatMul", {"x", "wq"}, {"q"});
  b.Node("MatMul", {"x", "wk"}, {"k"});
  b.Node("Shape", {"x"}, {"shape"});
  auto& slice = b.Node("Slice", {"shape", "first_two", "two"}, {"batch_seq"});
  (void)slice;
  auto& concat = b.Node("Concat", {"batch_seq", "heads"}, {"split_shape"});
  AddIntAttr(concat, "axis", 0);
  b.Node("Reshape", {"q", "split_shape"}, {"q4"});
  b.Node("Reshape", {"k", "split_shape"}, {"k4"});
  AddIntsAttr(b.Node("Transpose", {"q4"}, {"qh"}), "perm", {0, 2, 1, 3});
  AddIntsAttr(b.Node("Transpose", {"k4"}, {"kh"}), "perm", {0, 2, 3, 1});
  b.Node("MatMul", {"qh", "kh"}, {"scores"});
  AddIntAttr(b.Node("Softmax", {"scores"}, {"attention"}), "axis", -1);
  b.Output("attention", kFloat, {"batch", 2, "seq", "seq"});
  return b;
}

std::unique_ptr<Session> Load(const ModelBuilder& b, SessionOptions options = {}) {
  auto session = Session::LoadBytes(b.Bytes(), options);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  return session.ok() ? std::move(session).value() : nullptr;
}

// The model loaded with `shapes` fixed, run on the reference kernels.
std::map<std::string, Tensor> Reference(const ModelBuilder& b,
                                        const std::map<std::string, Tensor>& inputs) {
  SessionOptions fixed;
  fixed.shapes_per_run = false;
  for (const auto& [name, t] : inputs) fixed.input_shapes[name] = t.shape();
  auto session = Session::LoadBytes(b.Bytes(), fixed);
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  auto out = (*session)->Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : std::map<std::string, Tensor>{};
}

Tensor Random(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  return RandomTensor(DType::kFloat32, shape, rng);
}

void ExpectSameOutputs(const std::map<std::string, Tensor>& got,
                       const std::map<std::string, Tensor>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, expected] : want) {
    const Tensor& actual = got.at(name);
    ASSERT_EQ(actual.shape(), expected.shape()) << name;
    const std::vector<float> a = actual.ToVector<float>(), e = expected.ToVector<float>();
    for (size_t i = 0; i < e.size(); ++i) EXPECT_NEAR(a[i], e[i], tolerance) << name << " " << i;
  }
}

void RunAtShapes(const ModelBuilder& model, const std::string& input,
                 const std::vector<Shape>& shapes, const std::string& backend) {
  SessionOptions options;
  options.backend = backend;
  std::unique_ptr<Session> session = Load(model, options);
  ASSERT_NE(session, nullptr);
  EXPECT_TRUE(session->compiles_per_run());
  uint32_t seed = 1;
  for (const Shape& shape : shapes) {
    const std::map<std::string, Tensor> inputs = {{input, Random(shape, seed++)}};
    auto out = session->Run(inputs);
    ASSERT_TRUE(out.ok()) << ShapeToString(shape) << ": " << out.status().ToString();
    ExpectSameOutputs(*out, Reference(model, inputs), 1e-4);
  }
  EXPECT_EQ(session->num_compiled_shapes(), static_cast<int>(shapes.size()));
}

TEST(ShapesPerRunTest, ACnnRunsAtThreeImageSizesOnOneSession) {
  RunAtShapes(Cnn(), "image", {{1, 3, 16, 16}, {2, 3, 24, 20}, {3, 3, 9, 31}}, "native");
}

TEST(ShapesPerRunTest, ACnnRunsAtThreeImageSizesOnAnotherBackend) {
  RunAtShapes(Cnn(), "image", {{1, 3, 16, 16}, {2, 3, 24, 20}, {3, 3, 9, 31}}, "onednn");
}

TEST(ShapesPerRunTest, AnAttentionBlockRunsAtThreeSequenceLengths) {
  RunAtShapes(Attention(), "x", {{1, 5, 8}, {2, 17, 8}, {1, 1, 8}}, "native");
}

TEST(ShapesPerRunTest, InputsAndOutputsShowDynamicDimsAsMinusOne) {
  std::unique_ptr<Session> session = Load(Cnn());
  ASSERT_NE(session, nullptr);
  ASSERT_EQ(session->inputs().size(), 1u);
  EXPECT_EQ(session->inputs()[0].shape, (Shape{-1, 3, -1, -1}));
  EXPECT_EQ(session->outputs()[0].shape, (Shape{-1, 5}));
  EXPECT_EQ(session->num_compiled_shapes(), 0);
}

TEST(ShapesPerRunTest, ARunAtAKnownShapeReusesItsCompiledModelAndTheCacheIsBounded) {
  SessionOptions options;
  options.shape_cache_size = 2;
  std::unique_ptr<Session> session = Load(Cnn(), options);
  ASSERT_NE(session, nullptr);
  auto run = [&](Shape shape) {
    auto out = session->Run({{"image", Random(shape, 7)}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
  };
  run({1, 3, 8, 8});
  run({1, 3, 8, 8});
  EXPECT_EQ(session->num_compiled_shapes(), 1);
  run({1, 3, 12, 8});
  run({1, 3, 8, 12});
  EXPECT_EQ(session->num_compiled_shapes(), 2);  // the oldest was dropped
  run({1, 3, 8, 8});                             // and compiles again
  EXPECT_EQ(session->num_compiled_shapes(), 2);
}

// y = Reshape(x, shape) and TopK(y, k) with `shape` and `k` given at each run.
ModelBuilder ShapesFromInputValues() {
  ModelBuilder b(13);
  b.Input("x", kFloat, {12});
  b.Input("shape", kInt64, {2});
  b.Input("k", kInt64, {1});
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Node("TopK", {"y", "k"}, {"top", "where"});
  b.Output("y", kFloat, {-1, -1});
  b.Output("top", kFloat, {-1, -1});
  b.Output("where", kInt64, {-1, -1});
  return b;
}

TEST(ShapesPerRunTest, ShapesComputedFromInputValuesAreKnownAtEachRun) {
  std::unique_ptr<Session> session = Load(ShapesFromInputValues());
  ASSERT_NE(session, nullptr);
  EXPECT_TRUE(session->compiles_per_run());
  std::vector<float> values(12);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>((i * 5) % 12);
  const Tensor x = Tensor::FromVector<float>({12}, values);
  for (const auto& [rows, k] : std::vector<std::pair<int64_t, int64_t>>{{3, 2}, {2, 6}, {4, 1}}) {
    const std::map<std::string, Tensor> inputs = {
        {"x", x},
        {"shape", Tensor::FromVector<int64_t>({2}, {rows, 12 / rows})},
        {"k", Tensor::FromVector<int64_t>({1}, {k})}};
    auto out = session->Run(inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(out->at("top").shape(), (Shape{rows, k}));
    // Each row's k largest, largest first, and where they are in the row.
    std::vector<float> top;
    std::vector<int64_t> where;
    const int64_t columns = 12 / rows;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<int64_t> order(static_cast<size_t>(columns));
      for (int64_t c = 0; c < columns; ++c) order[static_cast<size_t>(c)] = c;
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        return values[static_cast<size_t>(r * columns + a)] >
               values[static_cast<size_t>(r * columns + b)];
      });
      for (int64_t i = 0; i < k; ++i) {
        where.push_back(order[static_cast<size_t>(i)]);
        top.push_back(values[static_cast<size_t>(r * columns + order[static_cast<size_t>(i)])]);
      }
    }
    EXPECT_EQ(out->at("top").ToVector<float>(), top);
    EXPECT_EQ(out->at("where").ToVector<int64_t>(), where);
  }
}

TEST(ShapesPerRunTest, BadInputsAreRefusedAndTheSessionKeepsWorking) {
  std::unique_ptr<Session> session = Load(Cnn());
  ASSERT_NE(session, nullptr);
  const auto status_of = [&](const std::map<std::string, Tensor>& inputs) {
    return session->Run(inputs).status();
  };
  Status s = status_of({{"image", Random({1, 4, 8, 8}, 1)}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("expects ?x3x?x?"), std::string::npos) << s.ToString();
  s = status_of({{"image", Random({3, 8, 8}, 1)}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  s = status_of({{"image", Tensor(DType::kInt64, {1, 3, 8, 8})}});
  EXPECT_NE(s.message().find("dtype int64"), std::string::npos) << s.ToString();
  s = status_of({});
  EXPECT_NE(s.message().find("missing input(s): image"), std::string::npos) << s.ToString();
  s = status_of({{"image", Random({1, 3, 8, 8}, 1)}, {"extra", Random({1}, 1)}});
  EXPECT_NE(s.message().find("no input named 'extra'"), std::string::npos) << s.ToString();
  // An image too small for the convolution after pooling: refused by the compile, clearly.
  s = status_of({{"image", Random({1, 3, 2, 2}, 1)}});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("input shapes of this run"), std::string::npos) << s.ToString();
  EXPECT_TRUE(session->Run({{"image", Random({1, 3, 8, 8}, 1)}}).ok());
}

TEST(ShapesPerRunTest, OptimizingOrAPlanNeedsFixedShapes) {
  std::unique_ptr<Session> session = Load(Cnn());
  ASSERT_NE(session, nullptr);
  const Status optimized = session->Optimize(OptimizeOptions{});
  EXPECT_EQ(optimized.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(optimized.message().find("--shape"), std::string::npos) << optimized.ToString();
  EXPECT_EQ(session->SavePlan("/nonexistent/plan.json").code(), StatusCode::kInvalidArgument);
}

TEST(ShapesPerRunTest, APlanDeclaredForAShapeRangeServesEveryShapeInItWithoutAWarning) {
  testing::TempDir dir;
  SessionOptions fixed;
  fixed.shapes_per_run = false;
  fixed.num_threads = 1;
  fixed.input_shapes["image"] = {1, 3, 16, 16};
  std::unique_ptr<Session> measured = Load(Cnn(), fixed);
  ASSERT_NE(measured, nullptr);
  // Few runs per candidate: the test is of which plan serves which shapes, not of speed.
  OptimizeOptions quick;
  quick.cost_db_path = dir.File("costs.sqlite");
  quick.caches = CacheState::kWarm;
  quick.min_runs = 2;
  quick.max_runs = 3;
  quick.final_rounds = 1;
  quick.calibration_rounds = 0;
  ASSERT_TRUE(measured->Optimize(quick).ok());
  const std::string plan = dir.File("profile.json");
  const InputShapeRanges profile = {{"image", ShapeRange{{1, 3, 8, 8}, {4, 3, 32, 32}}}};
  ASSERT_TRUE(Session::SavePlans({measured.get()}, plan, {profile}).ok());
  // A range that does not hold the measured shape, or names no input, is refused.
  EXPECT_FALSE(Session::SavePlans({measured.get()}, dir.File("bad.json"),
                                  {{{"image", ShapeRange{{1, 3, 20, 20}, {4, 3, 32, 32}}}}})
                   .ok());
  EXPECT_FALSE(Session::SavePlans({measured.get()}, dir.File("bad.json"),
                                  {{{"label", ShapeRange{{1}, {4}}}}})
                   .ok());

  SessionOptions per_run;
  per_run.num_threads = 1;
  per_run.plan_path = plan;
  std::unique_ptr<Session> session = Load(Cnn(), per_run);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(session->compiles_per_run());
  uint32_t seed = 1;
  for (const Shape& shape : {Shape{1, 3, 16, 16}, Shape{2, 3, 24, 20}, Shape{3, 3, 9, 31}}) {
    const std::map<std::string, Tensor> inputs = {{"image", Random(shape, seed++)}};
    auto out = session->Run(inputs);
    ASSERT_TRUE(out.ok()) << ShapeToString(shape) << ": " << out.status().ToString();
    ExpectSameOutputs(*out, Reference(Cnn(), inputs), 1e-4);
  }
  EXPECT_TRUE(session->warnings().empty()) << session->warnings().front();
  // Outside the range, the plan's placement still runs where it applies, and says so once.
  const std::map<std::string, Tensor> outside = {{"image", Random({1, 3, 40, 40}, 9)}};
  for (int twice = 0; twice < 2; ++twice) {
    auto out = session->Run(outside);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ExpectSameOutputs(*out, Reference(Cnn(), outside), 1e-4);
  }
  const std::vector<std::string> warnings = session->warnings();
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings.front().find("at input shapes image=1x3x40x40"), std::string::npos)
      << warnings.front();
  EXPECT_NE(warnings.front().find("measured at input shapes image=1x3x16x16 (1x3x8x8..4x3x32x32)"),
            std::string::npos)
      << warnings.front();
  EXPECT_EQ(std::count(warnings.begin(), warnings.end(), warnings.front()), 1);
}

TEST(ShapesPerRunTest, TheModelFilesOwnDescriptionIsKeptWhateverTheSessionCompiles) {
  // One session of fixed shapes, one that compiles per run: both give what the file says.
  for (const bool fixed : {true, false}) {
    ModelBuilder model = Cnn();
    model.model().set_producer_version("9.1");
    model.model().set_model_version(7);
    model.model().set_doc_string("a small CNN");
    auto* entry = model.model().add_metadata_props();
    entry->set_key("labels");
    entry->set_value("cat,dog");
    SessionOptions options;
    if (fixed) options.input_shapes["image"] = {1, 3, 16, 16};
    std::unique_ptr<Session> session = Load(model, options);
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(session->compiles_per_run(), !fixed);
    const ModelMetadata& metadata = session->metadata();
    EXPECT_EQ(metadata.producer_name, "collage-test");
    EXPECT_EQ(metadata.producer_version, "9.1");
    EXPECT_EQ(metadata.model_version, 7);
    EXPECT_EQ(metadata.description, "a small CNN");
    EXPECT_EQ(metadata.graph_name, "test_graph");
    EXPECT_EQ(metadata.custom.at("labels"), "cat,dog");
  }
}

TEST(ShapesPerRunTest, WithoutItADynamicModelIsRefusedAtLoadNamingTheDims) {
  SessionOptions options;
  options.shapes_per_run = false;
  auto session = Session::LoadBytes(Cnn().Bytes(), options);
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("dynamic dims"), std::string::npos)
      << session.status().ToString();
}

TEST(ShapesPerRunTest, AModelRefusedForAnotherReasonIsStillRefusedAtLoad) {
  ModelBuilder b = Cnn();
  b.Node("NoSuchOp", {"logits"}, {"other"});
  b.Output("other", kFloat, {"batch", 5});
  auto session = Session::LoadBytes(b.Bytes());
  ASSERT_FALSE(session.ok());
  EXPECT_NE(session.status().message().find("NoSuchOp"), std::string::npos)
      << session.status().ToString();
}

}  // namespace
}  // namespace collage
