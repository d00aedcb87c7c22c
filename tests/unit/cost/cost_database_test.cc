// The cost database as its users rely on it: records come back as written, keys separate
// what must be separate, a file that is not a usable database is moved aside (never lost)
// and replaced, a claim lapses with its process (a crash inside this process is remembered as
// invalid), and several processes writing at once corrupt nothing.
#include "cost/cost_database.h"
#include "../util/file_size_limit.h"
#include "cost_test_rows.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

namespace collage {
namespace {

namespace fs = std::filesystem;

class CostDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("collage-costdb-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "costs.sqlite").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static CostKey Key(const std::string& signature, int threads = 1) {
    return testing::TestCostKey(signature, threads);
  }
  static CostRecord Valid(double ms) { return testing::TestValidRecord(ms); }
  std::vector<fs::path> MovedAside() const {
    std::vector<fs::path> moved;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      if (entry.path().filename().string().find(".corrupt-") != std::string::npos)
        moved.push_back(entry.path());
    }
    return moved;
  }
  // Runs `sql` on the file directly, as another program (or an older collage) would.
  void ExecRaw(const std::string& sql) const {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(raw);
  }
  // Opens the file the way collage does, expecting it kept in place and no warning.
  std::unique_ptr<CostDatabase> OpenInPlace() const {
    std::vector<std::string> warnings;
    auto db = CostDatabase::Open(path_, &warnings);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_TRUE(warnings.empty());
    EXPECT_TRUE(MovedAside().empty());
    return db.ok() ? std::move(*db) : nullptr;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(CostDatabaseTest, RecordsComeBackAsWritten) {
  auto db = CostDatabase::Open(path_, nullptr);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE((*db)->Put(Key("conv|sig"), Valid(1.5)).ok());
  CostRecord invalid;
  invalid.reason = "does not compile: no implementation";
  ASSERT_TRUE((*db)->Put(Key("bad|sig"), invalid).ok());

  auto found = (*db)->Find(Key("conv|sig"));
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_TRUE((*found)->valid);
  EXPECT_DOUBLE_EQ((*found)->median_ms, 1.5);
  EXPECT_DOUBLE_EQ((*found)->p90_ms, 1.65);
  EXPECT_EQ((*found)->samples, 7);
  EXPECT_EQ((*found)->input_layouts, Valid(1.5).input_layouts);
  EXPECT_EQ((*found)->output_layouts, Valid(1.5).output_layouts);
  auto bad = (*db)->Find(Key("bad|sig"));
  ASSERT_TRUE(bad.ok() && bad->has_value());
  EXPECT_FALSE((*bad)->valid);
  EXPECT_EQ((*bad)->reason, "does not compile: no implementation");
  EXPECT_EQ(*(*db)->Count(), 2);
}

TEST_F(CostDatabaseTest, EveryKeyFieldSeparatesRecords) {
  auto db = CostDatabase::Open(path_, nullptr);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Put(Key("sig"), Valid(1.0)).ok());
  for (CostKey other : {Key("sig", 2), Key("sig2")}) {
    EXPECT_FALSE((*db)->Find(other)->has_value()) << other.signature << " " << other.threads;
  }
  CostKey other_device = Key("sig");
  other_device.device = "another";
  CostKey other_version = Key("sig");
  other_version.backend_version = "oneDNN 3.0";
  CostKey other_backend = Key("sig");
  other_backend.backend = "xnnpack";
  for (const CostKey& key : {other_device, other_version, other_backend}) {
    EXPECT_FALSE((*db)->Find(key)->has_value());
  }
}

TEST_F(CostDatabaseTest, PersistsAcrossOpensWithTheSchemaVersion) {
  {
    auto db = CostDatabase::Open(path_, nullptr);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Put(Key("sig"), Valid(2.0)).ok());
  }
  std::vector<std::string> warnings;
  auto db = CostDatabase::Open(path_, &warnings);
  ASSERT_TRUE(db.ok());
  EXPECT_TRUE(warnings.empty());
  EXPECT_DOUBLE_EQ((*(*db)->Find(Key("sig")))->median_ms, 2.0);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &stmt, nullptr);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), CostDatabase::kSchemaVersion);
  sqlite3_finalize(stmt);
  sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &stmt, nullptr);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
}

