// The PostgreSQL cost database against a real server the test starts (throwaway_postgres.h):
// the same promises as the SQLite store (records come back, keys separate, damaged rows are
// measured again, claims lapse with their owners) plus what a database shared by machines
// adds: another machine's claim holds while its lease lasts, of several processes claiming
// one key exactly one wins, and a newer schema or a table collage did not create is refused
// and left alone.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "cost/claim_owner.h"
#include "cost/cost_database.h"
#include "cost_test_rows.h"
#include "throwaway_postgres.h"

namespace collage {
namespace {

using testing::ThrowawayPostgres;

class PostgresCostDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    bool skip = false;
    server_ = ThrowawayPostgres::Shared(&why_not, &skip);
    if (server_ == nullptr && skip) GTEST_SKIP() << why_not;
    ASSERT_NE(server_, nullptr) << why_not;
    // One database per test: the test's name, lowercased for PostgreSQL.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    url_ = server_->CreateDatabase(name);
  }

  std::unique_ptr<CostDatabase> Open() const {
    auto db = CostDatabase::Open(url_, nullptr);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(*db) : nullptr;
  }
  void Sql(const std::string& sql) const {
    EXPECT_EQ(ThrowawayPostgres::Exec(url_, sql), "") << sql;
  }
  std::string Query(const std::string& sql) const { return ThrowawayPostgres::Query(url_, sql); }

  static CostKey Key(const std::string& signature, int threads = 1) {
    return testing::TestCostKey(signature, threads);
  }
  static CostRecord Valid(double ms) { return testing::TestValidRecord(ms); }
  // Inserts a claim on `key` as another collage would have left it.
  void InsertClaim(const CostKey& key, int64_t pid, const std::string& owner,
                   const std::string& machine, double lease_left_s, bool in_process) const {
    Sql(fmt::format(
        "INSERT INTO costs(device, backend, backend_version, signature, threads, method, state, "
        "pid, owner, in_process, claim_machine, claim_expires_at) VALUES('{}', '{}', '{}', '{}', "
        "{}, '{}', 'measuring', {}, '{}', {}, '{}', extract(epoch from now()) + {})",
        key.device, key.backend, key.backend_version, key.signature, key.threads, key.method, pid,
        owner, in_process ? "true" : "false", machine, lease_left_s));
  }

  ThrowawayPostgres* server_ = nullptr;
  std::string url_;
};

TEST_F(PostgresCostDatabaseTest, RecordsComeBackAsWritten) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Put(Key("conv|sig"), Valid(1.5)).ok());
  CostRecord invalid;
  invalid.reason = "does not compile: no implementation";
  ASSERT_TRUE(db->Put(Key("bad|sig"), invalid).ok());
  auto found = db->Find(Key("conv|sig"));
  ASSERT_TRUE(found.ok() && found->has_value()) << found.status().ToString();
  EXPECT_TRUE((*found)->valid);
  EXPECT_DOUBLE_EQ((*found)->median_ms, 1.5);
  EXPECT_DOUBLE_EQ((*found)->p90_ms, 1.65);
  EXPECT_EQ((*found)->samples, 7);
  EXPECT_EQ((*found)->input_layouts, Valid(1.5).input_layouts);
  EXPECT_EQ((*found)->output_layouts, Valid(1.5).output_layouts);
  auto bad = db->Find(Key("bad|sig"));
  ASSERT_TRUE(bad.ok() && bad->has_value());
  EXPECT_FALSE((*bad)->valid);
  EXPECT_EQ((*bad)->reason, "does not compile: no implementation");
  EXPECT_EQ(*db->Count(), 2);
  // A second connection (another optimizer) reads the same rows.
  auto other = Open();
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(*other->Count(), 2);
  EXPECT_EQ(Query("SELECT max(version) FROM collage_schema"),
            std::to_string(CostDatabase::kSchemaVersion));
}

TEST_F(PostgresCostDatabaseTest, EveryKeyFieldSeparatesRecords) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Put(Key("sig"), Valid(1.0)).ok());
  std::vector<CostKey> others = {Key("sig", 2), Key("sig2")};
  for (auto field : {&CostKey::device, &CostKey::backend, &CostKey::backend_version,
                     &CostKey::method}) {
    CostKey other = Key("sig");
    other.*field += "-other";
    others.push_back(other);
  }
  for (const CostKey& other : others) {
    auto found = db->Find(other);
    ASSERT_TRUE(found.ok());
    EXPECT_FALSE(found->has_value()) << other.device << " " << other.backend << " "
                                     << other.backend_version << " " << other.signature << " "
                                     << other.threads << " " << other.method;
  }
  EXPECT_TRUE(db->Find(Key("sig"))->has_value());
}

