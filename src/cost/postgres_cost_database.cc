#include "cost/postgres_cost_database.h"

#include "collage/sdk/errors.h"

#ifndef COLLAGE_HAVE_POSTGRESQL

namespace collage {

StatusOr<std::unique_ptr<CostDatabase>> PostgresCostDatabase::Open(const std::string&,
                                                                   std::vector<std::string>*,
                                                                   int) {
  return Unsupported(
      "this collage was built without PostgreSQL support (libpq): install libpq-dev and "
      "rebuild");
}

}  // namespace collage

#else  // COLLAGE_HAVE_POSTGRESQL

#include <unistd.h>

#include <chrono>
#include <mutex>

#include "cost/claim_owner.h"
#include "cost/cost_row.h"
#include "cost/postgres_connection.h"
#include "cost/postgres_schema.h"

namespace collage {

namespace {

// Now, in the server's clock: leases are set and compared by the server alone.
constexpr const char* kServerNow = "extract(epoch from clock_timestamp())::double precision";

constexpr const char* kKeyMatch =
    "device=$1 AND backend=$2 AND backend_version=$3 AND signature=$4 AND threads=$5 AND "
    "method=$6";

// The columns RawRowAt reads, in its order; then the key and measured_at for ForEachRow.
constexpr const char* kRowColumns =
    "state, median_ms, p90_ms, samples, layouts, reason, pid, owner, in_process, time_limit_s, "
    "outside_kills, claim_machine, "
    "claim_expires_at > extract(epoch from clock_timestamp())::double precision, "
    "device, backend, backend_version, signature, threads, method, measured_at";

std::vector<std::string> KeyParams(const CostKey& key) {
  return {key.device, key.backend, key.backend_version, key.signature,
          std::to_string(key.threads), key.method};
}

std::string Number(double value) { return fmt::format("{}", value); }

// Judges row `r` of a result selected with kRowColumns.
CostLookup JudgeRowAt(const PgResult& result, int r, double time_limit_s) {
  RawCostRow row;
  row.state = result.Text(r, 0);
  row.median_ms = result.Double(r, 1);
  row.p90_ms = result.Double(r, 2);
  row.samples = static_cast<int>(result.Int(r, 3));
  row.layouts = result.Text(r, 4);
  row.reason = result.Text(r, 5);
  row.pid = result.Int(r, 6);
  row.in_process = result.Bool(r, 8);
  row.time_limit_s = result.Double(r, 9);
  row.outside_kills = result.Int(r, 10);
  ClaimHolder holder = ClaimHolder::kDied;
  if (result.Text(r, 11) == ThisMachineIdentity()) {
    // This machine's claim: its process says whether it is there, as in SQLite.
    if (row.pid == ::getpid()) {
      holder = ClaimHolder::kThisProcess;
    } else if (row.pid > 0 && ClaimOwnerAlive(row.pid, result.Text(r, 7))) {
      holder = ClaimHolder::kAlive;
    }
  } else {
    // Another machine's: its process cannot be seen from here, its lease can.
    holder = result.Bool(r, 12) ? ClaimHolder::kAlive : ClaimHolder::kLapsed;
  }
  return JudgeRow(row, holder, time_limit_s);
}

class PostgresStore : public CostDatabase {
 public:
  explicit PostgresStore(std::unique_ptr<PgConnection> connection)
      : CostDatabase(connection->shown()), connection_(std::move(connection)) {}

  ~PostgresStore() override {
    // This process's claims still there belong to measurements that never ran to their end
    // because the work stopped, not because a candidate crashed: removed, as in SQLite. A
    // connection lost by now leaves them to lapse.
    std::lock_guard<std::mutex> lock(mutex_);
    (void)connection_->Exec(
        "DELETE FROM costs WHERE state='measuring' AND pid=$1 AND claim_machine=$2 AND owner=$3",
        {std::to_string(::getpid()), ThisMachineIdentity(), OwnProcessIdentity()});
  }

