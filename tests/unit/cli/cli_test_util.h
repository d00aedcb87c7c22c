// What the command-line tests share: running the `collage` executable as a user would, and a
// fixture with a private folder and a tiny model, y = Relu(x) + 1 with x: float32[1x4].
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "collage/sdk/graph.h"
#include "onnx/onnx_export.h"
#include "test_paths.h"

namespace collage::testing {

namespace fs = std::filesystem;

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// `env`: a prefix for the command line, as `env -u NAME NAME2=VALUE` would give it.
inline CommandResult RunCli(const std::string& args, const std::string& env = "") {
  std::string command =
      env + (env.empty() ? "" : " ") + std::string(COLLAGE_CLI_PATH) + " " + args + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.output.append(buffer.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("collage-cli-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // y = Relu(x) + 1, x: float32[1x4].
  std::string WriteTinyModel() {
    Graph g;
    TensorType t{DType::kFloat32, {1, 4}};
    ValueId x = g.AddValue("x", t);
    g.AddInput(x);
    ValueId r = g.AddValue("r", t);
    ValueId one = g.AddConstant("one", Tensor::FromVector<float>({1}, {1.f}));
    ValueId y = g.AddValue("y", t);
    Node relu;
    relu.name = "relu";
    relu.op_type = "Relu";
    relu.inputs = {x};
    relu.outputs = {r};
    EXPECT_TRUE(g.AddNode(relu).ok());
    Node add;
    add.name = "add";
    add.op_type = "Add";
    add.inputs = {r, one};
    add.outputs = {y};
    EXPECT_TRUE(g.AddNode(add).ok());
    g.AddOutput(y);
    std::string path = (dir_ / "tiny.onnx").string();
    EXPECT_TRUE(ExportOnnxFile(g, path).ok());
    return path;
  }

  std::string WriteBytes(const std::string& name, const std::string& bytes) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  fs::path dir_;
};

}  // namespace collage::testing
