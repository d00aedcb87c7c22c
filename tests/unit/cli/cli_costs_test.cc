// A team's cost database as `collage` users meet it: optimizes sharing one PostgreSQL database
// (one after the other, three at once, one killed midway) measure each candidate once, and
// `collage costs` copies costs between SQLite files and PostgreSQL — this machine's rows of
// this build's libraries only — and says what a database holds. The server is the tests' own
// (throwaway_postgres.h).
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_test_util.h"
#include "throwaway_postgres.h"

namespace collage {
namespace {

using testing::CliTest;
using testing::CommandResult;
using testing::ReadAll;
using testing::RunCli;
using testing::ThrowawayPostgres;

class CliCostsTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    std::string why_not;
    bool skip = false;
    server_ = ThrowawayPostgres::Shared(&why_not, &skip);
    if (server_ == nullptr && skip) GTEST_SKIP() << why_not;
    ASSERT_NE(server_, nullptr) << why_not;
    url_ = Database("");
    model_ = WriteTinyModel();
  }

  // A fresh database named after the test (and `suffix`).
  std::string Database(const std::string& suffix) {
    std::string name = std::string("cli_") +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return server_->CreateDatabase(name);
  }

  // The optimize command line, quick: one thread, no calibration nor end-to-end decision.
  std::string OptimizeArgs(const std::string& db, const std::string& json) const {
    return "optimize " + model_ + " --threads 1 --calibrate 0 --no-compare --cost-db '" + db +
           "' --json " + json;
  }

  static nlohmann::json Measurements(const std::string& json_path) {
    nlohmann::json j = nlohmann::json::parse(ReadAll(json_path), nullptr, false);
    return j.is_object() ? j["measurements"] : nlohmann::json();
  }

  std::string Query(const std::string& sql) const { return ThrowawayPostgres::Query(url_, sql); }

  ThrowawayPostgres* server_ = nullptr;
  std::string url_;
  std::string model_;
};

TEST_F(CliCostsTest, ASecondOptimizeOnTheSharedDatabaseMeasuresNothing) {
  const std::string first = (dir_ / "first.json").string();
  CommandResult r = RunCli(OptimizeArgs(url_, first));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json m1 = Measurements(first);
  const int distinct = m1["candidates_distinct"].get<int>();
  ASSERT_GT(distinct, 0);
  EXPECT_EQ(m1["candidates_measured"].get<int>(), distinct);
  // The second names the database through COLLAGE_COST_DB only.
  const std::string second = (dir_ / "second.json").string();
  r = RunCli("optimize " + model_ + " --threads 1 --calibrate 0 --no-compare --json " + second,
             "COLLAGE_COST_DB='" + url_ + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(" 0 measured now"), std::string::npos) << r.output;
  const nlohmann::json m2 = Measurements(second);
  EXPECT_EQ(m2["candidates_measured"].get<int>(), 0);
  EXPECT_EQ(m2["candidates_found"].get<int>(), distinct);
  EXPECT_EQ(Query("SELECT count(*) FROM optimize_runs"), "2");
  // --cost-db wins over COLLAGE_COST_DB.
  const std::string third = (dir_ / "third.json").string();
  r = RunCli(OptimizeArgs((dir_ / "own.sqlite").string(), third), "COLLAGE_COST_DB='" + url_ + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Measurements(third)["candidates_measured"].get<int>(), distinct);
}