  StatusOr<CostLookup> Lookup(const CostKey& key, double time_limit_s) override {
    std::lock_guard<std::mutex> lock(mutex_);
    COLLAGE_ASSIGN_OR_RETURN(
        PgResult found,
        connection_->Exec(fmt::format("SELECT {} FROM costs WHERE {}", kRowColumns, kKeyMatch),
                          KeyParams(key)));
    if (found.rows() == 0) return CostLookup();
    return JudgeRowAt(found, 0, time_limit_s);
  }

  Status Put(const CostKey& key, const CostRecord& record) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> params = KeyParams(key);
    params.insert(params.end(),
                  {record.valid ? "valid" : "invalid", Number(record.median_ms),
                   Number(record.p90_ms), std::to_string(record.samples), LayoutsToJson(record),
                   record.reason, std::to_string(::getpid()),
                   Number(record.valid ? 0.0 : record.timed_out_after_s),
                   !record.valid && record.killed_from_outside ? "true" : "false"});
    // A kill from outside adds to the kills the invalid row already counts (see JudgeRow).
    return connection_
        ->Exec(fmt::format(
                   "INSERT INTO costs(device, backend, backend_version, signature, threads, "
                   "method, state, median_ms, p90_ms, samples, layouts, reason, pid, "
                   "measured_at, time_limit_s, outside_kills) "
                   "VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, "
                   "({})::bigint, $14, CASE WHEN $15::boolean THEN 1 ELSE 0 END) "
                   "ON CONFLICT (device, backend, backend_version, signature, threads, method) "
                   "DO UPDATE SET state=excluded.state, median_ms=excluded.median_ms, "
                   "p90_ms=excluded.p90_ms, samples=excluded.samples, layouts=excluded.layouts, "
                   "reason=excluded.reason, pid=excluded.pid, measured_at=excluded.measured_at, "
                   "owner='', in_process=false, time_limit_s=excluded.time_limit_s, "
                   "outside_kills=CASE WHEN $15::boolean THEN 1 + CASE WHEN "
                   "costs.state='invalid' THEN costs.outside_kills ELSE 0 END ELSE 0 END, "
                   "claim_machine='', claim_expires_at=0",
                   kServerNow),
               params)
        .status();
  }

  StatusOr<bool> Claim(const CostKey& key, bool in_this_process) override {
    std::lock_guard<std::mutex> lock(mutex_);
    // One transaction: of several machines claiming one key at once, the insert of one
    // wins; the others wait on its row lock, then find its claim alive.
    COLLAGE_RETURN_IF_ERROR(connection_->Exec("BEGIN").status());
    StatusOr<bool> claimed = ClaimInTransaction(key, in_this_process);
    const Status ended = connection_->Exec(claimed.ok() ? "COMMIT" : "ROLLBACK").status();
    COLLAGE_RETURN_IF_ERROR(claimed.status());
    COLLAGE_RETURN_IF_ERROR(ended);
    if (*claimed) last_renewal_ = std::chrono::steady_clock::now();
    return claimed;
  }

  Status RenewClaims() override {
    std::lock_guard<std::mutex> lock(mutex_);
    // A lease of kClaimLeaseSeconds renewed every tenth of it: cheap, and a pause of a few
    // renewals (a loaded machine, a slow network) does not lose a claim.
    const auto now = std::chrono::steady_clock::now();
    if (now - last_renewal_ < std::chrono::duration<double>(kClaimLeaseSeconds / 10)) {
      return Status();
    }
    last_renewal_ = now;
    return connection_
        ->Exec(fmt::format("UPDATE costs SET claim_expires_at = {} + $1 WHERE "
                           "state='measuring' AND pid=$2 AND claim_machine=$3 AND owner=$4",
                           kServerNow),
               {Number(kClaimLeaseSeconds), std::to_string(::getpid()), ThisMachineIdentity(),
                OwnProcessIdentity()})
        .status();
  }

  StatusOr<int64_t> Count() override {
    std::lock_guard<std::mutex> lock(mutex_);
    COLLAGE_ASSIGN_OR_RETURN(
        PgResult count, connection_->Exec("SELECT count(*) FROM costs WHERE state <> 'measuring'"));
    return count.Int(0, 0);
  }