TEST_F(PostgresCostDatabaseTest, ADamagedRowIsMeasuredAgainNeverTrusted) {
  const std::vector<std::pair<std::string, std::string>> damage = {
      {"nan", "median_ms='NaN'"},          {"infinite", "p90_ms='Infinity'"},
      {"negative", "p90_ms=-5"},           {"huge", "median_ms=1e308"},
      {"garbage layouts", "layouts='{x'"}, {"layouts of another kind", "layouts='{\"inputs\": [\"spiral\"], \"outputs\": []}'"}};
  auto db = Open();
  ASSERT_NE(db, nullptr);
  for (const auto& [sig, unused] : damage) ASSERT_TRUE(db->Put(Key(sig), Valid(2.0)).ok());
  for (const auto& [sig, set] : damage) Sql("UPDATE costs SET " + set + " WHERE signature='" + sig + "'");
  InsertClaim(Key("pid -1"), -1, "", ThisMachineIdentity(), 300, true);
  for (const auto& [sig, unused] : damage) {
    auto found = db->Lookup(Key(sig));
    ASSERT_TRUE(found.ok()) << sig << ": " << found.status().ToString();
    EXPECT_FALSE(found->record.has_value()) << sig << " was trusted: " << found->record->median_ms;
    EXPECT_FALSE(found->claimed_elsewhere) << sig;
  }
  auto orphan = db->Lookup(Key("pid -1"));
  ASSERT_TRUE(orphan.ok());
  EXPECT_FALSE(orphan->record.has_value()) << "a claim with pid -1 is damage, not a crash";
  EXPECT_FALSE(orphan->claimed_elsewhere);
  // Measured again, the row is replaced; the damaged ones are not exported either.
  ASSERT_TRUE(db->Put(Key("nan"), Valid(3.0)).ok());
  EXPECT_DOUBLE_EQ((*db->Find(Key("nan")))->median_ms, 3.0);
  int rows = 0;
  ASSERT_TRUE(db->ForEachRow([&](const StoredCost&) {
                  ++rows;
                  return Status();
                }).ok());
  EXPECT_EQ(rows, 1);
}

TEST_F(PostgresCostDatabaseTest, AClaimOfThisMachineHoldsWhileItsProcessLives) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  // This process's parent is alive: its claim is a measurement coming.
  InsertClaim(Key("live"), ::getppid(), ProcessIdentity(::getppid()), ThisMachineIdentity(),
              -100, false);
  auto live = db->Lookup(Key("live"));
  ASSERT_TRUE(live.ok());
  EXPECT_TRUE(live->claimed_elsewhere) << "a live process's claim was ignored (its lease does "
                                          "not matter on its own machine)";
  EXPECT_FALSE(*db->Claim(Key("live"), false));

  // Killed without closing (SIGKILL): its claims lapse at once, however long their lease.
  for (bool in_process : {false, true}) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto mine = CostDatabase::Open(url_, nullptr);
      if (!mine.ok() || !(*mine)->MarkMeasuring(Key(in_process ? "crashes" : "killed"), in_process).ok())
        ::_exit(1);
      ::kill(::getpid(), SIGKILL);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));
  }
  ASSERT_EQ(Query("SELECT count(*) FROM costs WHERE state='measuring'"), "3");
  auto killed = db->Lookup(Key("killed"));
  ASSERT_TRUE(killed.ok());
  EXPECT_FALSE(killed->record.has_value());
  EXPECT_FALSE(killed->claimed_elsewhere) << "a killed optimizer's claim held";
  EXPECT_TRUE(*db->Claim(Key("killed"), false)) << "a lapsed claim was not taken over";
  // Died measuring in its own process, as a crash inside a library ends it: not tried again.
  auto crashed = db->Find(Key("crashes"));
  ASSERT_TRUE(crashed.ok() && crashed->has_value());
  EXPECT_FALSE((*crashed)->valid);
  EXPECT_NE((*crashed)->reason.find("died"), std::string::npos) << (*crashed)->reason;
}

