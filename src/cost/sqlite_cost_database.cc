#include "cost/sqlite_cost_database.h"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "collage/sdk/errors.h"
#include "collage/sdk/graph.h"
#include "cost/claim_owner.h"
#include "cost/cost_row.h"

namespace collage {

struct SqliteCostDatabase::LockWait {
  std::string path;
  int timeout_ms = kDefaultLockTimeoutMs;
  std::chrono::steady_clock::time_point started;
  int reported_ms = 0;
};

namespace {

namespace fs = std::filesystem;

// While another process holds the lock, say so this often (a silent minute looks like a hang).
constexpr int kLockProgressEveryMs = 5000;

// The columns of our `costs` table: a file of our schema version whose table differs is some
// other program's database and is moved aside, never written into.
const std::set<std::string>& CostsColumns() {
  static const std::set<std::string> columns = {
      "device", "backend",     "backend_version", "signature",  "threads",      "method",
      "state",  "median_ms",   "p90_ms",          "samples",    "layouts",      "reason",
      "pid",    "measured_at", "owner",           "in_process", "time_limit_s", "outside_kills"};
  return columns;
}

// Schema 2 had no claim owners nor verdict causes.
const std::set<std::string>& SchemaTwoColumns() {
  static const std::set<std::string> columns = [] {
    std::set<std::string> c = CostsColumns();
    for (const char* added : {"owner", "in_process", "time_limit_s", "outside_kills"})
      c.erase(added);
    return c;
  }();
  return columns;
}

// Schema 1 had no `method` either: every cost in it was timed warm, in a tight loop.
const std::set<std::string>& SchemaOneColumns() {
  static const std::set<std::string> columns = [] {
    std::set<std::string> c = SchemaTwoColumns();
    c.erase("method");
    return c;
  }();
  return columns;
}

constexpr const char* kCreateSchema = R"sql(
CREATE TABLE IF NOT EXISTS costs(
  device TEXT NOT NULL,
  backend TEXT NOT NULL,
  backend_version TEXT NOT NULL,
  signature TEXT NOT NULL,
  threads INTEGER NOT NULL,
  method TEXT NOT NULL,
  state TEXT NOT NULL CHECK(state IN ('valid', 'invalid', 'measuring')),
  median_ms REAL NOT NULL DEFAULT 0,
  p90_ms REAL NOT NULL DEFAULT 0,
  samples INTEGER NOT NULL DEFAULT 0,
  layouts TEXT NOT NULL DEFAULT '{}',
  reason TEXT NOT NULL DEFAULT '',
  pid INTEGER NOT NULL DEFAULT 0,
  measured_at INTEGER NOT NULL DEFAULT 0,
  owner TEXT NOT NULL DEFAULT '',
  in_process INTEGER NOT NULL DEFAULT 0,
  time_limit_s REAL NOT NULL DEFAULT 0,
  outside_kills INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(device, backend, backend_version, signature, threads, method));
CREATE TABLE IF NOT EXISTS optimize_runs(
  finished_at INTEGER NOT NULL,
  machine TEXT NOT NULL,
  model TEXT NOT NULL,
  distinct_candidates INTEGER NOT NULL,
  candidates_measured INTEGER NOT NULL,
  candidates_found INTEGER NOT NULL);
)sql";

// Schema 1 → 2 inside the caller's transaction, around kCreateSchema: the old table is
// renamed, the new one created, the rows copied keyed as measured warm.
constexpr const char* kSetSchemaOneAside = "ALTER TABLE costs RENAME TO costs_schema_1;";
constexpr const char* kCopySchemaOne = R"sql(
INSERT INTO costs(device, backend, backend_version, signature, threads, method, state,
  median_ms, p90_ms, samples, layouts, reason, pid, measured_at)
  SELECT device, backend, backend_version, signature, threads, 'warm', state,
  median_ms, p90_ms, samples, layouts, reason, pid, measured_at FROM costs_schema_1
  WHERE state != 'measuring';
DROP TABLE costs_schema_1;
)sql";

