// Files a hostile or careless user hands the command line: a model whose external data is a
// symlink out of its folder or a FIFO, /dev/zero as a model, input or plan, a plan saved onto
// a symlink or a device. Each is a clear error with exit 1 (or done safely), never a hang,
// a leak of another file's bytes, or a destroyed file.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

#include "cli_test_util.h"
#include "onnx/onnx_pb.h"

namespace collage {
namespace {

namespace fs = std::filesystem;
using testing::CliTest;
using testing::CommandResult;
using testing::ReadAll;
using testing::RunCli;

// Every command here is bounded: a regression to a blocking read fails instead of hanging.
const std::string kBounded = "timeout 60";

class CliHostileFilesTest : public CliTest {
 protected:
  // y = x + w, x: float32[1x4], w's 16 bytes stored as external data in model/w.bin.
  std::string WriteModelWithExternalWeights() {
    fs::create_directories(dir_ / "model");
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("external");
    for (const char* name : {"x", "y"}) {
      onnx::ValueInfoProto* info =
          std::string(name) == "x" ? graph->add_input() : graph->add_output();
      info->set_name(name);
      auto* tensor = info->mutable_type()->mutable_tensor_type();
      tensor->set_elem_type(onnx::TensorProto::FLOAT);
      tensor->mutable_shape()->add_dim()->set_dim_value(1);
      tensor->mutable_shape()->add_dim()->set_dim_value(4);
    }
    onnx::TensorProto* w = graph->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(4);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* location = w->add_external_data();
    location->set_key("location");
    location->set_value("w.bin");
    onnx::NodeProto* add = graph->add_node();
    add->set_op_type("Add");
    add->add_input("x");
    add->add_input("w");
    add->add_output("y");
    const std::string path = (dir_ / "model" / "model.onnx").string();
    std::ofstream(path, std::ios::binary) << model.SerializeAsString();
    return path;
  }
  std::string Run(const std::string& model) {
    return "run " + model + " --random-inputs --output-dir " + (dir_ / "out").string();
  }
};

TEST_F(CliHostileFilesTest, ExternalDataThatIsASymlinkOutOfTheFolderIsRefused) {
  const std::string model = WriteModelWithExternalWeights();
  WriteBytes("secret.txt", "root:x:0:0:root:/root:/bin/bash\n");
  fs::create_symlink(dir_ / "secret.txt", dir_ / "model" / "w.bin");
  CommandResult r = RunCli(Run(model), kBounded);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("error:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("symlink"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "y.npy")) << "the secret's bytes became an output";

  // The same bytes as a regular file inside the folder: the model runs.
  fs::remove(dir_ / "model" / "w.bin");
  WriteBytes("model/w.bin", std::string(16, '\0'));
  r = RunCli(Run(model), kBounded);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_F(CliHostileFilesTest, ExternalDataThatIsAFifoFailsAtOnce) {
  const std::string model = WriteModelWithExternalWeights();
  ASSERT_EQ(::mkfifo((dir_ / "model" / "w.bin").c_str(), 0600), 0);
  CommandResult r = RunCli(Run(model), kBounded);
  EXPECT_EQ(r.exit_code, 1) << "124 is the time-out: the read blocked\n" << r.output;
  EXPECT_NE(r.output.find("FIFO"), std::string::npos) << r.output;
}

TEST_F(CliHostileFilesTest, DevZeroAsModelInputOrPlanIsRefusedByName) {
  const std::string tiny = WriteTinyModel();
  fs::create_symlink("/dev/zero", dir_ / "zero.onnx");
  fs::create_symlink("/dev/zero", dir_ / "zero.npy");
  fs::create_symlink("/dev/zero", dir_ / "zero.json");
  for (const std::string& args : std::vector<std::string>{
           "info " + (dir_ / "zero.onnx").string(), "info /dev/zero",
           "run " + tiny + " --input x=" + (dir_ / "zero.npy").string(),
           "run " + tiny + " --random-inputs --plan " + (dir_ / "zero.json").string()}) {
    CommandResult r = RunCli(args, kBounded);
    EXPECT_EQ(r.exit_code, 1) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("zero"), std::string::npos) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("character device"), std::string::npos) << args << "\n" << r.output;
  }
}

TEST_F(CliHostileFilesTest, AFolderGivenAsAnInputIsNamedAsSuch) {
  fs::create_directories(dir_ / "x.npy");
  CommandResult r =
      RunCli("run " + WriteTinyModel() + " --input x=" + (dir_ / "x.npy").string(), kBounded);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("is a directory"), std::string::npos) << r.output;
}

TEST_F(CliHostileFilesTest, SavePlanWritesThroughASymlinkAndRefusesADevice) {
  const std::string tiny = WriteTinyModel();
  const std::string optimize = "optimize " + tiny +
                               " --threads 1 --no-compare --backends native --cost-db " +
                               (dir_ / "costs.sqlite").string() + " --save-plan ";
  fs::create_directories(dir_ / "plans");
  WriteBytes("plans/real.json", "old");
  fs::create_symlink(dir_ / "plans" / "real.json", dir_ / "link.json");
  CommandResult r = RunCli(optimize + (dir_ / "link.json").string(), kBounded);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.json"));
  EXPECT_NE(ReadAll(dir_ / "plans" / "real.json").find("\"groups\""), std::string::npos);
  EXPECT_EQ(
      RunCli("run " + tiny + " --random-inputs --plan " + (dir_ / "link.json").string()).exit_code,
      0);

  // A device node of our own (the same device as /dev/null), so nothing of the system's is at
  // stake if this ever regresses.
  const fs::path device = dir_ / "device";
  if (::mknod(device.c_str(), S_IFCHR | 0600, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "cannot make a device node here (not root)";
  }
  r = RunCli(optimize + device.string(), kBounded);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("character device"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_character_file(device)) << "the device was replaced";
  r = RunCli(optimize + (dir_ / "plans").string(), kBounded);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(fs::is_directory(dir_ / "plans"));
}

TEST_F(CliHostileFilesTest, AWriteThatRunsOutOfSpaceLeavesTheOldFileAndNoPartialOne) {
  // A file-size limit fails the write part-way, as a full disk does.
  const fs::path model = dir_ / "m.onnx";
  WriteBytes("m.onnx", "an earlier export");
  CommandResult r = RunCli("zoo export mobilenetv2 -o " + model.string(), "prlimit --fsize=65536");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("m.onnx"), std::string::npos) << r.output;
  EXPECT_EQ(ReadAll(model), "an earlier export");
  fs::create_directories(dir_ / "out");
  r = RunCli("run " + WriteTinyModel() + " --random-inputs --output-dir " + (dir_ / "out").string(),
             "prlimit --fsize=100");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir_))
    left.push_back(entry.path().filename().string());
  for (const auto& entry : fs::directory_iterator(dir_ / "out"))
    left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"m.onnx", "out", "tiny.onnx"}));
}