TEST_F(PostgresCostDatabaseTest, AClaimOfAnotherMachineHoldsWhileItsLeaseLasts) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  // A pid that exists nowhere here: on another machine only the lease counts.
  InsertClaim(Key("leased"), 999999, "999999:1", "elsewhere/boot", 200, true);
  InsertClaim(Key("expired"), ::getpid(), OwnProcessIdentity(), "elsewhere/boot", -1, true);
  auto leased = db->Lookup(Key("leased"));
  ASSERT_TRUE(leased.ok());
  EXPECT_TRUE(leased->claimed_elsewhere);
  EXPECT_FALSE(*db->Claim(Key("leased"), false));
  // Expired: the owner stopped (a machine switched off looks the same as a crash): measured
  // again, not condemned, even in-process.
  auto expired = db->Lookup(Key("expired"));
  ASSERT_TRUE(expired.ok());
  EXPECT_FALSE(expired->claimed_elsewhere);
  EXPECT_FALSE(expired->record.has_value());
  EXPECT_TRUE(*db->Claim(Key("expired"), false));
  EXPECT_EQ(Query("SELECT claim_machine FROM costs WHERE signature='expired'"),
            ThisMachineIdentity());
  // The new lease is the server's now plus kClaimLeaseSeconds.
  const double left = std::atof(
      Query("SELECT claim_expires_at - extract(epoch from now()) FROM costs WHERE "
            "signature='expired'")
          .c_str());
  EXPECT_NEAR(left, CostDatabase::kClaimLeaseSeconds, 30);
  // A finished record is never replaced by a claim.
  ASSERT_TRUE(db->Put(Key("done"), Valid(3.0)).ok());
  EXPECT_FALSE(*db->Claim(Key("done"), false));
  EXPECT_TRUE((*db->Find(Key("done")))->valid);
}

TEST_F(PostgresCostDatabaseTest, ClosingRemovesThisProcesssClaimsOnly) {
  ASSERT_NE(Open(), nullptr);  // the schema
  InsertClaim(Key("theirs"), 999999, "999999:1", "elsewhere/boot", 200, false);
  {
    auto db = Open();
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(*db->Claim(Key("mine"), false));
    ASSERT_TRUE(db->RenewClaims().ok());
    EXPECT_EQ(Query("SELECT count(*) FROM costs WHERE state='measuring'"), "2");
  }
  EXPECT_EQ(Query("SELECT string_agg(signature, ',') FROM costs WHERE state='measuring'"),
            "theirs");
}

TEST_F(PostgresCostDatabaseTest, OfProcessesClaimingOneKeyAtOnceExactlyOneWins) {
  ASSERT_NE(Open(), nullptr);  // the schema
  constexpr int kProcesses = 6;
  int start[2], results[2], release[2];
  ASSERT_EQ(::pipe(start), 0);
  ASSERT_EQ(::pipe(results), 0);
  ASSERT_EQ(::pipe(release), 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(start[1]);
      ::close(release[1]);
      auto db = CostDatabase::Open(url_, nullptr);
      char go = 0;
      if (::read(start[0], &go, 1) != 0) ::_exit(3);  // every child waits for the close
      StatusOr<bool> won = db.ok() ? (*db)->Claim(Key("contested"), false) : StatusOr<bool>(db.status());
      const char answer = !won.ok() ? 'e' : *won ? 'w' : 'l';
      if (!won.ok()) std::fprintf(stderr, "%s\n", won.status().ToString().c_str());
      if (::write(results[1], &answer, 1) != 1) ::_exit(4);
      // Alive until every claimer has decided: a claim of a process gone would lapse.
      (void)::read(release[0], &go, 1);
      ::_exit(0);
    }
    children.push_back(child);
  }
  ::close(start[0]);
  ::close(start[1]);  // all at once
  std::string answers;
  for (int p = 0; p < kProcesses; ++p) {
    char answer = 0;
    ASSERT_EQ(::read(results[0], &answer, 1), 1);
    answers += answer;
  }
  ::close(release[1]);
  for (pid_t child : children) ::waitpid(child, nullptr, 0);
  EXPECT_EQ(std::count(answers.begin(), answers.end(), 'w'), 1) << answers;
  EXPECT_EQ(std::count(answers.begin(), answers.end(), 'e'), 0) << answers;
}