TEST_F(CliCostsTest, ThreeOptimizesAtOnceMeasureEveryCandidateOnce) {
  std::string script;
  for (int i = 0; i < 3; ++i) {
    script += std::string(COLLAGE_CLI_PATH) + " " +
              OptimizeArgs(url_, (dir_ / ("run" + std::to_string(i) + ".json")).string()) +
              " > " + (dir_ / ("run" + std::to_string(i) + ".log")).string() + " 2>&1 & ";
  }
  ASSERT_EQ(std::system((script + "wait").c_str()), 0);
  int measured = 0;
  int distinct = -1;
  for (int i = 0; i < 3; ++i) {
    const nlohmann::json m = Measurements((dir_ / ("run" + std::to_string(i) + ".json")).string());
    ASSERT_TRUE(m.is_object()) << ReadAll(dir_ / ("run" + std::to_string(i) + ".log"));
    if (distinct < 0) distinct = m["candidates_distinct"].get<int>();
    EXPECT_EQ(m["candidates_distinct"].get<int>(), distinct);
    EXPECT_EQ(m["candidates_measured"].get<int>() + m["candidates_found"].get<int>(), distinct)
        << "optimize " << i << " left candidates unresolved";
    measured += m["candidates_measured"].get<int>();
  }
  EXPECT_EQ(measured, distinct) << "a candidate was measured by two optimizes";
  EXPECT_EQ(Query("SELECT count(*) FROM costs WHERE state='measuring'"), "0")
      << "claims were left behind";
}