TEST_F(CostDatabaseTest, AFileThatIsNotSqliteIsRefusedAndLeftAsItIs) {
  const std::string garbage = "this is not a database, but it is somebody's file\n";
  std::ofstream(path_) << garbage;
  std::vector<std::string> warnings;
  auto db = CostDatabase::Open(path_, &warnings);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("is not a SQLite database"), std::string::npos)
      << db.status().message();
  EXPECT_TRUE(MovedAside().empty());
  std::ifstream in(path_);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, garbage);
}

// A SQLite file damaged past its header: what it still holds is kept aside, a fresh
// database takes its place.
TEST_F(CostDatabaseTest, TwoDamagedFilesInOneSecondAreBothKept) {
  const std::string header("SQLite format 3\0", 16);
  for (const char* garbage : {"first damaged file", "second damaged file"}) {
    std::ofstream(path_) << header << garbage;
    std::vector<std::string> warnings;
    auto db = CostDatabase::Open(path_, &warnings);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("moved it to"), std::string::npos) << warnings[0];
  }
  std::vector<std::string> kept;
  for (const fs::path& moved : MovedAside()) {
    if (moved.string().find("-wal") != std::string::npos ||
        moved.string().find("-shm") != std::string::npos)
      continue;
    std::ifstream in(moved);
    kept.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(kept, (std::vector<std::string>{header + "first damaged file",
                                            header + "second damaged file"}));
}

// A database this user may not write (a team's shared file, mode 0444 or owned by another
// user) is read: its costs are used and nothing is written, and no "full disk" is blamed.
TEST_F(CostDatabaseTest, ADatabaseThisUserCannotWriteIsUsedReadOnly) {
  {
    auto db = CostDatabase::Open(path_, nullptr);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Put(Key("shared"), Valid(4.0)).ok());
  }
  ASSERT_EQ(::chmod(path_.c_str(), 0444), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0555), 0);
  // Root may write anything: the reader is then another user.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(2);
    std::vector<std::string> warnings;
    auto db = CostDatabase::Open(path_, &warnings);
    if (!db.ok()) {
      std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
      ::_exit(3);
    }
    if (warnings.size() != 1 || warnings[0].find("read-only") == std::string::npos) ::_exit(4);
    auto found = (*db)->Find(Key("shared"));
    if (!found.ok() || !found->has_value() || (*found)->median_ms != 4.0) ::_exit(5);
    if (!(*db)->MarkMeasuring(Key("new"), false).ok() || !(*db)->Put(Key("new"), Valid(1.0)).ok())
      ::_exit(6);
    auto kept = (*db)->Find(Key("new"));
    ::_exit(kept.ok() && !kept->has_value() ? 0 : 7);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ::chmod(dir_.c_str(), 0755);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

TEST_F(CostDatabaseTest, ATruncatedDatabaseIsMovedAside) {
  {
    auto db = CostDatabase::Open(path_, nullptr);
    ASSERT_TRUE(db.ok());
    for (int i = 0; i < 3000; ++i)
      ASSERT_TRUE((*db)->Put(Key("sig" + std::to_string(i)), Valid(i)).ok());
  }
  ASSERT_FALSE(fs::exists(path_ + "-wal") && fs::file_size(path_ + "-wal") > 0);
  fs::resize_file(path_, fs::file_size(path_) / 2);
  std::vector<std::string> warnings;
  auto db = CostDatabase::Open(path_, &warnings);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(warnings.size(), 1u);
  EXPECT_EQ(MovedAside().size(), 1u);
  EXPECT_EQ(*(*db)->Count(), 0);
}

TEST_F(CostDatabaseTest, AnotherSqliteDatabaseIsNotTakenOver) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE photos(id INTEGER)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  std::vector<std::string> warnings;
  auto db = CostDatabase::Open(path_, &warnings);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(warnings.size(), 1u);
  EXPECT_EQ(MovedAside().size(), 1u);
}

