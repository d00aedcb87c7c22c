// The persistent cost database (DESIGN.md 1.4): every measured candidate and layout
// conversion, keyed so that a measurement is reused exactly when it still describes this
// machine and these libraries. Two stores hold it: a SQLite file (the default, one per user:
// cost/sqlite_cost_database.h) and a PostgreSQL database that a team's machines share
// (cost/postgres_cost_database.h). Both keep the same rows under the same key, are safe under
// several optimizers at once (processes, and for PostgreSQL machines), and distrust what they
// read: a damaged row is measured again, never used.
//
// Key: device fingerprint, backend, backend version, signature (the rule and the group's
// canonical signature, or a conversion's type and layouts — never weight values), threads,
// and the measurement method (MeasureMethodKey: caches warm or scrubbed, and the OpenMP
// wait setting).
//
// Claims: before measuring a key an optimizer claims it (Claim), so that another optimizer
// on the same database waits for that measurement instead of repeating it. A claim lapses
// when its owner is gone: a process of this machine that no longer runs, or, in a shared
// database, an owner on another machine that stopped renewing it (RenewClaims) before its
// lease ran out.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collage/cost_store.h"
#include "collage/sdk/layout.h"
#include "collage/status.h"
#include "cost/cost.h"

namespace collage {

struct CostKey {
  std::string device;
  std::string backend;
  std::string backend_version;
  std::string signature;
  int threads = 1;
  std::string method = "warm";
};

struct CostRecord {
  // False for a candidate that failed to compile, disagreed with the reference kernels or
  // was being measured by a process that died: never chosen.
  bool valid = false;
  std::string reason;  // why invalid
  double median_ms = 0;
  double p90_ms = 0;
  int samples = 0;
  // The kernel's layouts, per CompileRequest input and output: the search needs them to price
  // the conversions between groups without compiling anything.
  std::vector<Layout> input_layouts;
  std::vector<Layout> output_layouts;
  // An invalid verdict's cause, where it depends on something other than the candidate:
  // the time limit it exceeded (0: not a time-out), so that a run allowing longer measures
  // it again; a signal from outside the candidate (the out-of-memory killer, another
  // process's kill), so that it is measured once more before it is condemned.
  double timed_out_after_s = 0;
  bool killed_from_outside = false;

  // The median as a Cost: invalid for an invalid record.
  Cost cost() const { return valid ? Cost::Milliseconds(median_ms) : Cost::Invalid(); }
};

// What the database says of a key.
struct CostLookup {
  // The stored record, when it is to be used as it is.
  std::optional<CostRecord> record;
  // No usable record, and another live optimizer has claimed the key: its measurement is
  // coming, so this one waits for it instead of measuring the same thing.
  bool claimed_elsewhere = false;
};

// A finished row as stored, for copying costs between databases (collage costs).
struct StoredCost {
  CostKey key;
  CostRecord record;
  int64_t measured_at = 0;  // seconds since the epoch
  // How many kills from outside the invalid verdict has met (CostRecord::killed_from_outside
  // says only whether the last measurement met one).
  int outside_kills = 0;
};

class CostDatabase {
 public:
  // The schema's version (both stores). 2: the measurement method is part of the key (a
  // schema-1 file is upgraded on open, its rows keyed as measured warm, so that they are never
  // taken for cache-scrubbed costs). 3: a claim records its owner's identity and whether it
  // measures in its own process, and an invalid verdict its time limit and the kills from
  // outside it met (a schema-2 file is upgraded on open). 4: each finished optimize is
  // recorded (`optimize_runs`), for `collage costs stats` (a schema-3 file is upgraded on open).
  static constexpr int kSchemaVersion = 4;

  // $COLLAGE_CACHE_DIR/costs.sqlite, else $XDG_CACHE_HOME/collage/costs.sqlite, else
  // ~/.cache/collage/costs.sqlite.
  static std::string DefaultPath();

  // How long a call waits for another process's lock before it fails (saying so on stderr
  // every few seconds while it waits).
  static constexpr int kDefaultLockTimeoutMs = 60000;

