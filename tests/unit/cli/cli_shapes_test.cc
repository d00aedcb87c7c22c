// Input shapes as a user meets them: a model's dynamic dims fixed by the data given with
// --input (or by --shape), a --shape or an input file that contradicts a static dim refused, and
// a plan that remembers the shapes it was made for (and the thread count it was measured with).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../onnx/onnx_test_util.h"
#include "cli_test_util.h"
#include "util/npy.h"

namespace collage {
namespace {

using testing::CliTest;
using testing::CommandResult;
using testing::ReadAll;
using testing::RunCli;

class CliShapesTest : public CliTest {
 protected:
  // y = Relu(x), x: float32[batch x 4].
  std::string WriteDynamicModel() {
    testing::ModelBuilder dynamic(13);
    dynamic.Input("x", onnx::TensorProto::FLOAT, {std::string("batch"), int64_t{4}})
        .Output("y", onnx::TensorProto::FLOAT, {std::string("batch"), int64_t{4}});
    dynamic.Node("Relu", {"x"}, {"y"}, "relu");
    return WriteBytes("dynamic.onnx", dynamic.Bytes());
  }
  std::string WriteInput(const std::string& name, const Shape& shape) {
    Tensor t(DType::kFloat32, shape);
    float* data = t.data_as<float>();
    for (int64_t i = 0; i < t.num_elements(); ++i) data[i] = static_cast<float>(i % 7) - 3.0f;
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(WriteNpyFile(t, path).ok());
    return path;
  }
};

TEST_F(CliShapesTest, DynamicDimsAreTakenFromTheInputGiven) {
  const std::string model = WriteDynamicModel();
  const std::string input = WriteInput("x3.npy", {3, 4});
  CommandResult r = RunCli("run " + model + " --input x=" + input + " --output-dir " +
                           (dir_ / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("float32  3x4"), std::string::npos) << r.output;
  auto y = ReadNpyFile((dir_ / "out" / "y.npy").string());
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->shape(), (Shape{3, 4}));
  for (int64_t i = 0; i < y->num_elements(); ++i) {
    EXPECT_EQ(y->data_as<float>()[i], std::max(0.0f, static_cast<float>(i % 7) - 3.0f)) << i;
  }
  // bench takes the shape from its input too.
  r = RunCli("bench " + model + " --input x=" + input + " --iterations 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // Without data or --shape, the message says both ways and proposes no number for the batch.
  r = RunCli("run " + model + " --random-inputs");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("give its data with --input x=FILE"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--shape x=<batch>x4"), std::string::npos) << r.output;
}

TEST_F(CliShapesTest, ShapesThatContradictAStaticDimAreRefused) {
  const std::string tiny = WriteTinyModel();  // x: float32[1x4]
  CommandResult r = RunCli("run " + tiny + " --random-inputs --shape x=2x4");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--shape x=2x4 contradicts input 'x' (1 x 4): its dim 0 is 1"),
            std::string::npos)
      << r.output;
  // The same shape as the model's is no contradiction.
  r = RunCli("run " + tiny + " --random-inputs --shape x=1x4");
  EXPECT_EQ(r.exit_code, 0) << r.output;

  const std::string input = WriteInput("x2.npy", {2, 4});
  r = RunCli("run " + tiny + " --input x=" + input);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--input x=" + input + " (shape 2x4) contradicts input 'x'"),
            std::string::npos)
      << r.output;
  // --shape says what the dynamic dims are; data of another shape is then refused at the run.
  const std::string dynamic = WriteDynamicModel();
  r = RunCli("run " + dynamic + " --shape x=5x4 --input x=" + input);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("input 'x' has shape 2x4, the model expects 5x4"), std::string::npos)
      << r.output;
  // An input file for no input names the flag.
  r = RunCli("run " + tiny + " --input nosuch=" + input);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--input nosuch=" + input + " names 'nosuch', which is not a graph input"),
            std::string::npos)
      << r.output;
}