TEST_F(CostDatabaseTest, ANewerSchemaIsRefusedAndLeftAlone) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  auto db = CostDatabase::Open(path_, nullptr);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("schema version 99"), std::string::npos)
      << db.status().message();
  EXPECT_TRUE(MovedAside().empty());
}

// A child process that opens the database, claims `signature` and dies without finishing.
void ClaimAndDie(const std::string& path, const CostKey& key, bool in_this_process) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto db = CostDatabase::Open(path, nullptr);
    ::_exit(db.ok() && (*db)->MarkMeasuring(key, in_this_process).ok() ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// Several processes claiming one key at once: one wins and measures, the others are told
// that it is claimed elsewhere while its owner lives, and wait for its record.
TEST_F(CostDatabaseTest, OfSeveralProcessesClaimingOneKeyExactlyOneWins) {
  { ASSERT_TRUE(CostDatabase::Open(path_, nullptr).ok()); }  // created before the race
  constexpr int kClaimers = 4;
  int answers[2];
  int release[2];
  ASSERT_EQ(::pipe(answers), 0);
  ASSERT_EQ(::pipe(release), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < kClaimers; ++i) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(answers[0]);
      ::close(release[1]);
      auto db = CostDatabase::Open(path_, nullptr);
      StatusOr<bool> won = db.ok() ? (*db)->Claim(Key("contended"), false) : db.status();
      const char answer = !won.ok() ? 'e' : (*won ? 'w' : 'l');
      if (::write(answers[1], &answer, 1) != 1) ::_exit(2);
      char done = 0;
      (void)::read(release[0], &done, 1);  // holds its claim until the parent has looked
      ::_exit(0);
    }
    children.push_back(child);
  }
  ::close(answers[1]);
  ::close(release[0]);
  int won = 0, lost = 0;
  for (int i = 0; i < kClaimers; ++i) {
    char answer = 0;
    ASSERT_EQ(::read(answers[0], &answer, 1), 1);
    ASSERT_NE(answer, 'e') << "a claim failed";
    (answer == 'w' ? won : lost) += 1;
  }
  EXPECT_EQ(won, 1);
  EXPECT_EQ(lost, kClaimers - 1);
  {
    auto db = CostDatabase::Open(path_, nullptr);
    ASSERT_TRUE(db.ok());
    auto lookup = (*db)->Lookup(Key("contended"));
    ASSERT_TRUE(lookup.ok());
    EXPECT_TRUE(lookup->claimed_elsewhere);
    EXPECT_FALSE(lookup->record.has_value());
    auto claimed = (*db)->Claim(Key("contended"), false);
    ASSERT_TRUE(claimed.ok());
    EXPECT_FALSE(*claimed) << "a live owner's claim was taken over";
  }
  ::close(release[1]);  // the children exit, and their claims with them
  for (pid_t child : children) ::waitpid(child, nullptr, 0);
  auto db = CostDatabase::Open(path_, nullptr);
  ASSERT_TRUE(db.ok());
  EXPECT_FALSE((*(*db)->Lookup(Key("contended"))).claimed_elsewhere);
  auto claimed = (*db)->Claim(Key("contended"), false);
  ASSERT_TRUE(claimed.ok());
  EXPECT_TRUE(*claimed) << "a claim outlived its process";
  // A finished record is not claimed again.
  ASSERT_TRUE((*db)->Put(Key("contended"), Valid(2.0)).ok());
  EXPECT_FALSE(*(*db)->Claim(Key("contended"), false));
}