  // True for a location naming a PostgreSQL database ("postgresql://…" or "postgres://…").
  static bool IsPostgresLocation(const std::string& location);

  // Opens the database at `location`: a PostgreSQL URL (PostgresCostDatabase::Open), else a
  // file (SqliteCostDatabase::Open). Non-fatal findings (a damaged file moved aside, a
  // read-only database) are added to `warnings`.
  static StatusOr<std::unique_ptr<CostDatabase>> Open(const std::string& location,
                                                      std::vector<std::string>* warnings,
                                                      int lock_timeout_ms = kDefaultLockTimeoutMs);
  virtual ~CostDatabase() = default;
  CostDatabase(const CostDatabase&) = delete;
  CostDatabase& operator=(const CostDatabase&) = delete;

  // The stored record, or none when the candidate is to be measured (again): there is no
  // record, another live process is measuring it right now (then `claimed_elsewhere`), the
  // process that claimed it is gone (its claim lapsed: a kill, a closed terminal, an early
  // interrupt, a machine that stopped), the record is a time-out under a shorter limit than
  // `time_limit_s`, or its one kill from outside is not yet retried; or the row is damaged
  // (a cost that is not a plausible number of milliseconds, unreadable layouts). A candidate
  // whose in-process measurement ended with its process (it may have crashed it) comes back
  // invalid, so it is never tried again.
  virtual StatusOr<CostLookup> Lookup(const CostKey& key, double time_limit_s = 0) = 0;
  // Lookup's record alone.
  StatusOr<std::optional<CostRecord>> Find(const CostKey& key, double time_limit_s = 0);
  virtual Status Put(const CostKey& key, const CostRecord& record) = 0;
  // Claims `key` for this process, which is about to measure it in its own process
  // (`in_this_process`) or in a worker it watches. False, with nothing changed, when another
  // live process holds the claim or a finished record arrived meanwhile: look it up again
  // later. Closing the database removes this process's claims that are left.
  virtual StatusOr<bool> Claim(const CostKey& key, bool in_this_process) = 0;
  // Claim, whatever it answers: for callers that measure anyway.
  Status MarkMeasuring(const CostKey& key, bool in_this_process);
  // Extends the lease of this process's claims, where claims have one (a shared database:
  // they lapse when not renewed for kClaimLeaseSeconds). Cheap to call often.
  virtual Status RenewClaims() { return Status(); }
  static constexpr double kClaimLeaseSeconds = 300;

  // Number of stored records (valid and invalid).
  virtual StatusOr<int64_t> Count() = 0;
  // Every finished row, in key order; `visit` returning an error stops and returns it.
  virtual Status ForEachRow(const std::function<Status(const StoredCost&)>& visit) = 0;
  // Stores a row read from another database, as it was measured (its time, its kills), unless
  // this one already holds a finished row for the key measured later. True when stored.
  virtual StatusOr<bool> PutRow(const StoredCost& row) = 0;

  // Records a finished optimize (OptimizeRun, collage/cost_store.h).
  virtual Status RecordOptimize(const OptimizeRun& run) = 0;
  // Rows per device, backend and version, the claims in flight, and the last `recent`
  // optimizes.
  virtual StatusOr<CostStats> Stats(int recent) = 0;

  // Where the database is, as shown to the user (a PostgreSQL URL without its password).
  const std::string& path() const { return path_; }

 protected:
  explicit CostDatabase(std::string path) : path_(std::move(path)) {}

 private:
  std::string path_;
};

// Layouts to and from the text stored in the database ("plain", "channels_last",
// "opaque:<bytes>:<name>").
std::string LayoutToText(const Layout& layout);
StatusOr<Layout> LayoutFromText(const std::string& text);

// The layouts of a record as the database stores them ({"inputs": [...], "outputs": [...]}),
// and back: false when the text is not what LayoutsToJson writes.
std::string LayoutsToJson(const CostRecord& record);
bool LayoutsFromJson(const std::string& text, CostRecord& record);

// A valid record's cost must be a number of milliseconds a kernel can take: a negative,
// infinite or absurd value (1e308 ms would overflow the search's sums) is damage.
bool PlausibleMilliseconds(double value);

}  // namespace collage