// Schema 2 → 3: the new columns, with the defaults of a row that says nothing of them (a
// claim of schema 2 then lapses like any whose owner is gone).
constexpr const char* kAddSchemaThreeColumns = R"sql(
ALTER TABLE costs ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE costs ADD COLUMN in_process INTEGER NOT NULL DEFAULT 0;
ALTER TABLE costs ADD COLUMN time_limit_s REAL NOT NULL DEFAULT 0;
ALTER TABLE costs ADD COLUMN outside_kills INTEGER NOT NULL DEFAULT 0;
)sql";

// Owns a prepared statement.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    status_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  bool ok() const { return status_ == SQLITE_OK; }
  sqlite3_stmt* get() { return stmt_; }
  void Bind(int index, const std::string& text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void Bind(int index, int64_t number) { sqlite3_bind_int64(stmt_, index, number); }
  void Bind(int index, double number) { sqlite3_bind_double(stmt_, index, number); }
  void BindKey(const CostKey& key) {
    Bind(1, key.device);
    Bind(2, key.backend);
    Bind(3, key.backend_version);
    Bind(4, key.signature);
    Bind(5, static_cast<int64_t>(key.threads));
    Bind(6, key.method);
  }
  std::string Text(int column) {
    const unsigned char* text = sqlite3_column_text(stmt_, column);
    return text == nullptr ? std::string() : reinterpret_cast<const char*>(text);
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int status_ = SQLITE_ERROR;
};

Status SqliteError(sqlite3* db, const std::string& path, const std::string& what) {
  return IoError("cost database {}: {}: {}", path, what, sqlite3_errmsg(db));
}

// Whether an open database is one this collage can use: a readable SQLite file whose schema
// version is ours (or 0 for a new, empty file). kBusy: another process holds a lock past the
// timeout, which says nothing about the file — it is never moved aside for that.
enum class FileState { kUsable, kNewerSchema, kBusy, kIoFailure, kForeign, kUnreadable };

// What a failed step says about the file: damaged only when SQLite says so (SQLITE_CORRUPT,
// SQLITE_NOTADB). Busy, a full disk, a file-size limit or any other I/O error says nothing
// about the contents, and such a file is never moved aside.
FileState Failed(int rc) {
  const int primary = rc & 0xFF;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) return FileState::kBusy;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) return FileState::kUnreadable;
  return FileState::kIoFailure;
}

FileState Inspect(sqlite3* db, int* version) {
  {
    Statement check(db, "PRAGMA quick_check");
    if (!check.ok()) return Failed(sqlite3_errcode(db));
    const int rc = sqlite3_step(check.get());
    if (rc != SQLITE_ROW) return Failed(rc);
    if (check.Text(0) != "ok") return FileState::kUnreadable;
  }
  Statement user_version(db, "PRAGMA user_version");
  if (!user_version.ok()) return Failed(sqlite3_errcode(db));
  const int rc = sqlite3_step(user_version.get());
  if (rc != SQLITE_ROW) return Failed(rc);
  *version = sqlite3_column_int(user_version.get(), 0);
  if (*version > CostDatabase::kSchemaVersion) return FileState::kNewerSchema;
  if (*version == 0) {
    // A file of schema 0 must be empty: anything else is some other SQLite database.
    Statement tables(db, "SELECT count(*) FROM sqlite_master");
    if (!tables.ok()) return Failed(sqlite3_errcode(db));
    const int step = sqlite3_step(tables.get());
    if (step != SQLITE_ROW) return Failed(step);
    if (sqlite3_column_int(tables.get(), 0) != 0) return FileState::kForeign;
    return FileState::kUsable;
  }
  // Our version number: the table must be ours too, column for column.
  Statement columns(db, "SELECT name FROM pragma_table_info('costs')");
  if (!columns.ok()) return Failed(sqlite3_errcode(db));
  std::set<std::string> found;
  int step = SQLITE_ROW;
  while ((step = sqlite3_step(columns.get())) == SQLITE_ROW) found.insert(columns.Text(0));
  if (step != SQLITE_DONE) return Failed(step);
  // Older schemas are upgraded on open (schema 3 → 4 adds a table, kCreateSchema).
  if (*version == 1 && found == SchemaOneColumns()) return FileState::kUsable;
  if (*version == 2 && found == SchemaTwoColumns()) return FileState::kUsable;
  return found == CostsColumns() && *version >= 3 ? FileState::kUsable : FileState::kForeign;
}