TEST_F(PostgresCostDatabaseTest, FirstOpensAtOnceCreateTheSchemaOnce) {
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto db = CostDatabase::Open(url_, nullptr);
      ::_exit(db.ok() && (*db)->Put(Key(fmt::format("p{}", p)), Valid(1)).ok() ? 0 : 1);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(Query("SELECT count(*) FROM collage_schema"), "1");
  EXPECT_EQ(Query("SELECT count(*) FROM costs"), "4");
}

TEST_F(PostgresCostDatabaseTest, ANewerSchemaIsRefusedAndLeftAlone) {
  {
    auto db = Open();
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->Put(Key("kept"), Valid(1)).ok());
  }
  Sql("UPDATE collage_schema SET version=99");
  auto db = CostDatabase::Open(url_, nullptr);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("schema version 99"), std::string::npos)
      << db.status().message();
  EXPECT_EQ(Query("SELECT count(*) FROM costs"), "1");
  EXPECT_EQ(Query("SELECT version FROM collage_schema"), "99");
}

TEST_F(PostgresCostDatabaseTest, AForeignCostsTableIsRefusedAndKept) {
  Sql("CREATE TABLE costs(item TEXT, price REAL); INSERT INTO costs VALUES('coffee', 2.5)");
  auto db = CostDatabase::Open(url_, nullptr);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("collage did not create"), std::string::npos)
      << db.status().message();
  EXPECT_EQ(Query("SELECT item FROM costs"), "coffee");
  EXPECT_EQ(Query("SELECT count(*) FROM information_schema.tables WHERE table_name IN "
                  "('collage_schema', 'optimize_runs')"),
            "0")
      << "collage created tables beside another program's";
}

TEST_F(PostgresCostDatabaseTest, AnUnreachableServerIsAClearErrorWithoutThePassword) {
  // Port 1 on this machine: nothing listens, the refusal is immediate.
  const std::string url = "postgresql://alice:s3cret-pw@127.0.0.1:1/costs";
  auto db = CostDatabase::Open(url, nullptr);
  ASSERT_FALSE(db.ok());
  const std::string message = db.status().message();
  EXPECT_NE(message.find("cannot connect to cost database postgresql://alice:***@127.0.0.1:1/costs"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("s3cret"), std::string::npos) << message;
  auto param = CostDatabase::Open(server_->Url("nosuchdb") + "&password=s3cret-pw", nullptr);
  ASSERT_FALSE(param.ok());
  EXPECT_NE(param.status().message().find("nosuchdb"), std::string::npos);
  EXPECT_EQ(param.status().message().find("s3cret"), std::string::npos)
      << param.status().message();
}

TEST_F(PostgresCostDatabaseTest, ALostConnectionIsAnErrorNotACrash) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Put(Key("before"), Valid(1)).ok());
  Sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name='collage'");
  auto found = db->Lookup(Key("before"));
  ASSERT_FALSE(found.ok());
  EXPECT_NE(found.status().message().find("cost database postgresql:///"), std::string::npos)
      << found.status().message();
  EXPECT_FALSE(db->Put(Key("after"), Valid(1)).ok());
}

TEST_F(PostgresCostDatabaseTest, ARowCopiedInKeepsTheNewerAndOptimizesAreCounted) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  StoredCost row{Key("copied"), Valid(2.0), 1000, 0};
  EXPECT_TRUE(*db->PutRow(row));
  StoredCost older = row;
  older.record.median_ms = 9;
  older.measured_at = 999;
  EXPECT_FALSE(*db->PutRow(older));
  EXPECT_DOUBLE_EQ((*db->Find(Key("copied")))->median_ms, 2.0);
  ASSERT_TRUE(*db->Claim(Key("claimed"), false));
  ASSERT_TRUE(db->RecordOptimize({100, "m/1", "a.onnx", 10, 10, 0}).ok());
  ASSERT_TRUE(db->RecordOptimize({200, "m/2", "b.onnx", 10, 2, 8}).ok());
  auto stats = db->Stats(1);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->rows.size(), 1u);
  EXPECT_EQ(stats->rows[0].valid, 1);
  EXPECT_EQ(stats->claims, 1);
  ASSERT_EQ(stats->recent_optimizes.size(), 1u);
  EXPECT_EQ(stats->recent_optimizes[0].model, "b.onnx");
  EXPECT_EQ(stats->recent_optimizes[0].candidates_found, 8);
}

}  // namespace
}  // namespace collage
