// Several `collage optimize` processes on one cost database, as a team's machines or a
// script's parallel jobs meet it: each key is measured by one of them only (the others wait
// for its record), and an optimizer killed mid-way leaves nothing that blocks the next.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_test_util.h"
#include "cost/cost_database.h"

namespace collage {
namespace {

using testing::CliTest;
using testing::CommandResult;
using testing::ReadAll;
using testing::RunCli;
namespace fs = std::filesystem;

// What one optimize measured and found.
struct Counts {
  int measured = 0;
  int cache_hits = 0;
};

class CliSharedCostsTest : public CliTest {
 protected:
  // The DCGAN generator on native and oneDNN: about 60 keys, a few seconds to measure.
  std::string Model() {
    const std::string path = (dir_ / "dcgan.onnx").string();
    if (!fs::exists(path)) {
      CommandResult r = RunCli("zoo export dcgan -o " + path);
      EXPECT_EQ(r.exit_code, 0) << r.output;
    }
    return path;
  }
  std::string OptimizeArgs(const std::string& db, const std::string& json) {
    return "optimize " + Model() +
           " --backends native,onednn --threads 1 --rounds 1 --calibrate 0 --no-compare "
           "--cost-db " +
           db + " --json " + json;
  }
  static Counts CountsIn(const fs::path& json) {
    const nlohmann::json j = nlohmann::json::parse(ReadAll(json), nullptr, false);
    Counts counts;
    if (!j.is_object() || !j.contains("measurements")) return counts;
    counts.measured = j["measurements"]["measured"].get<int>();
    counts.cache_hits = j["measurements"]["cache_hits"].get<int>();
    return counts;
  }
};

TEST_F(CliSharedCostsTest, ThreeOptimizesAtOnceMeasureEachKeyOnce) {
  const std::string db = (dir_ / "shared.sqlite").string();
  Model();
  std::vector<CommandResult> results(3);
  std::vector<std::thread> optimizers;
  for (size_t i = 0; i < results.size(); ++i) {
    optimizers.emplace_back([&, i] {
      results[i] = RunCli(OptimizeArgs(db, (dir_ / ("run" + std::to_string(i) + ".json")).string()));
    });
  }
  for (std::thread& t : optimizers) t.join();
  int measured = 0;
  int keys = -1;
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_EQ(results[i].exit_code, 0) << results[i].output;
    const Counts counts = CountsIn(dir_ / ("run" + std::to_string(i) + ".json"));
    // Each saw every key: measured by itself or found (measured by another, waited for).
    if (keys < 0) keys = counts.measured + counts.cache_hits;
    EXPECT_EQ(counts.measured + counts.cache_hits, keys) << results[i].output;
    measured += counts.measured;
  }
  EXPECT_GT(keys, 20);
  EXPECT_EQ(measured, keys) << "a key was measured by more than one optimize";
  auto database = CostDatabase::Open(db, nullptr);
  ASSERT_TRUE(database.ok()) << database.status().message();
  EXPECT_EQ(*(*database)->Count(), keys);
}

TEST_F(CliSharedCostsTest, AKilledOptimizersClaimsDoNotBlockTheNext) {
  const std::string db = (dir_ / "shared.sqlite").string();
  const std::string command =
      std::string(COLLAGE_CLI_PATH) + " " + OptimizeArgs(db, (dir_ / "killed.json").string());
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setpgid(0, 0);  // its measurement worker goes with it
    ::execl("/bin/sh", "sh", "-c", (command + " >/dev/null 2>&1").c_str(), nullptr);
    ::_exit(127);
  }
  // Killed once it has stored some measurements, in the middle of others.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int64_t stored = 0;
  while (stored < 5 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!fs::exists(db)) continue;
    auto database = CostDatabase::Open(db, nullptr);
    if (!database.ok()) continue;
    StatusOr<int64_t> count = (*database)->Count();
    if (count.ok()) stored = *count;
  }
  ::kill(-child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_GE(stored, 5) << "the optimize never stored a measurement";

  const auto started = std::chrono::steady_clock::now();
  CommandResult r = RunCli(OptimizeArgs(db, (dir_ / "next.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const Counts counts = CountsIn(dir_ / "next.json");
  EXPECT_GE(counts.cache_hits, stored) << r.output;
  EXPECT_GT(counts.measured, 0) << "the killed optimize's claims were taken for measurements";
  // Not a wait for a lease: the killed process's claims lapse as soon as it is gone.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(120));
}

}  // namespace
}  // namespace collage