std::string Timestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", &tm);
  return text;
}

// Moves the database and its WAL and journal files aside; never deletes or overwrites
// anything (a second move within the same second gets a numbered name).
Status MoveAside(const std::string& path, std::string* moved_to) {
  const std::string stem = path + ".corrupt-" + Timestamp() + "-" + std::to_string(::getpid());
  for (int n = 0;; ++n) {
    *moved_to = n == 0 ? stem : stem + "-" + std::to_string(n);
    if (::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, moved_to->c_str(), RENAME_NOREPLACE) == 0)
      break;
    if (errno == EEXIST && n < 1000) continue;
    if (errno == ENOENT) break;  // someone else moved it already
    return IoError("cannot move {} aside: {}", path, std::strerror(errno));
  }
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const std::string from = path + suffix;
    const std::string to = *moved_to + suffix;
    if (fs::exists(from))
      (void)::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
  }
  return Status();
}

// Waits for another process's lock, saying every few seconds what it waits for, and gives up
// after the timeout (the statement then fails with SQLITE_BUSY).
int WaitForLock(void* context, int attempts) {
  auto* wait = static_cast<SqliteCostDatabase::LockWait*>(context);
  const auto now = std::chrono::steady_clock::now();
  if (attempts == 0) {
    wait->started = now;
    wait->reported_ms = 0;
  }
  const int waited_ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now - wait->started).count());
  if (waited_ms >= wait->timeout_ms) return 0;
  if (waited_ms - wait->reported_ms >= kLockProgressEveryMs) {
    wait->reported_ms = waited_ms;
    std::fprintf(
        stderr, "collage: waiting for cost database %s, locked by another process (%d s of %d s)\n",
        wait->path.c_str(), waited_ms / 1000, wait->timeout_ms / 1000);
  }
  ::usleep(static_cast<useconds_t>(std::min(attempts + 1, 20) * 1000));
  return 1;
}

StatusOr<sqlite3*> OpenConnection(const std::string& path, SqliteCostDatabase::LockWait* wait) {
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return IoError("cannot open cost database {}: {}", path, message);
  }
  sqlite3_busy_handler(db, &WaitForLock, wait);
  return db;
}

}  // namespace

