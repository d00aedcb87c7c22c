// Built only with libpq (CMakeLists.txt defines COLLAGE_HAVE_POSTGRESQL where it is found).
#ifdef COLLAGE_HAVE_POSTGRESQL
#include "cost/postgres_schema.h"

#include <fmt/format.h>

#include <set>
#include <string>

#include "collage/sdk/errors.h"
#include "cost/cost_database.h"
#include "cost/postgres_connection.h"

namespace collage {

namespace {

// Any constant: what every collage locks while it creates or upgrades the schema.
constexpr const char* kSchemaLockKey = "7236828365426374757";

// claim_machine: ThisMachineIdentity() of the claim's owner; claim_expires_at: when its lease
// ends, in the server's epoch seconds (the server's clock alone decides, whatever the
// machines' clocks say). Costs are DOUBLE PRECISION, which holds NaN and infinity: what is
// read is judged (JudgeRow), not trusted.
constexpr const char* kCreateTables = R"sql(
CREATE TABLE costs(
  device TEXT NOT NULL,
  backend TEXT NOT NULL,
  backend_version TEXT NOT NULL,
  signature TEXT NOT NULL,
  threads INTEGER NOT NULL,
  method TEXT NOT NULL,
  state TEXT NOT NULL CHECK(state IN ('valid', 'invalid', 'measuring')),
  median_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
  p90_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
  samples INTEGER NOT NULL DEFAULT 0,
  layouts TEXT NOT NULL DEFAULT '{}',
  reason TEXT NOT NULL DEFAULT '',
  pid BIGINT NOT NULL DEFAULT 0,
  measured_at BIGINT NOT NULL DEFAULT 0,
  owner TEXT NOT NULL DEFAULT '',
  in_process BOOLEAN NOT NULL DEFAULT FALSE,
  time_limit_s DOUBLE PRECISION NOT NULL DEFAULT 0,
  outside_kills INTEGER NOT NULL DEFAULT 0,
  claim_machine TEXT NOT NULL DEFAULT '',
  claim_expires_at DOUBLE PRECISION NOT NULL DEFAULT 0,
  PRIMARY KEY(device, backend, backend_version, signature, threads, method));
CREATE TABLE optimize_runs(
  id BIGSERIAL PRIMARY KEY,
  finished_at BIGINT NOT NULL,
  machine TEXT NOT NULL,
  model TEXT NOT NULL,
  distinct_candidates INTEGER NOT NULL,
  candidates_measured INTEGER NOT NULL,
  candidates_found INTEGER NOT NULL);
CREATE TABLE collage_schema(version INTEGER NOT NULL);
)sql";

const std::set<std::string>& CostsColumns() {
  static const std::set<std::string> columns = {
      "device",        "backend",       "backend_version", "signature",    "threads",
      "method",        "state",         "median_ms",       "p90_ms",       "samples",
      "layouts",       "reason",        "pid",             "measured_at",  "owner",
      "in_process",    "time_limit_s",  "outside_kills",   "claim_machine", "claim_expires_at"};
  return columns;
}

// The current schema's tables that collage knows by name.
StatusOr<std::set<std::string>> OurTablesPresent(PgConnection& connection) {
  COLLAGE_ASSIGN_OR_RETURN(
      PgResult tables,
      connection.Exec("SELECT table_name FROM information_schema.tables WHERE "
                      "table_schema = current_schema() AND "
                      "table_name IN ('costs', 'optimize_runs', 'collage_schema')"));
  std::set<std::string> present;
  for (int r = 0; r < tables.rows(); ++r) present.insert(tables.Text(r, 0));
  return present;
}

StatusOr<std::set<std::string>> CostsColumnsPresent(PgConnection& connection) {
  COLLAGE_ASSIGN_OR_RETURN(
      PgResult columns,
      connection.Exec("SELECT column_name FROM information_schema.columns WHERE "
                      "table_schema = current_schema() AND table_name = 'costs'"));
  std::set<std::string> present;
  for (int r = 0; r < columns.rows(); ++r) present.insert(columns.Text(r, 0));
  return present;
}

Status EnsureInTransaction(PgConnection& connection) {
  COLLAGE_RETURN_IF_ERROR(
      connection.Exec(fmt::format("SELECT pg_advisory_xact_lock({})", kSchemaLockKey)).status());
  COLLAGE_ASSIGN_OR_RETURN(std::set<std::string> tables, OurTablesPresent(connection));
  if (tables.count("collage_schema") == 0) {
    if (tables.count("costs") != 0 || tables.count("optimize_runs") != 0) {
      return InvalidArgument(
          "cost database {} has a table named costs or optimize_runs that collage did not "
          "create; it was left as it is: name another database, or another schema "
          "(?options=-csearch_path%3D<schema>)",
          connection.shown());
    }
    COLLAGE_RETURN_IF_ERROR(connection.Exec(kCreateTables).status());
    return connection
        .Exec("INSERT INTO collage_schema(version) VALUES($1)",
              {std::to_string(CostDatabase::kSchemaVersion)})
        .status();
  }
  COLLAGE_ASSIGN_OR_RETURN(PgResult version,
                           connection.Exec("SELECT max(version) FROM collage_schema"));
  const int64_t found = version.rows() == 1 ? version.Int(0, 0) : 0;
  if (found > CostDatabase::kSchemaVersion) {
    return InvalidArgument(
        "cost database {} has schema version {}, newer than this collage's {}: upgrade collage, "
        "or name another database",
        connection.shown(), found, CostDatabase::kSchemaVersion);
  }
  COLLAGE_ASSIGN_OR_RETURN(std::set<std::string> columns, CostsColumnsPresent(connection));
  if (found < CostDatabase::kSchemaVersion || columns != CostsColumns() ||
      tables.count("optimize_runs") == 0) {
    // Schema 4 is the first PostgreSQL one: anything else is not what collage wrote.
    return InvalidArgument(
        "cost database {} has tables that are not collage's schema {} (version {}); they were "
        "left as they are: name another database",
        connection.shown(), CostDatabase::kSchemaVersion, found);
  }
  return Status();
}

}  // namespace

Status EnsurePostgresSchema(PgConnection& connection) {
  COLLAGE_RETURN_IF_ERROR(connection.Exec("BEGIN").status());
  const Status ensured = EnsureInTransaction(connection);
  // A failed statement aborts the transaction: ROLLBACK then leaves everything as it was.
  Status ended = connection.Exec(ensured.ok() ? "COMMIT" : "ROLLBACK").status();
  COLLAGE_RETURN_IF_ERROR(ensured);
  return ended;
}

}  // namespace collage
#endif  // COLLAGE_HAVE_POSTGRESQL
