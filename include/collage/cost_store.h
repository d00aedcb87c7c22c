// The cost database as its users manage it (`collage costs`): copying measured costs between
// databases (a SQLite file, a team's PostgreSQL database) and what one holds. A cost is
// copied only where it prices a plan here: measured on a device with this machine's
// fingerprint, by a library version this build has; a claim (a measurement in flight) is never
// copied.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/status.h"

namespace collage {

// A backend's library as this build has it: what a copied cost must have been measured with.
struct LibraryVersion {
  std::string backend;
  std::string version;
};

// What one copy did, row by row (finished rows of the sources only).
struct CostCopyCounts {
  int64_t read = 0;                // finished rows the sources hold that collage would use
  int64_t copied = 0;              // stored in the destination
  int64_t kept = 0;                // the destination's row for the key was as new or newer
  int64_t other_devices = 0;       // refused: measured on another device fingerprint
  int64_t other_versions = 0;      // refused: a backend or library version this build lacks
};

// A database's location is a SQLite file or a PostgreSQL URL ("postgresql://…"); "" is the
// default file (~/.cache/collage/costs.sqlite, OptimizeOptions::cost_db_path).

// `location` as messages show it: a URL without its password, "" as the default file's path.
std::string ShownCostDatabase(const std::string& location);

// Copies the finished rows of `sources` (each a SQLite file or a PostgreSQL URL) that were
// measured on `device` with one of `libraries` into `destination`, keeping the newer of two
// rows for one key. Every source is read completely before the destination is opened, so a
// source that cannot be read (not a collage cost database, damaged, a newer schema, a device
// or FIFO) is an error that leaves the destination as it was. A SQLite destination that exists
// and is not a collage cost database is refused, never moved aside or overwritten.
StatusOr<CostCopyCounts> CopyCosts(const std::vector<std::string>& sources,
                                   const std::string& destination, const std::string& device,
                                   const std::vector<LibraryVersion>& libraries);

// One finished `collage optimize`, as the database records it.
struct OptimizeRun {
  int64_t finished_at = 0;  // seconds since the epoch
  std::string machine;      // "<host>/<boot id>"
  std::string model;
  int distinct_candidates = 0;
  int candidates_measured = 0;  // measured by this optimize
  int candidates_found = 0;     // found in the database (measured before, or by another)
};

// What a cost database holds (`collage costs stats`).
struct CostStats {
  // Finished rows per device, backend and backend version.
  struct Rows {
    std::string device;
    std::string backend;
    std::string backend_version;
    int64_t valid = 0;
    int64_t invalid = 0;
  };
  std::vector<Rows> rows;     // by device, backend, version
  int64_t claims = 0;         // measurements in flight (or claims not yet found lapsed)
  std::vector<OptimizeRun> recent_optimizes;  // newest first
};

// Opens the database at `location` as it is (never creating nor moving a file) and reads
// what it holds, with up to `recent` of its last optimizes.
StatusOr<CostStats> ReadCostStats(const std::string& location, int recent);

}  // namespace collage