StatusOr<std::unique_ptr<SqliteCostDatabase>> SqliteCostDatabase::Open(const std::string& path,
                                                           std::vector<std::string>* warnings,
                                                           int lock_timeout_ms,
                                                           OnDamage damaged) {
  std::error_code ec;
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (ec) return IoError("cannot create the folder of cost database {}: {}", path, ec.message());
  // SQLite would block on a FIFO and write into a device: only a regular file (or none) is
  // ours to open.
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    return InvalidArgument(
        "cost database {} is {}, not a regular file: use another file (--cost-db)", path,
        S_ISDIR(st.st_mode) ? "a folder" : "a device, FIFO or socket");
  }

  // A file that is not SQLite at all (a model, a document: --cost-db pointed at the wrong
  // file) is not collage's to move aside; a damaged or foreign SQLite file is (below).
  if (exists && st.st_size > 0) {
    static constexpr char kSqliteHeader[] = "SQLite format 3";  // and its terminating zero
    char header[sizeof(kSqliteHeader)] = {};
    std::ifstream file(path, std::ios::binary);
    file.read(header, sizeof(header));
    if (file.gcount() != static_cast<std::streamsize>(sizeof(header)) ||
        std::memcmp(header, kSqliteHeader, sizeof(header)) != 0) {
      return InvalidArgument(
          "cost database {} is not a SQLite database; it was left as it is: name another file "
          "(--cost-db), or remove this one",
          path);
    }
  }
  // SQLite in WAL mode writes beside the file (-wal, -shm): without write access to the
  // file or its folder, the database can only be read.
  const std::string folder = parent.empty() ? "." : parent.string();
  if (exists && (::access(path.c_str(), W_OK) != 0 || ::access(folder.c_str(), W_OK) != 0)) {
    return OpenReadOnly(path, warnings);
  }
  auto wait = std::make_unique<LockWait>();
  wait->path = path;
  wait->timeout_ms = lock_timeout_ms;
  COLLAGE_ASSIGN_OR_RETURN(sqlite3 * db, OpenConnection(path, wait.get()));
  int version = 0;
  const FileState state = Inspect(db, &version);
  if (state == FileState::kNewerSchema) {
    sqlite3_close(db);
    return InvalidArgument(
        "cost database {} has schema version {}, newer than this collage's {}: "
        "use another file (--cost-db)",
        path, version, kSchemaVersion);
  }
  if (state == FileState::kIoFailure) {
    const std::string message = sqlite3_errmsg(db);
    sqlite3_close(db);
    return IoError(
        "cost database {}: {}; the file was left as it is (a full disk or a file-size "
        "limit?)",
        path, message);
  }
  if (state == FileState::kBusy) {
    sqlite3_close(db);
    return IoError(
        "cost database {} stayed locked by another process for {} s; nothing was "
        "changed: try again when it is done, or use another file (--cost-db)",
        path, lock_timeout_ms / 1000.0);
  }
  if ((state == FileState::kUnreadable || state == FileState::kForeign) &&
      damaged == OnDamage::kRefuse) {
    sqlite3_close(db);
    return InvalidArgument("{} is {}; it was left as it is", path,
                           state == FileState::kForeign ? "another program's SQLite database"
                                                        : "not a readable collage cost database");
  }
  if (state == FileState::kUnreadable || state == FileState::kForeign) {
    sqlite3_close(db);
    std::string moved_to;
    COLLAGE_RETURN_IF_ERROR(MoveAside(path, &moved_to));
    if (warnings != nullptr) {
      warnings->push_back(
          fmt::format("cost database {} is {}; moved it to {} and started a fresh one", path,
                      state == FileState::kForeign ? "another program's SQLite database"
                                                   : "not a readable collage cost database",
                      moved_to));
    }
    COLLAGE_ASSIGN_OR_RETURN(db, OpenConnection(path, wait.get()));
  }
  std::unique_ptr<SqliteCostDatabase> database(new SqliteCostDatabase(path, db, std::move(wait)));
  // WAL lets readers and one writer work at once across processes; journal_mode may report
  // busy while another process switches it, which the busy timeout does not cover.
  for (int attempt = 0;; ++attempt) {
    Statement wal(db, "PRAGMA journal_mode=WAL");
    if (wal.ok() && sqlite3_step(wal.get()) == SQLITE_ROW) break;
    if (attempt == 100) return SqliteError(db, path, "cannot switch to WAL mode");
    ::usleep(50000);
  }
  // In WAL mode NORMAL never corrupts the file; a power cut may lose the last measurements,
  // which are then simply measured again.
  COLLAGE_RETURN_IF_ERROR(database->Exec("PRAGMA synchronous=NORMAL"));
  COLLAGE_RETURN_IF_ERROR(database->Exec("BEGIN IMMEDIATE"));
  // Read again under the write lock: another process may have upgraded it meanwhile.
  Status created;
  {
    Statement current(db, "PRAGMA user_version");
    version = current.ok() && sqlite3_step(current.get()) == SQLITE_ROW
                  ? sqlite3_column_int(current.get(), 0)
                  : 0;
  }
  if (version == 1) created = database->Exec(kSetSchemaOneAside);
  if (created.ok()) created = database->Exec(kCreateSchema);
  if (created.ok() && version == 1) created = database->Exec(kCopySchemaOne);
  if (created.ok() && version == 2) created = database->Exec(kAddSchemaThreeColumns);
  if (created.ok())
    created = database->Exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
  COLLAGE_RETURN_IF_ERROR(database->Exec(created.ok() ? "COMMIT" : "ROLLBACK"));
  COLLAGE_RETURN_IF_ERROR(created);
  return database;
}

