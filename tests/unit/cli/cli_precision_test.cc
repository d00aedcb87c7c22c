// `collage optimize --precision bf16|auto --tolerance T [--calibration-inputs DIR]` as a user
// meets it: the accuracy check reported, the inputs it runs on read from a folder (and refused
// clearly when they do not fit the model), and a plan's group in a precision its backend
// does not compute refused by `run`.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "collage/tensor_file.h"

namespace collage {
namespace {

using testing::CliTest;
using testing::CommandResult;
using testing::ReadAll;
using testing::RunCli;
namespace fs = std::filesystem;

class CliPrecisionTest : public CliTest {
 protected:
  CommandResult Optimize(const std::string& extra) {
    return RunCli("optimize " + WriteTinyModel() +
                  " --threads 1 --rounds 2 --calibrate 1 --cost-db " +
                  (dir_ / "costs.sqlite").string() + " --save-plan " + plan() + " " + extra);
  }
  std::string plan() const { return (dir_ / "plan.json").string(); }
  // A folder holding x.npy of `shape` (one input set), or `sets` subfolders of them.
  fs::path InputsFolder(const std::string& name, const Shape& shape, int sets = 0) {
    const fs::path folder = dir_ / name;
    auto write = [&](const fs::path& where) {
      fs::create_directories(where);
      std::vector<float> values(static_cast<size_t>(NumElements(shape)), 0.5f);
      EXPECT_TRUE(
          WriteTensorFiles(Tensor::FromVector<float>(shape, values), "x", (where / "x").string())
              .ok());
      fs::remove(where / "x.pb");  // one file per input
    };
    if (sets == 0) write(folder);
    for (int s = 0; s < sets; ++s) write(folder / ("set" + std::to_string(s)));
    return folder;
  }
};

TEST_F(CliPrecisionTest, AutoReportsTheAccuracyCheckOnTheGivenInputSets) {
  CommandResult r = Optimize("--precision auto --tolerance 1e-2 --calibration-inputs " +
                             InputsFolder("sets", {1, 4}, 3).string() + " --json " +
                             (dir_ / "summary.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("accuracy: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("of the float32 reference kernels on 3 input sets (tolerance 0.01"),
            std::string::npos)
      << r.output;
  const nlohmann::json summary = nlohmann::json::parse(ReadAll(dir_ / "summary.json"));
  ASSERT_TRUE(summary.contains("accuracy")) << summary.dump();
  EXPECT_EQ(summary["accuracy"]["input_sets"], 3);
  EXPECT_LE(summary["accuracy"]["error"].get<double>(), 1e-2);
  for (const auto& group : summary["groups"]) EXPECT_TRUE(group.contains("precision"));
  // One set, given directly in the folder.
  r = Optimize("--precision bf16 --no-compare --calibration-inputs " +
               InputsFolder("one", {1, 4}).string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("on 1 input sets"), std::string::npos) << r.output;
}

// A built-in model (DCGAN's generator: transposed convolutions, which OpenVINO offers in bf16
// where the CPU has it), placed with --precision auto and checked again by `run --check`.
TEST_F(CliPrecisionTest, AZooModelsAutoPlanPassesItsOwnCheck) {
  const std::string model = (dir_ / "dcgan.onnx").string();
  ASSERT_EQ(RunCli("zoo export dcgan -o " + model).exit_code, 0);
  CommandResult r =
      RunCli("optimize " + model + " --threads 1 --rounds 3 --calibrate 2 --cost-db " +
             (dir_ / "costs.sqlite").string() + " --save-plan " + plan() +
             " --precision auto --tolerance 1e-2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("accuracy: "), std::string::npos) << r.output;
  r = RunCli("run " + model + " --plan " + plan() + " --random-inputs --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // A plan with bf16 groups is held to the budget it was made under.
  const nlohmann::json saved = nlohmann::json::parse(ReadAll(plan()));
  if (saved.contains("tolerance")) {
    EXPECT_NE(r.output.find("tolerance 1.0e-02, the plan's accuracy budget"), std::string::npos)
        << r.output;
  }
}

TEST_F(CliPrecisionTest, InputsAndFlagsThatDoNotFitAreRefusedClearly) {
  CommandResult r =
      Optimize("--precision auto --calibration-inputs " + (dir_ / "missing").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("not a folder"), std::string::npos) << r.output;

  r = Optimize("--precision auto --calibration-inputs " + InputsFolder("bad", {1, 5}).string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("input 'x' is float32[1x5], the model takes float32[1x4]"),
            std::string::npos)
      << r.output;

  fs::create_directories(dir_ / "empty");
  r = Optimize("--precision auto --calibration-inputs " + (dir_ / "empty").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("no .npy or .pb input files"), std::string::npos) << r.output;

  r = Optimize("--precision int4");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--precision"), std::string::npos) << r.output;
  r = Optimize("--precision auto --tolerance -1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--tolerance"), std::string::npos) << r.output;
}

TEST_F(CliPrecisionTest, APlanGroupInAPrecisionItsRuleDoesNotComputeIsRefused) {
  CommandResult r = Optimize("--backends native --no-compare");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json edited = nlohmann::json::parse(ReadAll(plan()));
  edited["groups"][0]["precision"] = "bf16";
  std::ofstream(plan()) << edited.dump();
  r = RunCli("run " + WriteTinyModel() + " --plan " + plan() + " --random-inputs");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("does not compute in bf16"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace collage