TEST_F(CliShapesTest, APlanKeepsItsShapesAndThreads) {
  const std::string model = WriteDynamicModel();
  const std::string plan = (dir_ / "plan.json").string();
  CommandResult r = RunCli("optimize " + model + " --shape x=2x4 --threads 1 --no-compare --cost-db " +
                           (dir_ / "costs.sqlite").string() + " --save-plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(ReadAll(plan), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["input_shapes"]["x"], nlohmann::json({2, 4}));
  EXPECT_EQ(j["threads"], 1);

  // Run with the plan's shape, without --threads: the plan's thread count, no warning.
  r = RunCli("run " + model + " --shape x=2x4 --random-inputs --plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("threads: 1\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  r = RunCli("bench " + model + " --shape x=2x4 --iterations 2 --plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("threads: 1 "), std::string::npos) << r.output;
  // Asking for another count runs with it, and says the plan was measured with another.
  r = RunCli("run " + model + " --shape x=2x4 --random-inputs --threads 2 --plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("threads: 2\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("measured with 1 threads, running with 2"), std::string::npos) << r.output;

  // Another shape: the plan's placement where it applies, saying at which shapes it was
  // measured and how to measure these.
  const std::string input = WriteInput("x3.npy", {3, 4});
  r = RunCli("run " + model + " --input x=" + input + " --plan " + plan + " --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the plan was measured at input shapes x=2x4, these are x=3x4"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("run `collage optimize` with --shape for these shapes"),
            std::string::npos)
      << r.output;
}

TEST_F(CliShapesTest, OneOptimizeMeasuresSeveralShapesIntoOnePlanFile) {
  const std::string model = WriteDynamicModel();
  const std::string plan = (dir_ / "plans.json").string();
  CommandResult r = RunCli("optimize " + model + " --shape x=2x4 --shape x=8x4 --threads 1 " +
                           "--no-compare --cost-db " + (dir_ / "costs.sqlite").string() +
                           " --save-plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("== shapes x=2x4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("== shapes x=8x4"), std::string::npos) << r.output;
  nlohmann::json j = nlohmann::json::parse(ReadAll(plan), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["format"], "collage-plan-set");
  ASSERT_EQ(j["plans"].size(), 2u);
  EXPECT_EQ(j["plans"][0]["input_shapes"]["x"], nlohmann::json({2, 4}));
  EXPECT_EQ(j["plans"][1]["input_shapes"]["x"], nlohmann::json({8, 4}));

  // Each measured shape runs its own plan, without a word; another runs the nearest one's.
  for (const std::string shape : {"2x4", "8x4"}) {
    r = RunCli("run " + model + " --shape x=" + shape + " --random-inputs --plan " + plan);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  }
  r = RunCli("run " + model + " --shape x=6x4 --random-inputs --check --plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("measured at input shapes x=8x4, these are x=6x4"), std::string::npos)
      << r.output;
  // Without --shape, a file of several shapes cannot say which: the error lists them.
  r = RunCli("run " + model + " --random-inputs --plan " + plan);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("was measured at several shapes of it (x=2x4, x=8x4): fix them with "
                          "--shape x=DIMS"),
            std::string::npos)
      << r.output;

  // A shape for no input is refused, and so is a report of several optimizes.
  r = RunCli("optimize " + model + " --shape x=2x4 --shape x=8x4 --shape y=1 --no-compare");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  r = RunCli("optimize " + model + " --shape x=2x4 --shape x=8x4 --no-compare --json " +
             (dir_ / "o.json").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--report and --json describe one optimize"), std::string::npos)
      << r.output;
}

TEST_F(CliShapesTest, AShapeRangeIsMeasuredAtItsOptAndRunsWithinItWithoutAWarning) {
  const std::string model = WriteDynamicModel();
  const std::string plan = (dir_ / "profile.json").string();
  CommandResult r = RunCli("optimize " + model + " --shape-range x=1x4:4x4:16x4 --threads 1 " +
                           "--no-compare --cost-db " + (dir_ / "costs.sqlite").string() +
                           " --save-plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Both ends of the range are loaded with the plan, and the output says how it applies there.
  EXPECT_NE(r.output.find("at x=1x4 (the range's minimum)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("at x=16x4 (the range's maximum)"), std::string::npos) << r.output;
  nlohmann::json j = nlohmann::json::parse(ReadAll(plan), nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["input_shapes"]["x"], nlohmann::json({4, 4}));
  EXPECT_EQ(j["input_ranges"]["x"]["min"], nlohmann::json({1, 4}));
  EXPECT_EQ(j["input_ranges"]["x"]["max"], nlohmann::json({16, 4}));

  // Within the range: the plan as declared, no warning, outputs as the reference's.
  for (const std::string shape : {"1x4", "9x4", "16x4"}) {
    r = RunCli("run " + model + " --shape x=" + shape + " --random-inputs --check --plan " + plan);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("warning"), std::string::npos) << shape << ": " << r.output;
  }
  // Without --shape, the plan's measured shape, said as such.
  r = RunCli("run " + model + " --random-inputs --plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("input shapes from the plan, where the model leaves them dynamic: x=4x4"),
            std::string::npos)
      << r.output;
  r = RunCli("bench " + model + " --iterations 2 --plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Outside it: the placement where it applies, saying where the plan was measured and for what.
  r = RunCli("run " + model + " --shape x=17x4 --random-inputs --check --plan " + plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("measured at input shapes x=4x4 (1x4..16x4), these are x=17x4"),
            std::string::npos)
      << r.output;

  // A range over a dim the model fixes (its second, 4) is refused before anything is measured,
  // and no plan declaring it is written.
  const std::string refused = (dir_ / "refused.json").string();
  r = RunCli("optimize " + model + " --shape-range x=1x4:4x4:16x5 --threads 1 --no-compare " +
             "--cost-db " + (dir_ / "costs.sqlite").string() + " --save-plan " + refused);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--shape-range: loading the model at the range's maximum (x=16x5)"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(refused));
  // Malformed profiles are refused with what was expected.
  for (const std::string bad : {"x=1x4:16x4", "x=4x4:1x4:16x4", "x=1x4:4x4:2x4", "x=1x4:4x4x1:16x4",
                                "x=1x4:four:16x4"}) {
    r = RunCli("optimize " + model + " --shape-range " + bad + " --no-compare");
    EXPECT_EQ(r.exit_code, 1) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--shape-range"), std::string::npos) << bad << ": " << r.output;
  }
}

}  // namespace
}  // namespace collage