StatusOr<std::unique_ptr<SqliteCostDatabase>> SqliteCostDatabase::OpenReadOnly(
    const std::string& path, std::vector<std::string>* warnings) {
  // immutable: nothing else writes it while it is read (no lock, no -shm file to create).
  const std::string uri = "file:" + path + "?immutable=1";
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return IoError("cannot read cost database {}: {}", path, message);
  }
  int version = 0;
  const FileState state = Inspect(db, &version);
  if (state != FileState::kUsable || version != kSchemaVersion) {
    sqlite3_close(db);
    return InvalidArgument(
        "cost database {} is read-only for this user and {}: name another file (--cost-db)", path,
        state == FileState::kUsable ? "of an older schema, which only a writable open upgrades"
                                    : "not a usable collage cost database");
  }
  if (warnings != nullptr) {
    warnings->push_back(fmt::format(
        "cost database {} is read-only for this user: its costs are used, new measurements are "
        "not kept",
        path));
  }
  std::unique_ptr<SqliteCostDatabase> database(new SqliteCostDatabase(path, db, nullptr));
  database->read_only_ = true;
  return database;
}

SqliteCostDatabase::SqliteCostDatabase(std::string path, sqlite3* db,
                                       std::unique_ptr<LockWait> lock_wait)
    : CostDatabase(std::move(path)), db_(db), lock_wait_(std::move(lock_wait)) {}

SqliteCostDatabase::~SqliteCostDatabase() {
  // A mark of this process still there now belongs to a measurement that never ran to its
  // end because the work stopped (an interrupt, an error elsewhere), not because the
  // candidate crashed: removed, so that no later run has to judge it. A process that dies
  // never gets here; its marks lapse with it (Find), except those of in-process measurements.
  if (!read_only_) {
    Statement clear(db_, "DELETE FROM costs WHERE state='measuring' AND pid=?1");
    if (clear.ok()) {
      clear.Bind(1, static_cast<int64_t>(::getpid()));
      (void)sqlite3_step(clear.get());
    }
  }  // finalized before the close, which would otherwise fail and keep the WAL unmerged
  sqlite3_close(db_);
}

Status SqliteCostDatabase::Exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error != nullptr ? error : "unknown error";
    sqlite3_free(error);
    return IoError("cost database {}: {}", path(), message);
  }
  return Status();
}

