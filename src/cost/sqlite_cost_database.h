// The cost database in a SQLite file (cost/cost_database.h): the default, one per user, in
// WAL mode so that several processes optimizing at once read and write it safely. A claim's
// owner is a process of this machine, alive or not.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cost/cost_database.h"

struct sqlite3;

namespace collage {

class SqliteCostDatabase : public CostDatabase {
 public:
  // Opens or creates the database (and its folder). A file that is not a readable SQLite
  // database of this schema (damaged, another program's) is moved aside to
  // "<path>.corrupt-<time>" and a fresh one is created; `warnings` then says so. A file locked
  // by another process past the timeout is an error and stays as it is; so does a newer
  // schema, and a file that is not SQLite at all. Anything but a regular file at `path` is
  // refused. A database this process may not write is opened read-only (`warnings` says so):
  // its costs are used, new measurements are not kept. `damaged` kRefuse makes a damaged or
  // foreign file an error instead (left as it is): for a file named to copy costs from or to,
  // which is the user's, not collage's cache.
  enum class OnDamage { kMoveAside, kRefuse };
  static StatusOr<std::unique_ptr<SqliteCostDatabase>> Open(
      const std::string& path, std::vector<std::string>* warnings,
      int lock_timeout_ms = kDefaultLockTimeoutMs, OnDamage damaged = OnDamage::kMoveAside);
  ~SqliteCostDatabase() override;

  StatusOr<CostLookup> Lookup(const CostKey& key, double time_limit_s = 0) override;
  Status Put(const CostKey& key, const CostRecord& record) override;
  StatusOr<bool> Claim(const CostKey& key, bool in_this_process) override;
  StatusOr<int64_t> Count() override;
  Status ForEachRow(const std::function<Status(const StoredCost&)>& visit) override;
  StatusOr<bool> PutRow(const StoredCost& row) override;
  Status RecordOptimize(const OptimizeRun& run) override;
  StatusOr<CostStats> Stats(int recent) override;

  // The state of the wait for another process's lock (defined where it is used).
  struct LockWait;

 private:
  SqliteCostDatabase(std::string path, sqlite3* db, std::unique_ptr<LockWait> lock_wait);
  Status Exec(const char* sql);
  sqlite3* db_;
  std::unique_ptr<LockWait> lock_wait_;  // the busy handler's state, alive as long as db_
  // Opened from a file this process may not write (a shared, read-only database): its costs
  // are read, and Put and Claim keep nothing.
  bool read_only_ = false;

  static StatusOr<std::unique_ptr<SqliteCostDatabase>> OpenReadOnly(
      const std::string& path, std::vector<std::string>* warnings);
};

}  // namespace collage
