// What the optimizer tests share: a temporary cost database, quick measurement settings and
// a small model with repeated blocks.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "collage/optimize.h"
#include "ops/graph_builder.h"

namespace collage::testing {

// A folder removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    path_ =
        std::filesystem::temp_directory_path() /
        ("collage-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
         "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Few timed runs: the tests check behaviour, not speed.
inline OptimizeOptions QuickOptimize(const std::string& cost_db) {
  OptimizeOptions options;
  options.cost_db_path = cost_db;
  options.warmup_runs = 1;
  options.min_runs = 2;
  options.max_runs = 5;
  options.max_seconds = 0.05;
  // Timed warm: tests of behaviour need costs, not costs that predict a run (a cache scrub
  // before every timed run would multiply their time).
  options.caches = CacheState::kWarm;
  // The end-to-end decision between finalists: a few rounds are enough for tests of behaviour.
  options.final_rounds = 3;
  options.max_final_rounds = 6;
  // Plans run to calibrate the search's costs: two show the mechanism.
  options.calibration_rounds = 2;
  return options;
}

// `blocks` identical Conv → Relu blocks (each with its own weights) and a residual Add, on
// `channels` x `size` x `size` activations.
inline Graph RepeatedBlocks(int blocks, uint64_t seed = 0, int64_t channels = 8,
                            int64_t size = 12) {
  GraphBuilder b("repeated_blocks", 17, seed);
  ValueId x = b.Input("x", DType::kFloat32, {1, channels, size, size});
  for (int i = 0; i < blocks; ++i) {
    const std::string name = "block" + std::to_string(i);
    ValueId w = b.RandomNormal(name + ".w", {channels, channels, 3, 3}, 0.2f);
    ValueId c = b.Node("Conv", {x, w}, {{"pads", {1, 1, 1, 1}}}, name + ".conv");
    ValueId r = b.Node("Relu", {c}, {}, name + ".relu");
    x = b.Node("Add", {r, x}, {}, name + ".add");
  }
  b.Output(x, "y");
  auto g = std::move(b).Build();
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return std::move(*g);
}

}  // namespace collage::testing