namespace {

// The record in the row `select` stands on (columns as kSelectRow lists them), or none
// with the reason it is not to be used, as CostDatabase::Lookup says.
constexpr const char* kSelectRow =
    "SELECT state, median_ms, p90_ms, samples, layouts, reason, pid, owner, in_process, "
    "time_limit_s, outside_kills, device, backend, backend_version, signature, threads, method, "
    "measured_at FROM costs ";

CostLookup LookupRow(Statement& select, double time_limit_s) {
  RawCostRow row;
  row.state = select.Text(0);
  row.median_ms = sqlite3_column_double(select.get(), 1);
  row.p90_ms = sqlite3_column_double(select.get(), 2);
  // SQLite keeps whatever was written in a REAL column: text would read as 0 ms.
  for (int column : {1, 2}) {
    const int type = sqlite3_column_type(select.get(), column);
    row.costs_are_numbers =
        row.costs_are_numbers && (type == SQLITE_FLOAT || type == SQLITE_INTEGER);
  }
  row.samples = sqlite3_column_int(select.get(), 3);
  row.layouts = select.Text(4);
  row.reason = select.Text(5);
  row.pid = sqlite3_column_int64(select.get(), 6);
  row.in_process = sqlite3_column_int64(select.get(), 8) != 0;
  row.time_limit_s = sqlite3_column_double(select.get(), 9);
  row.outside_kills = sqlite3_column_int64(select.get(), 10);
  // Every claim of a SQLite file is a process of this machine, alive or not.
  ClaimHolder holder = ClaimHolder::kDied;
  if (row.pid == ::getpid()) {
    holder = ClaimHolder::kThisProcess;
  } else if (row.pid > 0 && ClaimOwnerAlive(row.pid, select.Text(7))) {
    holder = ClaimHolder::kAlive;
  }
  return JudgeRow(row, holder, time_limit_s);
}

}  // namespace

StatusOr<CostLookup> SqliteCostDatabase::Lookup(const CostKey& key, double time_limit_s) {
  Statement select(db_, (std::string(kSelectRow) +
                         "WHERE device=?1 AND backend=?2 AND backend_version=?3 AND "
                         "signature=?4 AND threads=?5 AND method=?6")
                            .c_str());
  if (!select.ok()) return SqliteError(db_, path(), "cannot read");
  select.BindKey(key);
  const int rc = sqlite3_step(select.get());
  if (rc == SQLITE_DONE) return CostLookup();
  if (rc != SQLITE_ROW) return SqliteError(db_, path(), "cannot read");
  return LookupRow(select, time_limit_s);
}

Status SqliteCostDatabase::Put(const CostKey& key, const CostRecord& record) {
  if (read_only_) return Status();
  // A kill from outside adds to the kills the invalid row already counts (see Find).
  Statement insert(
      db_,
      "INSERT OR REPLACE INTO costs(device, backend, backend_version, signature, threads, "
      "method, state, median_ms, p90_ms, samples, layouts, reason, pid, measured_at, owner, "
      "in_process, time_limit_s, outside_kills) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, '', 0, ?15, "
      "CASE WHEN ?16 THEN 1 + COALESCE((SELECT outside_kills FROM costs WHERE device=?1 AND "
      "backend=?2 AND backend_version=?3 AND signature=?4 AND threads=?5 AND method=?6 AND "
      "state='invalid'), 0) ELSE 0 END)");
  if (!insert.ok()) return SqliteError(db_, path(), "cannot write");
  insert.BindKey(key);
  insert.Bind(7, std::string(record.valid ? "valid" : "invalid"));
  insert.Bind(8, record.median_ms);
  insert.Bind(9, record.p90_ms);
  insert.Bind(10, static_cast<int64_t>(record.samples));
  insert.Bind(11, LayoutsToJson(record));
  insert.Bind(12, record.reason);
  insert.Bind(13, static_cast<int64_t>(::getpid()));
  insert.Bind(14, static_cast<int64_t>(std::time(nullptr)));
  insert.Bind(15, record.valid ? 0.0 : record.timed_out_after_s);
  insert.Bind(16, static_cast<int64_t>(!record.valid && record.killed_from_outside));
  if (sqlite3_step(insert.get()) != SQLITE_DONE) return SqliteError(db_, path(), "cannot write");
  return Status();
}

