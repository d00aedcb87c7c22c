// Ctrl-C (SIGINT) or SIGTERM while `collage optimize` measures: it stops at the next
// candidate with exit code 130, keeps every measurement it made, and leaves no mark that a
// later run would take for a crashed candidate; the next optimize finishes the work. An
// optimize that dies (SIGKILL, a closed terminal's SIGHUP, a Ctrl-C before its handler is
// set) leaves a claim that lapses with it; a worker killed from outside is measured again.
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

// Starts `collage optimize` on the tiny model with the hanging plug-in's backend, output to
// `log`; returns the optimizer's pid once the worker hangs in the candidate (its pid in
// `worker`).
pid_t StartHangingOptimize(const std::string& model, const std::string& db, const std::string& log,
                           const std::string& pid_file, const char* timeout, pid_t* worker) {
  const std::string plugins = std::string(COLLAGE_TEST_PLUGIN_DIR) + "/hanging";
  fs::remove(pid_file);
  const pid_t child = ::fork();
  if (child == 0) {
    if (std::freopen(log.c_str(), "w", stdout) == nullptr || ::dup2(fileno(stdout), 2) < 0)
      ::_exit(99);
    ::setenv("COLLAGE_TEST_HANG_PID_FILE", pid_file.c_str(), 1);
    ::execl(COLLAGE_CLI_PATH, "collage", "optimize", model.c_str(), "--threads", "1",
            "--no-compare", "--backends", "hanging", "--backend-path", plugins.c_str(), "--cost-db",
            db.c_str(), "--measure-timeout", timeout, nullptr);
    ::_exit(98);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline && ReadAll(pid_file).empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string text = ReadAll(pid_file);
  *worker = text.empty() ? -1 : static_cast<pid_t>(std::stol(text));
  return child;
}

// Optimizes once more under a 1 s limit and waits for it: the candidate is measured again
// when its worker hangs in it once more (and writes its pid). `output`: that run's log.
void OptimizeAgainUnderAShortLimit(const std::string& model, const std::string& db,
                                   const std::string& log, const std::string& pid_file,
                                   std::string* output) {
  pid_t worker = -1;
  const pid_t again = StartHangingOptimize(model, db, log, pid_file, "1", &worker);
  ASSERT_GT(worker, 0) << "the candidate was not measured again\n" << ReadAll(log);
  int status = 0;
  ASSERT_EQ(::waitpid(again, &status, 0), again);
  *output = ReadAll(log);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << *output;
}

class CliDeathTest : public CliTest, public ::testing::WithParamInterface<int> {};

// The optimizer dies while its worker measures: the claim it left lapses, and the next
// optimize measures the candidate again (here it times out, under a short limit), never
// "the process measuring it died; not tried again".
TEST_P(CliDeathTest, AClaimLapsesWhenTheOptimizeDiesAndTheNextOneMeasuresAgain) {
  const std::string model = WriteTinyModel();
  const std::string db = (dir_ / "costs.sqlite").string();
  const std::string log = (dir_ / "optimize.log").string();
  const std::string pid_file = (dir_ / "worker.pid").string();
  pid_t worker = -1;
  const pid_t child = StartHangingOptimize(model, db, log, pid_file, "60", &worker);
  ASSERT_GE(child, 0);
  ASSERT_GT(worker, 0) << ReadAll(log);
  ASSERT_EQ(CountRows(db, "backend='hanging' AND state='measuring'"), 1);
  ASSERT_EQ(::kill(child, GetParam()), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "expected the optimize to die of the signal";
  ::kill(worker, SIGKILL);  // it follows its parent; made sure of here
  EXPECT_EQ(CountRows(db, "backend='hanging' AND state='measuring'"), 1) << "the claim is left";

  std::string output;
  ASSERT_NO_FATAL_FAILURE(OptimizeAgainUnderAShortLimit(model, db, log, pid_file, &output));
  EXPECT_EQ(CountRows(db, "reason LIKE '%died%'"), 0) << output;
  EXPECT_EQ(CountRows(db,
                      "backend='hanging' AND reason LIKE 'timed out after 1 s%' AND "
                      "time_limit_s=1"),
            1)
      << output;
}

INSTANTIATE_TEST_SUITE_P(Signals, CliDeathTest, ::testing::Values(SIGKILL, SIGHUP),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == SIGKILL ? "SIGKILL" : "SIGHUP");
                         });

// A worker killed from outside (the out-of-memory killer's SIGKILL) while the optimizer
// watches: recorded as such, and measured once more by the next optimize.
TEST_F(CliTest, AWorkerKilledFromOutsideIsMeasuredOnceMore) {
  const std::string model = WriteTinyModel();
  const std::string db = (dir_ / "costs.sqlite").string();
  const std::string log = (dir_ / "optimize.log").string();
  const std::string pid_file = (dir_ / "worker.pid").string();
  pid_t worker = -1;
  const pid_t child = StartHangingOptimize(model, db, log, pid_file, "60", &worker);
  ASSERT_GT(worker, 0) << ReadAll(log);
  ASSERT_EQ(::kill(worker, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  std::string output = ReadAll(log);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_EQ(CountRows(db,
                      "backend='hanging' AND state='invalid' AND outside_kills=1 AND "
                      "reason LIKE '%SIGKILL%signal from outside%'"),
            1)
      << output;

  ASSERT_NO_FATAL_FAILURE(OptimizeAgainUnderAShortLimit(model, db, log, pid_file, &output));
  EXPECT_EQ(CountRows(db, "backend='hanging' AND reason LIKE 'timed out%'"), 1) << output;
}

// Ctrl-C at moments from the very start (before the handler is set) to mid-measurement:
// whatever the moment, the next optimize runs clean and nothing is condemned.
TEST_F(CliTest, AnInterruptAtAnyMomentLeavesNothingCondemned) {
  const std::string model = WriteTinyModel();
  const std::string db = (dir_ / "costs.sqlite").string();
  for (int delay_ms : {0, 2, 10, 40, 150}) {
    SCOPED_TRACE(delay_ms);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      if (std::freopen("/dev/null", "w", stdout) == nullptr || ::dup2(fileno(stdout), 2) < 0)
        ::_exit(99);
      ::execl(COLLAGE_CLI_PATH, "collage", "optimize", model.c_str(), "--threads", "1",
              "--no-compare", "--cost-db", db.c_str(), nullptr);
      ::_exit(98);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(child, SIGINT);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    if (fs::exists(db)) {
      EXPECT_EQ(CountRows(db, "reason LIKE '%died%'"), 0);
    }
  }
  CommandResult again = RunCli("optimize " + model + " --threads 1 --no-compare --cost-db " + db);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output.find("not tried again"), std::string::npos) << again.output;
  EXPECT_EQ(CountRows(db, "reason LIKE '%died%'"), 0);
}

INSTANTIATE_TEST_SUITE_P(Signals, CliInterruptTest, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(info.param == SIGINT ? "SIGINT" : "SIGTERM");
                         });

}  // namespace
}  // namespace collage