// Rows copied between databases (collage costs): every finished row as stored, never a
// claim or a damaged row; a copy keeps the later of two measurements of one key.
TEST_F(CostDatabaseTest, RowsAreCopiedAsMeasuredAndTheLaterMeasurementWins) {
  auto db = CostDatabase::Open(path_, nullptr);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Put(Key("a"), Valid(1.0)).ok());
  CostRecord failed;
  failed.reason = "does not compile";
  ASSERT_TRUE((*db)->Put(Key("b"), failed).ok());
  ASSERT_TRUE((*db)->Put(Key("damaged"), Valid(1.0)).ok());
  ASSERT_TRUE(*(*db)->Claim(Key("claimed"), false));
  ExecRaw("UPDATE costs SET median_ms=-5 WHERE signature='damaged'");
  std::vector<StoredCost> rows;
  ASSERT_TRUE((*db)->ForEachRow([&](const StoredCost& row) {
    rows.push_back(row);
    return Status();
  }).ok());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key.signature, "a");
  EXPECT_EQ(rows[0].record.median_ms, 1.0);
  EXPECT_EQ(rows[0].record.output_layouts, Valid(1.0).output_layouts);
  EXPECT_GT(rows[0].measured_at, 0);
  EXPECT_EQ(rows[1].key.signature, "b");
  EXPECT_FALSE(rows[1].record.valid);
  EXPECT_EQ(rows[1].record.reason, "does not compile");

  StoredCost older = rows[0];
  older.record.median_ms = 9.0;
  older.measured_at -= 100;
  EXPECT_FALSE(*(*db)->PutRow(older)) << "an older measurement replaced a later one";
  EXPECT_EQ((*(*db)->Find(Key("a")))->median_ms, 1.0);
  StoredCost later = rows[0];
  later.record.median_ms = 3.0;
  later.measured_at += 100;
  EXPECT_TRUE(*(*db)->PutRow(later));
  EXPECT_EQ((*(*db)->Find(Key("a")))->median_ms, 3.0);
  later.key.signature = "claimed";  // a copied row settles a claim
  EXPECT_TRUE(*(*db)->PutRow(later));
  EXPECT_EQ((*(*db)->Find(Key("claimed")))->median_ms, 3.0);
}

TEST_F(CostDatabaseTest, AClaimLapsesWithItsProcessUnlessItMeasuredInItself) {
  {
    auto db = CostDatabase::Open(path_, nullptr);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->MarkMeasuring(Key("mine"), false).ok());
    // This process is alive and measuring: not an answer yet.
    EXPECT_FALSE((*(*db)->Find(Key("mine"))).has_value());
  }
  // Killed while its worker measured (SIGKILL, a closed terminal): the candidate did
  // nothing wrong, and the next optimize measures it.
  ClaimAndDie(path_, Key("killed optimizer"), /*in_this_process=*/false);
  // Died measuring in its own process, as a crash inside a library would end it.
  ClaimAndDie(path_, Key("crashes"), /*in_this_process=*/true);
  auto db = CostDatabase::Open(path_, nullptr);
  ASSERT_TRUE(db.ok());
  auto lapsed = (*db)->Find(Key("killed optimizer"));
  ASSERT_TRUE(lapsed.ok());
  EXPECT_FALSE(lapsed->has_value()) << "a lapsed claim condemned its candidate";
  auto found = (*db)->Find(Key("crashes"));
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_FALSE((*found)->valid);
  EXPECT_NE((*found)->reason.find("died"), std::string::npos) << (*found)->reason;
  // A finished record is never replaced by a later mark.
  ASSERT_TRUE((*db)->Put(Key("done"), Valid(3.0)).ok());
  ASSERT_TRUE((*db)->MarkMeasuring(Key("done"), false).ok());
  EXPECT_TRUE((*(*db)->Find(Key("done")))->valid);
}

TEST_F(CostDatabaseTest, AClaimOfAProcessWhoseIdWasReusedLapses) {
  ASSERT_TRUE(CostDatabase::Open(path_, nullptr).ok());  // the schema
  // An in-process claim naming a live process (this one's parent) with a start time that
  // is not that process's: the id was reused, the claimant is gone.
  const CostKey key = Key("reused");
  ExecRaw(fmt::format(
      "INSERT INTO costs(device, backend, backend_version, signature, threads, method, state, "
      "pid, owner, in_process) VALUES('{}', '{}', '{}', '{}', {}, '{}', 'measuring', {}, "
      "'{}:1', 1)",
      key.device, key.backend, key.backend_version, key.signature, key.threads, key.method,
      ::getppid(), ::getppid()));
  auto db = OpenInPlace();
  ASSERT_NE(db, nullptr);
  auto found = db->Find(Key("reused"));
  ASSERT_TRUE(found.ok() && found->has_value()) << "a reused pid was taken for the owner";
  EXPECT_FALSE((*found)->valid);
}