  Status ForEachRow(const std::function<Status(const StoredCost&)>& visit) override {
    std::vector<StoredCost> rows;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      COLLAGE_ASSIGN_OR_RETURN(
          PgResult all,
          connection_->Exec(fmt::format(
              "SELECT {} FROM costs WHERE state <> 'measuring' ORDER BY device, backend, "
              "backend_version, signature, threads, method",
              kRowColumns)));
      for (int r = 0; r < all.rows(); ++r) {
        // A row this collage would not use (damaged, a time-out to measure again) is not
        // copied.
        CostLookup lookup = JudgeRowAt(all, r, 0);
        if (!lookup.record.has_value()) continue;
        StoredCost row;
        row.key = CostKey{all.Text(r, 13), all.Text(r, 14), all.Text(r, 15), all.Text(r, 16),
                          static_cast<int>(all.Int(r, 17)), all.Text(r, 18)};
        row.measured_at = all.Int(r, 19);
        row.outside_kills = static_cast<int>(all.Int(r, 10));
        row.record = std::move(*lookup.record);
        rows.push_back(std::move(row));
      }
    }
    // Visited without the lock: `visit` may write into this database.
    for (const StoredCost& row : rows) COLLAGE_RETURN_IF_ERROR(visit(row));
    return Status();
  }