StatusOr<bool> SqliteCostDatabase::Claim(const CostKey& key, bool in_this_process) {
  if (read_only_) return true;
  // Looked up and claimed under the write lock, so that of two processes claiming one key
  // at once exactly one gets it.
  COLLAGE_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  StatusOr<bool> claimed = [&]() -> StatusOr<bool> {
    COLLAGE_ASSIGN_OR_RETURN(CostLookup lookup, Lookup(key));
    if (lookup.claimed_elsewhere || lookup.record.has_value()) return false;
    // Never replaces a finished record (an invalid row being measured again stays as it is
    // until Put replaces it).
    Statement insert(
        db_,
        "INSERT INTO costs(device, backend, backend_version, signature, threads, method, state, "
        "pid, measured_at, owner, in_process) VALUES(?1, ?2, ?3, ?4, ?5, ?6, 'measuring', ?7, ?8, "
        "?9, ?10) "
        "ON CONFLICT DO UPDATE SET pid=excluded.pid, measured_at=excluded.measured_at, "
        "owner=excluded.owner, in_process=excluded.in_process WHERE state='measuring'");
    if (!insert.ok()) return SqliteError(db_, path(), "cannot write");
    insert.BindKey(key);
    insert.Bind(7, static_cast<int64_t>(::getpid()));
    insert.Bind(8, static_cast<int64_t>(std::time(nullptr)));
    insert.Bind(9, OwnProcessIdentity());
    insert.Bind(10, static_cast<int64_t>(in_this_process));
    if (sqlite3_step(insert.get()) != SQLITE_DONE) return SqliteError(db_, path(), "cannot write");
    return true;
  }();
  COLLAGE_RETURN_IF_ERROR(Exec(claimed.ok() ? "COMMIT" : "ROLLBACK"));
  return claimed;
}

StatusOr<int64_t> SqliteCostDatabase::Count() {
  Statement count(db_, "SELECT count(*) FROM costs WHERE state != 'measuring'");
  if (!count.ok() || sqlite3_step(count.get()) != SQLITE_ROW)
    return SqliteError(db_, path(), "cannot read");
  return static_cast<int64_t>(sqlite3_column_int64(count.get(), 0));
}

Status SqliteCostDatabase::ForEachRow(const std::function<Status(const StoredCost&)>& visit) {
  Statement select(db_, (std::string(kSelectRow) +
                         "WHERE state != 'measuring' ORDER BY device, backend, backend_version, "
                         "signature, threads, method")
                            .c_str());
  if (!select.ok()) return SqliteError(db_, path(), "cannot read");
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(select.get())) == SQLITE_ROW) {
    // A row this collage would not use (damaged, a time-out to measure again) is not copied.
    CostLookup lookup = LookupRow(select, 0);
    if (!lookup.record.has_value()) continue;
    StoredCost row;
    row.key.device = select.Text(11);
    row.key.backend = select.Text(12);
    row.key.backend_version = select.Text(13);
    row.key.signature = select.Text(14);
    row.key.threads = sqlite3_column_int(select.get(), 15);
    row.key.method = select.Text(16);
    row.measured_at = sqlite3_column_int64(select.get(), 17);
    row.outside_kills = sqlite3_column_int(select.get(), 10);
    row.record = std::move(*lookup.record);
    COLLAGE_RETURN_IF_ERROR(visit(row));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, path(), "cannot read");
  return Status();
}