TEST_F(CostDatabaseTest, ATimeOutHoldsOnlyForLimitsNoLongerThanItsOwn) {
  auto db = CostDatabase::Open(path_, nullptr);
  ASSERT_TRUE(db.ok());
  CostRecord timed_out;
  timed_out.reason = "timed out after 0.4 s";
  timed_out.timed_out_after_s = 0.4;
  ASSERT_TRUE((*db)->Put(Key("slow"), timed_out).ok());
  auto same = (*db)->Find(Key("slow"), 0.4);
  ASSERT_TRUE(same.ok() && same->has_value());
  EXPECT_FALSE((*same)->valid);
  EXPECT_DOUBLE_EQ((*same)->timed_out_after_s, 0.4);
  auto longer = (*db)->Find(Key("slow"), 60);
  ASSERT_TRUE(longer.ok());
  EXPECT_FALSE(longer->has_value()) << "a 60 s limit took the 0.4 s time-out as its verdict";
}

TEST_F(CostDatabaseTest, AKillFromOutsideIsRetriedOnceThenBelieved) {
  auto db = CostDatabase::Open(path_, nullptr);
  ASSERT_TRUE(db.ok());
  CostRecord killed;
  killed.reason = "the measurement worker died of SIGKILL while measuring this candidate";
  killed.killed_from_outside = true;
  ASSERT_TRUE((*db)->Put(Key("oom"), killed).ok());
  auto first = (*db)->Find(Key("oom"));
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->has_value()) << "one kill from outside condemned the candidate";
  ASSERT_TRUE((*db)->Put(Key("oom"), killed).ok());
  auto second = (*db)->Find(Key("oom"));
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_FALSE((*second)->valid);
  // A valid measurement clears the count.
  ASSERT_TRUE((*db)->Put(Key("oom"), Valid(1.0)).ok());
  ASSERT_TRUE((*db)->Put(Key("oom"), killed).ok());
  EXPECT_FALSE((*(*db)->Find(Key("oom"))).has_value());
}

TEST_F(CostDatabaseTest, ProcessesWritingAtOnceCorruptNothing) {
  constexpr int kProcesses = 4;
  constexpr int kOwn = 150;
  constexpr int kShared = 50;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto db = CostDatabase::Open(path_, nullptr);
      if (!db.ok()) ::_exit(2);
      for (int i = 0; i < kOwn + kShared; ++i) {
        const std::string sig =
            i < kOwn ? fmt::format("p{}-{}", p, i) : fmt::format("shared-{}", i);
        if (!(*db)->MarkMeasuring(Key(sig), false).ok() || !(*db)->Put(Key(sig), Valid(i)).ok())
          ::_exit(3);
        auto back = (*db)->Find(Key(sig));
        if (!back.ok() || !back->has_value()) ::_exit(4);
      }
      ::_exit(0);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status)) << "a writer crashed";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a writer failed";
  }
  std::vector<std::string> warnings;
  auto db = CostDatabase::Open(path_, &warnings);
  ASSERT_TRUE(db.ok());
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_EQ(*(*db)->Count(), kProcesses * kOwn + kShared);
  for (int p = 0; p < kProcesses; ++p) {
    auto found = (*db)->Find(Key(fmt::format("p{}-{}", p, kOwn - 1)));
    ASSERT_TRUE(found.ok() && found->has_value());
    EXPECT_DOUBLE_EQ((*found)->median_ms, kOwn - 1);
  }
}