TEST_F(CliHostileFilesTest, BadTolerancesAndUnknownFlagsAreUsageErrors) {
  const std::string tiny = WriteTinyModel();
  for (const char* tolerance : {"-1", "nan", "inf", "abc"}) {
    CommandResult r = RunCli("run " + tiny + " --random-inputs --check --tolerance " + tolerance);
    EXPECT_EQ(r.exit_code, 2) << tolerance << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << r.output;
  }
  // Relu and Add are exact on every backend: a tolerance of 0 holds.
  EXPECT_EQ(RunCli("run " + tiny + " --random-inputs --backend onednn --check --tolerance 0").exit_code, 0);
  CommandResult r = RunCli("run " + tiny + " --no-such-flag");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << r.output;
  for (const std::string& args : {"run " + tiny + " --random-inputs --threads ''",
                                  "optimize " + tiny + " --no-compare --backends ''",
                                  "optimize " + tiny + " --no-compare --backends ,,,"}) {
    r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("needs a value"), std::string::npos) << args << "\n" << r.output;
  }
  r = RunCli("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown command 'frobnicate' (commands: "), std::string::npos)
      << r.output;
  r = RunCli("zoo frob");
  EXPECT_NE(r.output.find("unknown command 'frob' (commands: "), std::string::npos) << r.output;
  // A misspelt flag: the one meant; a flag far from every other: the command's flags.
  r = RunCli("run " + tiny + " --random-inputs --shpe x=1x4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown flag '--shpe' for `collage run`; did you mean --shape?"),
            std::string::npos)
      << r.output;
  r = RunCli("optimize " + tiny + " --save-plna=p.json");
  EXPECT_NE(r.output.find("did you mean --save-plan?"), std::string::npos) << r.output;
  r = RunCli("info " + tiny + " --frobnicate-everything");
  EXPECT_NE(r.output.find("unknown flag '--frobnicate-everything' for `collage info` (its flags: "),
            std::string::npos)
      << r.output;
}

TEST_F(CliHostileFilesTest, AnInputGivenTwiceIsRefused) {
  const std::string tiny = WriteTinyModel();
  WriteBytes("a.npy", "");
  CommandResult r =
      RunCli("run " + tiny + " --random-inputs --output-dir " + (dir_ / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string x = (dir_ / "out" / "y.npy").string();  // any float32[1x4] file will do
  r = RunCli("run " + tiny + " --input x=" + x + " --input x=" + x);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("given twice"), std::string::npos) << r.output;
}

TEST_F(CliHostileFilesTest, ControlBytesOfADamagedModelAreNotPrintedRaw) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  model.mutable_graph()->set_name("damaged");
  onnx::ValueInfoProto* output = model.mutable_graph()->add_output();
  output->set_name(std::string("\x19\x1b[31mred"));
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  output->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
  WriteBytes("damaged.onnx", model.SerializeAsString());
  CommandResult r = RunCli("info " + (dir_ / "damaged.onnx").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << "an escape sequence reached the terminal";
  EXPECT_NE(r.output.find("\\x1b"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace collage
