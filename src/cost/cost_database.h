// The persistent cost database (DESIGN.md 1.4): every measured candidate and layout
// conversion, keyed so that a measurement is reused exactly when it still describes this
// machine and these libraries. SQLite in WAL mode, so that several processes optimizing at
// once read and write it safely; the schema carries a version.
//
// Key: device fingerprint, backend, backend version, signature (the rule and the group's
// canonical signature, or a conversion's type and layouts — never weight values), threads,
// and the measurement method (MeasureMethodKey: caches warm or scrubbed, and the OpenMP
// wait setting).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collage/sdk/layout.h"
#include "collage/status.h"

struct sqlite3;

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
};

class CostDatabase {
 public:
  // Schema version written to PRAGMA user_version; a file with a newer one is refused. 2: the
  // measurement method is part of the key (a schema-1 file is upgraded on open, its rows
  // keyed as measured warm, so that they are never taken for cache-scrubbed costs). 3: a
  // claim records its owner's identity and whether it measures in its own process, and an
  // invalid verdict its time limit and the kills from outside it met (a schema-2 file is
  // upgraded on open).
  static constexpr int kSchemaVersion = 3;

  // $COLLAGE_CACHE_DIR/costs.sqlite, else $XDG_CACHE_HOME/collage/costs.sqlite, else
  // ~/.cache/collage/costs.sqlite.
  static std::string DefaultPath();

  // How long a call waits for another process's lock before it fails (saying so on stderr
  // every few seconds while it waits).
  static constexpr int kDefaultLockTimeoutMs = 60000;

  // Opens or creates the database (and its folder). A file that is not a readable SQLite
  // database of this schema (damaged, another program's) is moved aside to
  // "<path>.corrupt-<time>" and a fresh one is created; `warnings` then says so. A file locked
  // by another process past the timeout is an error and stays as it is; so does a newer
  // schema, and a file that is not SQLite at all. Anything but a regular file at `path` is
  // refused. A database this process may not write is opened read-only (`warnings` says so):
  // its costs are used, new measurements are not kept.
  static StatusOr<std::unique_ptr<CostDatabase>> Open(const std::string& path,
                                                      std::vector<std::string>* warnings,
                                                      int lock_timeout_ms = kDefaultLockTimeoutMs);
  ~CostDatabase();
  CostDatabase(const CostDatabase&) = delete;
  CostDatabase& operator=(const CostDatabase&) = delete;

  // The stored record, or nullopt when the candidate is to be measured (again): there is no
  // record, another live process is measuring it right now, the process that claimed it is
  // gone (its claim lapsed: a kill, a closed terminal, an early interrupt), the record is a
  // time-out under a shorter limit than `time_limit_s`, or its one kill from outside is not
  // yet retried; or the row is damaged (a cost that is not a plausible number of
  // milliseconds, unreadable layouts). A candidate whose in-process measurement ended with its
  // process (it may have crashed it) comes back invalid, so it is never tried again.
  StatusOr<std::optional<CostRecord>> Find(const CostKey& key, double time_limit_s = 0);
  Status Put(const CostKey& key, const CostRecord& record);
  // Records that this process is about to measure `key` (see Find), in its own process or in
  // a worker it watches. Closing the database removes this process's marks that are left.
  Status MarkMeasuring(const CostKey& key, bool in_this_process);

  // Number of stored records (valid and invalid).
  StatusOr<int64_t> Count();
  const std::string& path() const { return path_; }

  // The state of the wait for another process's lock (defined where it is used).
  struct LockWait;

 private:
  CostDatabase(std::string path, sqlite3* db, std::unique_ptr<LockWait> lock_wait);
  Status Exec(const char* sql);
  std::string path_;
  sqlite3* db_;
  std::unique_ptr<LockWait> lock_wait_;  // the busy handler's state, alive as long as db_
  // Opened from a file this process may not write (a shared, read-only database): its costs
  // are read, and Put and MarkMeasuring keep nothing.
  bool read_only_ = false;

  static StatusOr<std::unique_ptr<CostDatabase>> OpenReadOnly(const std::string& path,
                                                              std::vector<std::string>* warnings);
};

// Layouts to and from the text stored in the database ("plain", "channels_last",
// "opaque:<bytes>:<name>").
std::string LayoutToText(const Layout& layout);
StatusOr<Layout> LayoutFromText(const std::string& text);

}  // namespace collage