TEST_F(CostDatabaseTest, ASchemaOneDatabaseIsUpgradedItsCostsKeptAsMeasuredWarm) {
  // The table and a row as collage wrote them before the measurement method joined the key.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(
          raw,
          "CREATE TABLE costs(device TEXT NOT NULL, backend TEXT NOT NULL, backend_version "
          "TEXT NOT NULL, signature TEXT NOT NULL, threads INTEGER NOT NULL, state TEXT NOT NULL, "
          "median_ms REAL NOT NULL DEFAULT 0, p90_ms REAL NOT NULL DEFAULT 0, samples INTEGER NOT "
          "NULL DEFAULT 0, layouts TEXT NOT NULL DEFAULT '{}', reason TEXT NOT NULL DEFAULT '', "
          "pid "
          "INTEGER NOT NULL DEFAULT 0, measured_at INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(device, "
          "backend, backend_version, signature, threads));"
          "INSERT INTO costs(device, backend, backend_version, signature, threads, state, "
          "median_ms, "
          "p90_ms, samples, layouts) VALUES('test-device', 'onednn', 'oneDNN 2.6.3 avx2', "
          "'old|sig', 1, "
          "'valid', 2.5, 2.75, 9, '{\"inputs\":[\"plain\"],\"outputs\":[\"plain\"]}');"
          "PRAGMA user_version=1;",
          nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(raw);
  std::vector<std::string> warnings;
  auto db = CostDatabase::Open(path_, &warnings);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(MovedAside().empty());
  // Not reused for a cache-scrubbed measurement...
  auto scrubbed = (*db)->Find(Key("old|sig"));
  ASSERT_TRUE(scrubbed.ok());
  EXPECT_FALSE(scrubbed->has_value());
  // ...but still there for a warm one.
  CostKey warm = Key("old|sig");
  warm.method = "warm";
  auto found = (*db)->Find(warm);
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_DOUBLE_EQ((*found)->median_ms, 2.5);
  ASSERT_TRUE((*db)->Put(Key("old|sig"), Valid(3.0)).ok());
  EXPECT_EQ(*(*db)->Count(), 2);
  db->reset();
  // Reopened: already the current schema, nothing to upgrade.
  auto again = CostDatabase::Open(path_, &warnings);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*(*again)->Count(), 2);
}

TEST_F(CostDatabaseTest, ASchemaTwoDatabaseIsUpgradedItsClaimsLapsing) {
  // The table as collage wrote it before claims had owners; a worker-measured claim of a
  // process long gone (pid 999999999) and a cost.
  ExecRaw(
      "CREATE TABLE costs(device TEXT NOT NULL, backend TEXT NOT NULL, backend_version TEXT "
      "NOT NULL, signature TEXT NOT NULL, threads INTEGER NOT NULL, method TEXT NOT NULL, "
      "state TEXT NOT NULL CHECK(state IN ('valid', 'invalid', 'measuring')), median_ms REAL "
      "NOT NULL DEFAULT 0, p90_ms REAL NOT NULL DEFAULT 0, samples INTEGER NOT NULL DEFAULT 0, "
      "layouts TEXT NOT NULL DEFAULT '{}', reason TEXT NOT NULL DEFAULT '', pid INTEGER NOT "
      "NULL DEFAULT 0, measured_at INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(device, backend, "
      "backend_version, signature, threads, method));"
      "INSERT INTO costs(device, backend, backend_version, signature, threads, method, state, "
      "median_ms, p90_ms, samples, layouts) VALUES('test-device', 'onednn', 'oneDNN 2.6.3 "
      "avx2', 'kept', 1, 'scrub:64MiB', 'valid', 2.5, 2.75, 9, "
      "'{\"inputs\":[\"plain\"],\"outputs\":[\"plain\"]}');"
      "INSERT INTO costs(device, backend, backend_version, signature, threads, method, state, "
      "pid) VALUES('test-device', 'onednn', 'oneDNN 2.6.3 avx2', 'claimed', 1, 'scrub:64MiB', "
      "'measuring', 999999999);"
      "PRAGMA user_version=2;");
  auto db = OpenInPlace();
  ASSERT_NE(db, nullptr);
  auto kept = db->Find(Key("kept"));
  ASSERT_TRUE(kept.ok() && kept->has_value());
  EXPECT_DOUBLE_EQ((*kept)->median_ms, 2.5);
  auto claimed = db->Find(Key("claimed"));
  ASSERT_TRUE(claimed.ok());
  EXPECT_FALSE(claimed->has_value()) << "an old claim of a dead process condemned its candidate";
}