TEST_F(CliCostsTest, AKilledOptimizersClaimsDoNotHoldUpTheNext) {
  // Killed while a claim is in flight; on so small a model the optimize may finish before a
  // claim is seen: tried on fresh databases until one is.
  bool killed_with_claims = false;
  std::string db;
  for (int attempt = 0; attempt < 5 && !killed_with_claims; ++attempt) {
    db = Database("_" + std::to_string(attempt));
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const std::string args = OptimizeArgs(db, (dir_ / "killed.json").string());
      ::execl("/bin/sh", "sh", "-c",
              ("exec " + std::string(COLLAGE_CLI_PATH) + " " + args + " >/dev/null 2>&1").c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      if (ThrowawayPostgres::Query(db, "SELECT count(*) FROM costs WHERE state='measuring'") >
          "0") {
        ::kill(child, SIGKILL);
        killed_with_claims = true;
        break;
      }
      if (::waitpid(child, nullptr, WNOHANG) == child) break;  // finished first
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ::waitpid(child, nullptr, 0);
  }
  ASSERT_TRUE(killed_with_claims) << "no optimize was caught with a claim in flight";
  ASSERT_NE(ThrowawayPostgres::Query(db, "SELECT count(*) FROM costs WHERE state='measuring'"),
            "0")
      << "the killed optimizer left no claim: nothing to test";
  const std::string next = (dir_ / "next.json").string();
  CommandResult r = RunCli(OptimizeArgs(db, next) + " --measure-timeout 30");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json m = Measurements(next);
  EXPECT_EQ(m["candidates_measured"].get<int>() + m["candidates_found"].get<int>(),
            m["candidates_distinct"].get<int>());
  EXPECT_GT(m["candidates_measured"].get<int>(), 0);
  EXPECT_EQ(ThrowawayPostgres::Query(db, "SELECT count(*) FROM costs WHERE state='measuring'"),
            "0");
  EXPECT_EQ(ThrowawayPostgres::Query(db, "SELECT count(*) FROM costs WHERE state='invalid'"), "0")
      << "a killed optimizer's candidates were condemned";
}

TEST_F(CliCostsTest, CostsTravelBetweenSqliteAndPostgresThisMachinesOnly) {
  CommandResult r = RunCli(OptimizeArgs(url_, (dir_ / "o.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string rows = Query("SELECT count(*) FROM costs");
  ASSERT_NE(rows, "0");

  const std::string file = (dir_ / "export.sqlite").string();
  r = RunCli("costs export " + file + " --cost-db '" + url_ + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("exported " + rows + " rows"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("refused 0 rows of other devices, 0 of other library versions"),
            std::string::npos)
      << r.output;

  // Rows another machine or another library version measured, added to the file.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &raw), SQLITE_OK);
  const char* foreign =
      "INSERT INTO costs(device, backend, backend_version, signature, threads, method, state, "
      "median_ms, p90_ms, samples, layouts, measured_at) SELECT 'a laptop', backend, "
      "backend_version, signature, threads, method, state, median_ms, p90_ms, samples, layouts, "
      "measured_at FROM costs WHERE backend='native' LIMIT 1;"
      "INSERT INTO costs(device, backend, backend_version, signature, threads, method, state, "
      "median_ms, p90_ms, samples, layouts, measured_at) SELECT device, backend, 'collage 0.1', "
      "signature, threads, method, state, median_ms, p90_ms, samples, layouts, measured_at "
      "FROM costs WHERE backend='native' LIMIT 1;";
  ASSERT_EQ(sqlite3_exec(raw, foreign, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);

  // Into a fresh SQLite file, and into a second PostgreSQL database with merge.
  const std::string local = (dir_ / "local.sqlite").string();
  r = RunCli("costs import " + file + " --cost-db " + local);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("imported " + rows + " rows"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("refused 1 rows of other devices, 1 of other library versions"),
            std::string::npos)
      << r.output;
  const std::string other = Database("_merged");
  r = RunCli("costs merge " + local + " '" + url_ + "' --into '" + other + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("merged " + rows + " rows"), std::string::npos) << r.output;
  EXPECT_EQ(ThrowawayPostgres::Query(other, "SELECT count(*) FROM costs"), rows);
  // The merged database prices the same optimize completely.
  r = RunCli(OptimizeArgs(other, (dir_ / "again.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Measurements((dir_ / "again.json").string())["candidates_measured"].get<int>(), 0);
  // Merging again changes nothing: every row there is as new.
  r = RunCli("costs merge " + local + " --into '" + other + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("merged 0 rows"), std::string::npos) << r.output;
}

TEST_F(CliCostsTest, AHostileSourceIsRefusedAndTheDestinationKept) {
  CommandResult r = RunCli(OptimizeArgs(url_, (dir_ / "o.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string rows = Query("SELECT count(*) FROM costs");
  const std::string model_bytes = ReadAll(model_);
  for (const std::string& source : {model_, std::string("/dev/zero"),
                                    (dir_ / "missing.sqlite").string()}) {
    r = RunCli("costs import " + source + " --cost-db '" + url_ + "'");
    EXPECT_NE(r.exit_code, 0) << source << ": " << r.output;
    EXPECT_NE(r.output.find("error: "), std::string::npos) << r.output;
    EXPECT_EQ(Query("SELECT count(*) FROM costs"), rows);
  }
  // Export never writes over a file that is not a cost database.
  r = RunCli("costs export " + model_ + " --cost-db '" + url_ + "'");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadAll(model_), model_bytes);
  // An unreachable server: a clear error, and never its password.
  r = RunCli("costs stats --cost-db postgresql://alice:s3cret-pw@127.0.0.1:1/costs");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("cannot connect to cost database postgresql://alice:***@127.0.0.1:1"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("s3cret"), std::string::npos) << r.output;
}

TEST_F(CliCostsTest, StatsCountRowsClaimsAndTheLastOptimizes) {
  for (const char* name : {"a.json", "b.json"}) {
    CommandResult r = RunCli(OptimizeArgs(url_, (dir_ / name).string()));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  const int distinct = Measurements((dir_ / "a.json").string())["candidates_distinct"].get<int>();
  const std::string rows = Query("SELECT count(*) FROM costs");
  const std::string native = Query("SELECT count(*) FROM costs WHERE backend='native'");
  CommandResult r = RunCli("costs stats --cost-db '" + url_ + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(": " + rows + " rows (" + rows + " valid, 0 invalid)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("  native "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(native + " valid"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("claims in flight: 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(std::to_string(distinct) + " distinct"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hit rate 100%"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hit rate 0%"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tiny.onnx"), std::string::npos) << r.output;
  // The newest first.
  EXPECT_LT(r.output.find("hit rate 100%"), r.output.find("hit rate 0%")) << r.output;
}

}  // namespace
}  // namespace collage