  StatusOr<bool> PutRow(const StoredCost& row) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> params = KeyParams(row.key);
    params.insert(params.end(),
                  {row.record.valid ? "valid" : "invalid", Number(row.record.median_ms),
                   Number(row.record.p90_ms), std::to_string(row.record.samples),
                   LayoutsToJson(row.record), row.record.reason, std::to_string(row.measured_at),
                   Number(row.record.valid ? 0.0 : row.record.timed_out_after_s),
                   std::to_string(row.record.valid ? 0 : row.outside_kills)});
    // Replaces a claim or an older finished row, never a newer one.
    COLLAGE_ASSIGN_OR_RETURN(
        PgResult stored,
        connection_->Exec(
            "INSERT INTO costs(device, backend, backend_version, signature, threads, method, "
            "state, median_ms, p90_ms, samples, layouts, reason, pid, measured_at, "
            "time_limit_s, outside_kills) "
            "VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 0, $13, $14, $15) "
            "ON CONFLICT (device, backend, backend_version, signature, threads, method) "
            "DO UPDATE SET state=excluded.state, median_ms=excluded.median_ms, "
            "p90_ms=excluded.p90_ms, samples=excluded.samples, layouts=excluded.layouts, "
            "reason=excluded.reason, pid=0, measured_at=excluded.measured_at, owner='', "
            "in_process=false, time_limit_s=excluded.time_limit_s, "
            "outside_kills=excluded.outside_kills, claim_machine='', claim_expires_at=0 "
            "WHERE costs.state='measuring' OR costs.measured_at < excluded.measured_at",
            params));
    return stored.changed() > 0;
  }

  Status RecordOptimize(const OptimizeRun& run) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return connection_
        ->Exec("INSERT INTO optimize_runs(finished_at, machine, model, distinct_candidates, "
               "candidates_measured, candidates_found) VALUES($1, $2, $3, $4, $5, $6)",
               {std::to_string(run.finished_at), run.machine, run.model,
                std::to_string(run.distinct_candidates), std::to_string(run.candidates_measured),
                std::to_string(run.candidates_found)})
        .status();
  }

  StatusOr<CostStats> Stats(int recent) override {
    std::lock_guard<std::mutex> lock(mutex_);
    CostStats stats;
    COLLAGE_ASSIGN_OR_RETURN(
        PgResult rows,
        connection_->Exec("SELECT device, backend, backend_version, "
                          "count(*) FILTER (WHERE state='valid'), "
                          "count(*) FILTER (WHERE state='invalid'), "
                          "count(*) FILTER (WHERE state='measuring') FROM costs "
                          "GROUP BY device, backend, backend_version "
                          "ORDER BY device, backend, backend_version"));
    for (int r = 0; r < rows.rows(); ++r) {
      CostStats::Rows group{rows.Text(r, 0), rows.Text(r, 1), rows.Text(r, 2), rows.Int(r, 3),
                            rows.Int(r, 4)};
      stats.claims += rows.Int(r, 5);
      if (group.valid + group.invalid > 0) stats.rows.push_back(std::move(group));
    }
    COLLAGE_ASSIGN_OR_RETURN(
        PgResult runs,
        connection_->Exec("SELECT finished_at, machine, model, distinct_candidates, "
                          "candidates_measured, candidates_found FROM optimize_runs "
                          "ORDER BY finished_at DESC, id DESC LIMIT $1",
                          {std::to_string(recent)}));
    for (int r = 0; r < runs.rows(); ++r) {
      OptimizeRun run;
      run.finished_at = runs.Int(r, 0);
      run.machine = runs.Text(r, 1);
      run.model = runs.Text(r, 2);
      run.distinct_candidates = static_cast<int>(runs.Int(r, 3));
      run.candidates_measured = static_cast<int>(runs.Int(r, 4));
      run.candidates_found = static_cast<int>(runs.Int(r, 5));
      stats.recent_optimizes.push_back(std::move(run));
    }
    return stats;
  }

 private:
  StatusOr<bool> ClaimInTransaction(const CostKey& key, bool in_this_process) {
    const std::vector<std::string> claim = {std::to_string(::getpid()), OwnProcessIdentity(),
                                            in_this_process ? "true" : "false",
                                            ThisMachineIdentity(), Number(kClaimLeaseSeconds)};
    std::vector<std::string> params = KeyParams(key);
    params.insert(params.end(), claim.begin(), claim.end());
    // A row deleted between the insert and the select (its owner closed) is tried again.
    for (int attempt = 0; attempt < 3; ++attempt) {
      COLLAGE_ASSIGN_OR_RETURN(
          PgResult inserted,
          connection_->Exec(
              fmt::format("INSERT INTO costs(device, backend, backend_version, signature, "
                          "threads, method, state, pid, measured_at, owner, in_process, "
                          "claim_machine, claim_expires_at) "
                          "VALUES($1, $2, $3, $4, $5, $6, 'measuring', $7, ({0})::bigint, $8, "
                          "$9, $10, {0} + $11) ON CONFLICT DO NOTHING",
                          kServerNow),
              params));
      if (inserted.changed() > 0) return true;
      // The row exists: decided under its lock, as SQLite decides under its write lock.
      COLLAGE_ASSIGN_OR_RETURN(
          PgResult found,
          connection_->Exec(
              fmt::format("SELECT {} FROM costs WHERE {} FOR UPDATE", kRowColumns, kKeyMatch),
              KeyParams(key)));
      if (found.rows() == 0) continue;
      const CostLookup lookup = JudgeRowAt(found, 0, 0);
      if (lookup.claimed_elsewhere || lookup.record.has_value()) return false;
      // Never replaces a finished record (an invalid row being measured again stays as it is
      // until Put replaces it); a lapsed claim becomes ours.
      COLLAGE_RETURN_IF_ERROR(
          connection_
              ->Exec(fmt::format("UPDATE costs SET pid=$7, measured_at=({0})::bigint, owner=$8, "
                                 "in_process=$9, claim_machine=$10, claim_expires_at={0} + $11 "
                                 "WHERE {1} AND state='measuring'",
                                 kServerNow, kKeyMatch),
                     params)
              .status());
      return true;
    }
    return false;
  }

  std::mutex mutex_;  // one statement at a time on the connection
  std::unique_ptr<PgConnection> connection_;
  std::chrono::steady_clock::time_point last_renewal_;
};

}  // namespace

StatusOr<std::unique_ptr<CostDatabase>> PostgresCostDatabase::Open(
    const std::string& url, std::vector<std::string>*, int lock_timeout_ms) {
  COLLAGE_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> connection,
                           PgConnection::Connect(url, lock_timeout_ms));
  COLLAGE_RETURN_IF_ERROR(EnsurePostgresSchema(*connection));
  return std::unique_ptr<CostDatabase>(new PostgresStore(std::move(connection)));
}

}  // namespace collage

#endif  // COLLAGE_HAVE_POSTGRESQL