TEST_F(CostDatabaseTest, ASchemaThreeDatabaseIsUpgradedToRecordOptimizes) {
  // A schema-3 file: the costs table as it is now, no table of optimizes.
  {
    auto db = CostDatabase::Open(path_, nullptr);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Put(Key("kept"), Valid(2.5)).ok());
  }
  ExecRaw("DROP TABLE optimize_runs; PRAGMA user_version=3;");
  auto db = OpenInPlace();
  ASSERT_NE(db, nullptr);
  EXPECT_DOUBLE_EQ((*db->Find(Key("kept")))->median_ms, 2.5);
  ASSERT_TRUE(db->RecordOptimize({100, "host/boot", "tiny.onnx", 4, 3, 1}).ok());
  ASSERT_TRUE(db->RecordOptimize({200, "host/boot", "tiny.onnx", 4, 0, 4}).ok());
  ASSERT_TRUE(*db->Claim(Key("claimed"), false));
  auto stats = db->Stats(10);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->rows.size(), 1u);
  EXPECT_EQ(stats->rows[0].backend, "onednn");
  EXPECT_EQ(stats->rows[0].valid, 1);
  EXPECT_EQ(stats->claims, 1);
  ASSERT_EQ(stats->recent_optimizes.size(), 2u);
  EXPECT_EQ(stats->recent_optimizes[0].finished_at, 200) << "newest first";
  EXPECT_EQ(stats->recent_optimizes[0].candidates_found, 4);
  EXPECT_EQ(stats->recent_optimizes[1].candidates_measured, 3);
}

TEST_F(CostDatabaseTest, AForeignTableUnderOurSchemaVersionIsMovedAside) {
  // Another program's database that happens to use version 1 (collage's schema before the
  // measurement method joined the key) and a table named `costs`.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE costs(item TEXT, price REAL); PRAGMA user_version=1",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  std::vector<std::string> warnings;
  auto db = CostDatabase::Open(path_, &warnings);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("another program's"), std::string::npos) << warnings[0];
  EXPECT_EQ(MovedAside().size(), 1u);
  ASSERT_TRUE((*db)->Put(Key("sig"), Valid(1.0)).ok());
}

