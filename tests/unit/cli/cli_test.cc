// The command line as a user meets it: exit codes, messages, files written.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cli_test_util.h"
#include "builtin/builtin_backends.h"
#include "collage/available_backends.h"
#include "collage/sdk/backend.h"
#include "collage/session.h"
#include "collage/sdk/graph.h"
#include "../onnx/onnx_test_util.h"
#include "onnx/onnx_export.h"
#include "onnx/tensor_proto.h"
#include "util/npy.h"

namespace collage {
namespace {

namespace fs = std::filesystem;

using testing::CliTest;
using testing::CommandResult;
using testing::RunCli;

TEST_F(CliTest, UsageErrorsExitWithTwo) {
  EXPECT_EQ(RunCli("").exit_code, 2);
  EXPECT_EQ(RunCli("no-such-command").exit_code, 2);
  EXPECT_EQ(RunCli("info").exit_code, 2);
  EXPECT_EQ(RunCli("--help").exit_code, 0);
}

TEST_F(CliTest, MissingFileIsAClearError) {
  CommandResult r = RunCli("info " + (dir_ / "absent.onnx").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("error:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("absent.onnx"), std::string::npos) << r.output;
}

TEST_F(CliTest, TruncatedAndGarbageFilesAreClearErrors) {
  std::string model = WriteTinyModel();
  std::ifstream in(model, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string truncated = WriteBytes("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  CommandResult r = RunCli("info " + truncated);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("truncated.onnx"), std::string::npos) << r.output;

  std::string garbage = WriteBytes("garbage.onnx", "this is not a model at all \x01\x02\x03");
  r = RunCli("run " + garbage + " --random-inputs");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error:"), std::string::npos) << r.output;

  std::string empty = WriteBytes("empty.onnx", "");
  EXPECT_EQ(RunCli("info " + empty).exit_code, 1);
}

TEST_F(CliTest, InfoDescribesTheModel) {
  CommandResult r = RunCli("info " + WriteTinyModel());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("float32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1x4"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Relu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GFLOP"), std::string::npos) << r.output;
}

TEST_F(CliTest, RunReadsNpyAndPbInputsAndWritesBothFormats) {
  std::string model = WriteTinyModel();
  Tensor x = Tensor::FromVector<float>({1, 4}, {-2.f, -0.5f, 0.5f, 3.f});
  ASSERT_TRUE(WriteNpyFile(x, (dir_ / "x.npy").string()).ok());
  ASSERT_TRUE(WriteTensorProtoFile(x, "x", (dir_ / "x.pb").string()).ok());

  for (const char* file : {"x.npy", "x.pb"}) {
    fs::path out = dir_ / (std::string("out_") + file);
    CommandResult r = RunCli("run " + model + " --input x=" + (dir_ / file).string() +
                             " --output-dir " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto y = ReadNpyFile((out / "y.npy").string());
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_EQ(y->ToVector<float>(), (std::vector<float>{1.f, 1.f, 1.5f, 4.f}));
    auto y_pb = ReadTensorProtoFile((out / "y.pb").string());
    ASSERT_TRUE(y_pb.ok()) << y_pb.status().ToString();
    EXPECT_EQ(y_pb->ToVector<float>(), y->ToVector<float>());
  }
}

TEST_F(CliTest, RunRefusesWrongInputShapeDtypeAndMissingInputs) {
  std::string model = WriteTinyModel();
  ASSERT_TRUE(WriteNpyFile(Tensor(DType::kFloat32, {2, 4}), (dir_ / "bad_shape.npy").string()).ok());
  ASSERT_TRUE(WriteNpyFile(Tensor(DType::kInt64, {1, 4}), (dir_ / "bad_dtype.npy").string()).ok());

  CommandResult r = RunCli("run " + model + " --input x=" + (dir_ / "bad_shape.npy").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("shape 2x4"), std::string::npos) << r.output;

  r = RunCli("run " + model + " --input x=" + (dir_ / "bad_dtype.npy").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("int64"), std::string::npos) << r.output;

  r = RunCli("run " + model);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no data for input(s) x"), std::string::npos) << r.output;

  r = RunCli("run " + model + " --input nosuch=" + (dir_ / "bad_shape.npy").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("nosuch"), std::string::npos) << r.output;
}

TEST_F(CliTest, DynamicDimsNeedShapeAndUnsupportedOpsAreAllNamed) {
  testing::ModelBuilder dynamic(13);
  dynamic.Input("x", onnx::TensorProto::FLOAT, {std::string("batch"), int64_t{4}})
      .Output("y", onnx::TensorProto::FLOAT, {std::string("batch"), int64_t{4}});
  dynamic.Node("Relu", {"x"}, {"y"}, "relu");
  std::string path = WriteBytes("dynamic.onnx", dynamic.Bytes());

  CommandResult r = RunCli("run " + path + " --random-inputs");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--shape"), std::string::npos) << r.output;
  r = RunCli("run " + path + " --random-inputs --shape x=3x4");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("3x4"), std::string::npos) << r.output;
  r = RunCli("info " + path + " --shape nosuch=3x4");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("nosuch"), std::string::npos) << r.output;
  r = RunCli("info " + path + " --shape x=3xq");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // info describes the model as written, its dynamic dims as "?", or folded at the shape given
  // by --shape or an --input file.
  r = RunCli("info " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("float32  ?x4"), std::string::npos) << r.output;
  r = RunCli("info " + path + " --shape x=3x4");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("float32  3x4"), std::string::npos) << r.output;
  Tensor five(DType::kFloat32, {5, 4});
  ASSERT_TRUE(WriteNpyFile(five, (dir_ / "five.npy").string()).ok());
  r = RunCli("info " + path + " --input x=" + (dir_ / "five.npy").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("float32  5x4"), std::string::npos) << r.output;

  testing::ModelBuilder unsupported(13);
  unsupported.Input("x", onnx::TensorProto::FLOAT, {int64_t{4}})
      .Output("z", onnx::TensorProto::FLOAT, {int64_t{4}});
  unsupported.Node("Relu", {"x"}, {"a"}, "fine");
  unsupported.Domain("com.example", 1);
  unsupported.Node("Unknown", {"a"}, {"b"}, "unknown_1", "com.example");
  unsupported.Node("RandomUniformLike", {"b"}, {"c"}, "random_1");
  unsupported.Node("Identity", {"c"}, {"z"}, "id");
  r = RunCli("info " + WriteBytes("unsupported.onnx", unsupported.Bytes()));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("com.example::Unknown (node 'unknown_1')"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("RandomUniformLike (node 'random_1')"), std::string::npos) << r.output;
}

TEST_F(CliTest, ZooListsAndExportsModels) {
  CommandResult r = RunCli("zoo list");
  ASSERT_EQ(r.exit_code, 0);
  for (const char* name : {"resnet50", "mobilenetv2", "bert_base"}) {
    EXPECT_NE(r.output.find(name), std::string::npos) << r.output;
  }
  std::string path = (dir_ / "m.onnx").string();
  r = RunCli("zoo export mobilenetv2 -o " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = RunCli("run " + path + " --random-inputs --threads 1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1x1000"), std::string::npos) << r.output;

  r = RunCli("zoo export nosuchmodel -o " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("resnet50"), std::string::npos) << r.output;  // lists known names
}

TEST_F(CliTest, BenchPrintsPercentiles) {
  CommandResult r = RunCli("bench " + WriteTinyModel() + " --warmup 1 --iterations 5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("p50"), std::string::npos);
  EXPECT_NE(r.output.find("p99"), std::string::npos);
  EXPECT_EQ(RunCli("bench " + WriteTinyModel() + " --iterations 0").exit_code, 1);
}

// How `collage backends` and `--version` name a backend that cannot run here.
std::string SkippedText(const SkippedBackend& skipped) {
  return (skipped.built ? "unavailable: " : "not built: ") + skipped.reason;
}

TEST_F(CliTest, BackendsListsEveryBackendAndItsRules) {
  CommandResult r = RunCli("backends");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Every built-in backend of this build (this process's registry may hold plug-ins other
  // tests loaded; `collage backends` without --backend-path loads none).
  ASSERT_GE(BuiltinBackendNames().size(), 2u) << "native and at least one library";
  for (const std::string& name : BuiltinBackendNames()) {
    EXPECT_NE(r.output.find("\n" + name + " "), std::string::npos) << name << "\n" << r.output;
  }
  // A backend folder this build left out, or an engine's plug-in that did not load here, is
  // named, with the reason (wrapped where long).
  const std::string unwrapped = std::regex_replace(r.output, std::regex("\n +"), " ");
  for (const SkippedBackend& skipped : SkippedBuiltinBackends()) {
    EXPECT_NE(r.output.find(skipped.name + " "), std::string::npos) << r.output;
    EXPECT_NE(unwrapped.find(SkippedText(skipped)), std::string::npos) << r.output;
  }
  EXPECT_NE(r.output.find("oneDNN 2."), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("plugin_example"), std::string::npos);

  CommandResult verbose = RunCli("backends -v --backend-path " COLLAGE_PLUGIN_DIR);
  EXPECT_EQ(verbose.exit_code, 0) << verbose.output;
  EXPECT_NE(verbose.output.find("plugin_example"), std::string::npos) << verbose.output;
  EXPECT_NE(verbose.output.find("conv_act"), std::string::npos) << verbose.output;
  EXPECT_NE(verbose.output.find("Relu(Conv(any"), std::string::npos) << verbose.output;
}

TEST_F(CliTest, BackendRulesAreWrappedToReadableLines) {
  CommandResult r = RunCli("backends -v");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  size_t longest = 0, lines = 0;
  for (size_t start = 0; start < r.output.size();) {
    size_t end = r.output.find('\n', start);
    if (end == std::string::npos) end = r.output.size();
    longest = std::max(longest, end - start);
    ++lines;
    start = end + 1;
  }
  EXPECT_LE(longest, 100u) << r.output;
  EXPECT_GT(lines, 20u) << r.output;
  // A wrapped description goes on under its own column.
  EXPECT_NE(r.output.find("\n" + std::string(27, ' ')), std::string::npos) << r.output;
}

TEST_F(CliTest, VersionNamesCollageAndEveryLibrary) {
  CommandResult r = RunCli("--version");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("collage 0.", 0), 0u) << r.output;
  // Every backend `collage backends` lists (this process's registry may hold plug-ins other
  // tests loaded), with its version.
  const CommandResult listed = RunCli("backends");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  int checked = 0;
  for (const Backend* backend : GlobalBackendRegistry().backends()) {
    if (listed.output.find("\n" + backend->name() + " ") == std::string::npos) continue;
    EXPECT_NE(r.output.find("  " + backend->name() + " "), std::string::npos) << backend->name() << r.output;
    EXPECT_NE(r.output.find(backend->version()), std::string::npos) << backend->version() << r.output;
    ++checked;
  }
  EXPECT_GE(checked, 2) << listed.output;  // native and at least one library
  for (const SkippedBackend& skipped : SkippedBuiltinBackends()) {
    EXPECT_NE(r.output.find(SkippedText(skipped)), std::string::npos) << r.output;
  }
}

TEST_F(CliTest, RunSaysWhereItsOutputsWent) {
  const std::string model = WriteTinyModel();
  CommandResult r = RunCli("run " + model + " --random-inputs");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("not saved (--output-dir DIR saves"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("threads: "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("threads: 0"), std::string::npos) << r.output;
  r = RunCli("run " + model + " --random-inputs --output-dir " + (dir_ / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("written to " + (dir_ / "out").string()), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "y.npy"));
}

// Outputs whose names map to one file name each get their own file, and names holding
// terminal controls are shown escaped (no fake "error:" line, no title change).
TEST_F(CliTest, RunSavesOutputsWithCollidingNamesApartAndShowsNamesEscaped) {
  Graph g;
  TensorType t{DType::kFloat32, {1, 4}};
  ValueId x = g.AddValue("x", t);
  g.AddInput(x);
  const std::vector<std::string> names = {"a/b", "a?b", "a_b", "bad\nerror: fake",
                                          "\x1b]0;owned\x07title"};
  for (size_t i = 0; i < names.size(); ++i) {
    ValueId y = g.AddValue(names[i], t);
    Node relu;
    relu.name = "relu" + std::to_string(i);
    relu.op_type = "Relu";
    relu.inputs = {x};
    relu.outputs = {y};
    ASSERT_TRUE(g.AddNode(relu).ok());
    g.AddOutput(y);
  }
  const std::string model = (dir_ / "names.onnx").string();
  ASSERT_TRUE(ExportOnnxFile(g, model).ok());
  const fs::path out = dir_ / "out";
  CommandResult r = RunCli("run " + model + " --random-inputs --output-dir " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* file : {"a_b.npy", "a_b_2.npy", "a_b_3.npy", "bad_error__fake.npy"}) {
    EXPECT_TRUE(fs::exists(out / file)) << file << "\n" << r.output;
  }
  EXPECT_NE(r.output.find("is saved as a_b_2.npy"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("\nerror: fake"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << "a terminal control reached the output";
  EXPECT_NE(r.output.find("bad\\x0aerror: fake"), std::string::npos) << r.output;
}

TEST_F(CliTest, CheckRefusesToCompareTheReferenceWithItself) {
  const std::string model = WriteTinyModel();
  CommandResult r = RunCli("run " + model + " --random-inputs --check");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("this run is on native alone: give --backend NAME or --plan PLAN"),
            std::string::npos)
      << r.output;
  r = RunCli("run " + model + " --random-inputs --backend native --check");
  EXPECT_EQ(r.exit_code, 1) << r.output;
}

TEST_F(CliTest, RunOnABackendChecksAgainstTheReference) {
  for (const char* name : {"onednn", "xnnpack"}) {
    if (GlobalBackendRegistry().Find(name) == nullptr) GTEST_SKIP() << name << " is not built";
  }
  std::string model = WriteTinyModel();
  CommandResult r = RunCli("run " + model + " --random-inputs --backend onednn --check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("onednn:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ok"), std::string::npos) << r.output;

  CommandResult bench = RunCli("bench " + model + " --backend xnnpack --iterations 2 --profile");
  EXPECT_EQ(bench.exit_code, 0) << bench.output;
  EXPECT_NE(bench.output.find("p50"), std::string::npos) << bench.output;
}

TEST_F(CliTest, UnknownBackendAndBadPluginPathsAreClearErrors) {
  std::string model = WriteTinyModel();
  CommandResult unknown = RunCli("run " + model + " --random-inputs --backend nosuch");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.output.find("error: no backend named 'nosuch'"), std::string::npos) << unknown.output;
  EXPECT_NE(unknown.output.find("onednn"), std::string::npos) << unknown.output;  // lists them

  CommandResult missing = RunCli("backends --backend-path " + (dir_ / "nowhere").string());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("error: backend plug-in folder"), std::string::npos) << missing.output;

  CommandResult wrong_abi = RunCli("backends --backend-path " COLLAGE_TEST_PLUGIN_DIR "/wrong_abi");
  EXPECT_EQ(wrong_abi.exit_code, 1);
  EXPECT_NE(wrong_abi.output.find("ABI version"), std::string::npos) << wrong_abi.output;
}

TEST_F(CliTest, BackendPathFromTheEnvironment) {
  ASSERT_EQ(setenv("COLLAGE_BACKEND_PATH", COLLAGE_PLUGIN_DIR, 1), 0);
  CommandResult r = RunCli("backends");
  unsetenv("COLLAGE_BACKEND_PATH");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("plugin_example"), std::string::npos) << r.output;
}

TEST_F(CliTest, StrictNanKeepsUndeclaredRulesOutAndRefusesTheirPlans) {
  for (const char* command : {"run", "bench", "optimize", "demo"}) {
    CommandResult help = RunCli(std::string(command) + " --help");
    EXPECT_EQ(help.exit_code, 0) << help.output;
    EXPECT_NE(help.output.find("--strict-nan"), std::string::npos) << command << help.output;
    EXPECT_NE(help.output.find("propagate NaN and infinities"), std::string::npos) << help.output;
  }
  if (GlobalBackendRegistry().Find("xnnpack") == nullptr) GTEST_SKIP() << "no xnnpack";
  const std::string model = WriteTinyModel();
  // XNNPACK declares no rule: strict, the model runs on native alone.
  CommandResult r = RunCli("run " + model + " --random-inputs --backend xnnpack --check");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("xnnpack: "), std::string::npos) << r.output;
  r = RunCli("run " + model + " --random-inputs --backend xnnpack --strict-nan --check");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("xnnpack: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("native: "), std::string::npos) << r.output;
  r = RunCli("bench " + model + " --backend xnnpack --strict-nan --iterations 2");
  EXPECT_EQ(r.exit_code, 0) << r.output;

  // A plan placed on XNNPACK runs by default and is refused under --strict-nan.
  SessionOptions options;
  options.backend = "xnnpack";
  auto session = Session::LoadFile(model, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const std::string plan = (dir_ / "plan.json").string();
  ASSERT_TRUE((*session)->SavePlan(plan).ok());
  EXPECT_EQ(RunCli("run " + model + " --plan " + plan + " --random-inputs").exit_code, 0);
  r = RunCli("run " + model + " --plan " + plan + " --random-inputs --strict-nan");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("re-optimize with --strict-nan"), std::string::npos) << r.output;

  CommandResult listed = RunCli("backends -v");
  EXPECT_NE(listed.output.find("[strict-nan]"), std::string::npos) << listed.output;
}

}  // namespace
}  // namespace collage
