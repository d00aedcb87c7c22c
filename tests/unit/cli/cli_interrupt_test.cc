// Ctrl-C (SIGINT) or SIGTERM while `collage optimize` measures: it stops at the next
// candidate with exit code 130, keeps every measurement it made, and leaves no mark that a
// later run would take for a crashed candidate; the next optimize finishes the work.
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cli_test_util.h"

namespace collage {
namespace {

namespace fs = std::filesystem;
using testing::CliTest;
using testing::CommandResult;
using testing::ReadAll;
using testing::RunCli;

// Counts rows of the cost database matching `where`.
int64_t CountRows(const std::string& db, const std::string& where) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(raw);
    return -1;
  }
  sqlite3_busy_timeout(raw, 10000);
  sqlite3_stmt* stmt = nullptr;
  int64_t count = -1;
  const std::string sql = "SELECT count(*) FROM costs WHERE " + where;
  if (sqlite3_prepare_v2(raw, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    count = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
  return count;
}

class CliInterruptTest : public CliTest, public ::testing::WithParamInterface<int> {};

TEST_P(CliInterruptTest, OptimizeStopsCleanlyAndKeepsWhatItMeasured) {
  const int signal_number = GetParam();
  const std::string model = (dir_ / "mobilenetv2.onnx").string();
  ASSERT_EQ(RunCli("zoo export mobilenetv2 -o " + model).exit_code, 0);
  const std::string db = (dir_ / "costs.sqlite").string();
  const std::string log = (dir_ / "optimize.log").string();

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (std::freopen(log.c_str(), "w", stdout) == nullptr || ::dup2(fileno(stdout), 2) < 0)
      ::_exit(99);
    ::execl(COLLAGE_CLI_PATH, "collage", "optimize", model.c_str(), "--threads", "1",
            "--no-compare", "--cost-db", db.c_str(), "--save-plan", (dir_ / "plan.json").c_str(),
            nullptr);
    ::_exit(98);
  }
  // Interrupted while measuring: once some measurements are stored.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline &&
         (!fs::exists(db) || CountRows(db, "state='valid'") < 5)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GE(CountRows(db, "state='valid'"), 5) << ReadAll(log);
  ASSERT_EQ(::kill(child, signal_number), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const std::string output = ReadAll(log);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by the signal instead of stopping\n" << output;
  EXPECT_EQ(WEXITSTATUS(status), 130) << output;
  EXPECT_NE(output.find("interrupted while measuring"), std::string::npos) << output;
  EXPECT_FALSE(fs::exists(dir_ / "plan.json")) << "no plan from an interrupted search";

  // Nothing in flight is left marked, so nothing is taken for a crash later.
  EXPECT_EQ(CountRows(db, "state='measuring'"), 0);
  const int64_t kept = CountRows(db, "state='valid'");
  EXPECT_GE(kept, 5);

  CommandResult again = RunCli(
      "optimize " + model + " --threads 1 --no-compare --backends native,onednn --cost-db " + db);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(CountRows(db, "reason LIKE '%died%'"), 0) << again.output;
  EXPECT_GT(CountRows(db, "state='valid'"), kept);
}

// Ctrl-C while the measurement worker hangs in a library: the worker is killed, and the
// candidate in flight leaves nothing behind (no invalid record, no 'measuring' mark), so
// that the next optimize measures it again.
TEST_F(CliTest, InterruptWhileTheWorkerHangsRecordsNothingForTheCandidate) {
  const std::string model = WriteTinyModel();
  const std::string db = (dir_ / "costs.sqlite").string();
  const std::string log = (dir_ / "optimize.log").string();
  const std::string pid_file = (dir_ / "worker.pid").string();
  const std::string plugins = std::string(COLLAGE_TEST_PLUGIN_DIR) + "/hanging";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (std::freopen(log.c_str(), "w", stdout) == nullptr || ::dup2(fileno(stdout), 2) < 0)
      ::_exit(99);
    ::setenv("COLLAGE_TEST_HANG_PID_FILE", pid_file.c_str(), 1);
    ::execl(COLLAGE_CLI_PATH, "collage", "optimize", model.c_str(), "--threads", "1",
            "--no-compare", "--backends", "hanging", "--backend-path", plugins.c_str(), "--cost-db",
            db.c_str(), "--measure-timeout", "60", nullptr);
    ::_exit(98);
  }
  // The hanging kernel writes the worker's pid as it starts to hang.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && ReadAll(pid_file).empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string worker_text = ReadAll(pid_file);
  ASSERT_FALSE(worker_text.empty()) << ReadAll(log);
  const pid_t worker = static_cast<pid_t>(std::stol(worker_text));
  EXPECT_NE(worker, child) << "measured in the worker, not in collage itself";
  EXPECT_EQ(CountRows(db, "backend='hanging' AND state='measuring'"), 1);
  ASSERT_EQ(::kill(child, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const std::string output = ReadAll(log);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 130) << output;
  EXPECT_NE(output.find("interrupted while measuring"), std::string::npos) << output;
  EXPECT_EQ(CountRows(db, "backend='hanging'"), 0)
      << "nothing recorded for the candidate in flight";
  EXPECT_EQ(CountRows(db, "state='measuring'"), 0);
  EXPECT_NE(::kill(worker, 0), 0) << "the worker was killed and reaped";
}

INSTANTIATE_TEST_SUITE_P(Signals, CliInterruptTest, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == SIGINT ? "SIGINT" : "SIGTERM");
                         });

}  // namespace
}  // namespace collage