TEST_F(CostDatabaseTest, ADamagedCostIsMeasuredAgainNeverReadAsFree) {
  const std::vector<std::pair<std::string, std::string>> damage = {{"text", "median_ms='fast'"},
                                                                   {"negative", "p90_ms=-5"},
                                                                   {"huge", "median_ms=1e308"},
                                                                   {"blob", "median_ms=x'00ff'"}};
  {
    auto db = CostDatabase::Open(path_, nullptr);
    ASSERT_TRUE(db.ok());
    for (const auto& [sig, unused] : damage) ASSERT_TRUE((*db)->Put(Key(sig), Valid(2.0)).ok());
    ASSERT_TRUE((*db)->MarkMeasuring(Key("no-such-pid"), true).ok());
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  for (const auto& [sig, set] : damage) {
    const std::string sql = "UPDATE costs SET " + set + " WHERE signature='" + sig + "'";
    ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE costs SET pid=-1 WHERE signature='no-such-pid'", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  auto db = CostDatabase::Open(path_, nullptr);
  ASSERT_TRUE(db.ok());
  for (const auto& [sig, unused] : damage) {
    auto found = (*db)->Find(Key(sig));
    ASSERT_TRUE(found.ok()) << sig;
    EXPECT_FALSE(found->has_value()) << sig << " was trusted: " << (*found)->median_ms << " ms";
  }
  auto orphan = (*db)->Find(Key("no-such-pid"));
  ASSERT_TRUE(orphan.ok());
  EXPECT_FALSE(orphan->has_value()) << "a mark with pid -1 is damage, not a crash";
  // Measured again, the row is replaced.
  ASSERT_TRUE((*db)->Put(Key("text"), Valid(3.0)).ok());
  EXPECT_DOUBLE_EQ((*(*db)->Find(Key("text")))->median_ms, 3.0);
}

TEST_F(CostDatabaseTest, AnIoErrorIsNotDamage) {
  {
    auto db = CostDatabase::Open(path_, nullptr);
    ASSERT_TRUE(db.ok());
    for (int i = 0; i < 200; ++i)
      ASSERT_TRUE((*db)->Put(Key("sig" + std::to_string(i)), Valid(i)).ok());
  }
  const auto size = fs::file_size(path_);
  // A file-size limit below what the next write needs: SQLite reports an I/O error.
  std::vector<std::string> warnings;
  Status put;
  {
    testing::ScopedFileSizeLimit limit(300);
    ASSERT_TRUE(limit.ok());
    auto db = CostDatabase::Open(path_, &warnings);
    put = db.ok() ? (*db)->Put(Key("new"), Valid(1.0)) : db.status();
  }  // closed (its last writes too) before the limit is lifted
  EXPECT_FALSE(put.ok());
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_TRUE(MovedAside().empty()) << "an I/O error says nothing about the file's contents";
  EXPECT_EQ(fs::file_size(path_), size);
  auto reopened = CostDatabase::Open(path_, nullptr);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(*(*reopened)->Count(), 200);
}

TEST_F(CostDatabaseTest, ALockHeldPastTheTimeoutIsAnErrorAndTheFileStays) {
  {
    auto db = CostDatabase::Open(path_, nullptr);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Put(Key("kept"), Valid(4.0)).ok());
  }
  // Another process (here: another connection) holds an exclusive lock and keeps it.
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder,
                         "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE;"
                         "UPDATE costs SET reason='holder' WHERE signature='kept'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  std::vector<std::string> warnings;
  const auto start = std::chrono::steady_clock::now();
  auto db = CostDatabase::Open(path_, &warnings, /*lock_timeout_ms=*/300);
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("locked by another process"), std::string::npos)
      << db.status().message();
  EXPECT_LT(waited_s, 20.0);
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(MovedAside().empty()) << "a busy database is not a damaged one";
  // The holder's work is not lost: it commits into the same file, which is still ours.
  ASSERT_EQ(sqlite3_exec(holder, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(holder);
  auto reopened = CostDatabase::Open(path_, nullptr);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  auto found = (*reopened)->Find(Key("kept"));
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_EQ((*found)->reason, "holder");
}

TEST_F(CostDatabaseTest, OnlyARegularFileIsOpened) {
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  auto fifo = CostDatabase::Open(path_, nullptr);
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.status().message().find("not a regular file"), std::string::npos);
  EXPECT_TRUE(fs::is_fifo(path_));
  auto device = CostDatabase::Open("/dev/null", nullptr);
  ASSERT_FALSE(device.ok());
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  auto folder = CostDatabase::Open(dir_.string(), nullptr);
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().message().find("folder"), std::string::npos);
}

TEST(LayoutTextTest, RoundTripsAndRefusesGarbage) {
  for (const Layout& l :
       {Layout::Plain(), Layout::ChannelsLast(), Layout::Opaque("onednn", "a:b c", 123)}) {
    auto back = LayoutFromText(LayoutToText(l));
    ASSERT_TRUE(back.ok()) << LayoutToText(l);
    EXPECT_EQ(*back, l);
    EXPECT_EQ(back->owner(), l.owner());
    EXPECT_EQ(back->format(), l.format());
  }
  // An opaque layout's name is "<owner>:<format>": one without its owner is refused.
  for (const char* bad : {"", "nchw", "opaque:", "opaque:12", "opaque:x:name", "opaque:12:",
                          "opaque:12:ownerless", "opaque:12::format"}) {
    EXPECT_FALSE(LayoutFromText(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace collage