StatusOr<bool> SqliteCostDatabase::PutRow(const StoredCost& row) {
  if (read_only_) return false;
  // Replaces a claim or an older finished row, never a newer one.
  Statement insert(
      db_,
      "INSERT INTO costs(device, backend, backend_version, signature, threads, method, state, "
      "median_ms, p90_ms, samples, layouts, reason, pid, measured_at, owner, in_process, "
      "time_limit_s, outside_kills) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0, ?13, '', 0, ?14, ?15) "
      "ON CONFLICT DO UPDATE SET state=excluded.state, median_ms=excluded.median_ms, "
      "p90_ms=excluded.p90_ms, samples=excluded.samples, layouts=excluded.layouts, "
      "reason=excluded.reason, pid=0, measured_at=excluded.measured_at, owner='', in_process=0, "
      "time_limit_s=excluded.time_limit_s, outside_kills=excluded.outside_kills "
      "WHERE state='measuring' OR measured_at < excluded.measured_at");
  if (!insert.ok()) return SqliteError(db_, path(), "cannot write");
  insert.BindKey(row.key);
  insert.Bind(7, std::string(row.record.valid ? "valid" : "invalid"));
  insert.Bind(8, row.record.median_ms);
  insert.Bind(9, row.record.p90_ms);
  insert.Bind(10, static_cast<int64_t>(row.record.samples));
  insert.Bind(11, LayoutsToJson(row.record));
  insert.Bind(12, row.record.reason);
  insert.Bind(13, row.measured_at);
  insert.Bind(14, row.record.valid ? 0.0 : row.record.timed_out_after_s);
  insert.Bind(15, static_cast<int64_t>(row.record.valid ? 0 : row.outside_kills));
  if (sqlite3_step(insert.get()) != SQLITE_DONE) return SqliteError(db_, path(), "cannot write");
  return sqlite3_changes(db_) > 0;
}

Status SqliteCostDatabase::RecordOptimize(const OptimizeRun& run) {
  if (read_only_) return Status();
  Statement insert(db_,
                   "INSERT INTO optimize_runs(finished_at, machine, model, distinct_candidates, "
                   "candidates_measured, candidates_found) VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
  if (!insert.ok()) return SqliteError(db_, path(), "cannot write");
  insert.Bind(1, run.finished_at);
  insert.Bind(2, run.machine);
  insert.Bind(3, run.model);
  insert.Bind(4, static_cast<int64_t>(run.distinct_candidates));
  insert.Bind(5, static_cast<int64_t>(run.candidates_measured));
  insert.Bind(6, static_cast<int64_t>(run.candidates_found));
  if (sqlite3_step(insert.get()) != SQLITE_DONE) return SqliteError(db_, path(), "cannot write");
  return Status();
}

StatusOr<CostStats> SqliteCostDatabase::Stats(int recent) {
  CostStats stats;
  {
    Statement rows(db_,
                   "SELECT device, backend, backend_version, sum(state='valid'), "
                   "sum(state='invalid'), sum(state='measuring') FROM costs "
                   "GROUP BY device, backend, backend_version "
                   "ORDER BY device, backend, backend_version");
    if (!rows.ok()) return SqliteError(db_, path(), "cannot read");
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(rows.get())) == SQLITE_ROW) {
      CostStats::Rows group{rows.Text(0), rows.Text(1), rows.Text(2),
                            sqlite3_column_int64(rows.get(), 3),
                            sqlite3_column_int64(rows.get(), 4)};
      stats.claims += sqlite3_column_int64(rows.get(), 5);
      if (group.valid + group.invalid > 0) stats.rows.push_back(std::move(group));
    }
    if (rc != SQLITE_DONE) return SqliteError(db_, path(), "cannot read");
  }
  Statement runs(db_,
                 "SELECT finished_at, machine, model, distinct_candidates, candidates_measured, "
                 "candidates_found FROM optimize_runs ORDER BY finished_at DESC, rowid DESC "
                 "LIMIT ?1");
  if (!runs.ok()) return SqliteError(db_, path(), "cannot read");
  runs.Bind(1, static_cast<int64_t>(recent));
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(runs.get())) == SQLITE_ROW) {
    OptimizeRun run;
    run.finished_at = sqlite3_column_int64(runs.get(), 0);
    run.machine = runs.Text(1);
    run.model = runs.Text(2);
    run.distinct_candidates = sqlite3_column_int(runs.get(), 3);
    run.candidates_measured = sqlite3_column_int(runs.get(), 4);
    run.candidates_found = sqlite3_column_int(runs.get(), 5);
    stats.recent_optimizes.push_back(std::move(run));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, path(), "cannot read");
  return stats;
}

}  // namespace collage
